"""Exercises: write one op's backward yourself and check it, Backprop-Ninja style.

    import numpy as np
    from xt_core.lab import exercise

    def my_softmax_backward(dp, scores):
        p = np.exp(scores - scores.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        return p * (dp - (p * dp).sum(-1, keepdims=True))

    print(exercise.check("softmax", my_softmax_backward))

Your function receives dL/d(output) and the op's forward inputs and attributes, exactly
as the forward got them (`xt_core.ops.OPS[kind].forward`), and returns one gradient per
input (None for token ids; a single array for a one-input op). If it declares a `grads`
parameter it also receives every gradient computed so far, by tensor name.

It replaces the backward of every op of that kind in one training step of a small model.
Each of its gradients is compared with the reference backward and with central finite
differences of the true loss (the walkthrough's per-step check).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field, replace

import numpy as np

from xt_core.checks.gradcheck import check_record
from xt_core.checks.tolerances import FINITE_DIFFERENCES, SAME_INPUTS
from xt_core.config import Config
from xt_core.model import build_tape, forward_backward, init_params
from xt_core.ops import OPS

EXERCISE_CONFIG = Config(vocab_size=16, n_layer=2, n_head=4, n_kv_head=2, n_embd=16, ffn_hidden=24, seq_len=12)
# ops only a config's part records (Qwen's biases, its QK-norm) are exercised with that part switched on
PART_EXERCISE_CONFIGS = tuple(replace(EXERCISE_CONFIG, **{part: True}) for part in ("qkv_bias", "qk_norm"))
# GPT-2's ops (LayerNorm, GELU, positions, linear with bias) are exercised in a GPT-2 of the same sizes
GPT2_EXERCISE_CONFIGS = tuple(
    Config(
        family="gpt2",
        vocab_size=16,
        n_layer=2,
        n_head=4,
        n_kv_head=4,
        n_embd=16,
        ffn_hidden=24,
        seq_len=12,
        activation=activation,
    )  # fmt: skip
    for activation in ("gelu_tanh", "gelu")
)


def exercise_config(op: str) -> Config:
    """The small model an exercise of `op` trains one step of: the first of the exercise models
    whose step runs that op."""
    for cfg in (EXERCISE_CONFIG, *PART_EXERCISE_CONFIGS, *GPT2_EXERCISE_CONFIGS):
        if any(node.kind == op for node in build_tape(cfg)):
            return cfg
    raise ValueError(f"no exercise model computes op {op!r}")


@dataclass
class ExerciseRow:
    step: str  # the op in the model
    tensor: str  # the input whose gradient is compared
    rel_error_vs_reference: float
    rel_error_vs_finite_differences: float
    passed: bool
    message: str = ""


@dataclass
class ExerciseReport:
    op: str
    rows: list[ExerciseRow] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.rows) and all(r.passed for r in self.rows)

    def __str__(self) -> str:
        lines = [f"exercise {self.op}: {'PASSED' if self.passed else 'FAILED'}"]
        for r in self.rows:
            verdict = "pass" if r.passed else "FAIL"
            detail = r.message or (
                f"vs reference {r.rel_error_vs_reference:.1e}, vs finite differences {r.rel_error_vs_finite_differences:.1e}"
            )
            lines.append(f"  {verdict}  {r.step} -> d{r.tensor}: {detail}")
        return "\n".join(lines)


class _Rejected(Exception):
    pass


def _as_tuple(result, n_inputs: int) -> tuple:
    if isinstance(result, np.ndarray):
        result = (result,)
    result = tuple(result)
    if len(result) != n_inputs:
        raise _Rejected(f"returned {len(result)} gradient(s); this op has {n_inputs} input(s)")
    return result


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    scale = max(float(np.max(np.abs(b), initial=0.0)), 1e-30)
    return float(np.max(np.abs(a - b), initial=0.0)) / scale


def _shape_problem(names, args, grads) -> str | None:
    """The first float input whose gradient is missing or of another shape, described; None if all fit."""
    for name, arg, grad in zip(names, args, grads, strict=True):
        if arg.dtype.kind == "f" and (grad is None or np.shape(grad) != arg.shape):
            return f"gradient for {name} has shape {np.shape(grad)}, expected {arg.shape}"
    return None


def _report(op: str, reference, mine, problems: dict[str, str]) -> ExerciseReport:
    """One row per gradient of every `op` backward step of `mine` (the step run with the
    learner's backward): against `reference` and against finite differences; one failed row
    per step whose backward raised or returned a wrong shape (`problems`, by step name)."""
    report = ExerciseReport(op)
    for ref_record, record in zip(reference.records, mine.records, strict=True):
        if record.phase != "backward" or record.kind != op:
            continue
        if record.name in problems:
            report.rows.append(ExerciseRow(record.name, "*", float("nan"), float("nan"), False, problems[record.name]))
            continue
        fd = {c.tensor: c.rel_error for c in check_record(mine, record.index).checks}
        for name, grad in record.contributions.items():
            vs_ref = _rel(grad, ref_record.contributions[name])
            ok = vs_ref <= SAME_INPUTS and fd[name] <= FINITE_DIFFERENCES
            report.rows.append(ExerciseRow(record.name, name, vs_ref, fd[name], ok))
    return report


def check(op: str, my_backward, cfg: Config | None = None, seed: int = 0) -> ExerciseReport:
    """Runs one float64 training step with `my_backward` in place of every `op` backward;
    see the module docstring. Exceptions from your function are reported, not raised."""
    if op not in OPS:
        raise ValueError(f"unknown op {op!r}; choose one of {', '.join(sorted(OPS))}")
    cfg = cfg or exercise_config(op)
    params = init_params(cfg, seed=seed, dtype=np.float64)
    ids = np.random.default_rng(seed).integers(0, cfg.vocab_size, size=(2, cfg.seq_len))
    inputs, targets = ids[:, :-1], ids[:, 1:]
    reference = forward_backward(cfg, params, inputs, targets)
    wants_grads = "grads" in inspect.signature(my_backward).parameters
    problems: dict[str, str] = {}

    def learner_backward(node):
        def backward(dout, cache, grads):
            args = [reference.values[name] for name in node.inputs]
            extra = {"grads": grads} if wants_grads else {}
            try:
                result = _as_tuple(my_backward(dout, *args, **node.attrs, **extra), len(args))
            except Exception as exc:  # the learner's code: report it, keep going
                problems[node.name] = f"{type(exc).__name__}: {exc}"
                result = OPS[op].backward(dout, cache)
            else:
                problem = _shape_problem(node.inputs, args, result)
                if problem is not None:
                    problems[node.name] = problem
                    result = OPS[op].backward(dout, cache)
            return tuple(None if g is None else np.asarray(g, dtype=np.float64) for g in result)

        return backward

    table = {node.name: learner_backward(node) for node in build_tape(cfg) if node.kind == op}
    mine = forward_backward(cfg, params, inputs, targets, backward_override=table)
    return _report(op, reference, mine, problems)
