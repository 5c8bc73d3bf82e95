"""Gradients are verified, never trusted: central finite differences in float64.

Two checks, both re-running the forward from the op onward on the tape:

* `check_record(trace, index)`: what the walkthrough badge shows for one step. For a
  seeded random direction u, compare <g, u> with (L(X + eps u) - L(X - eps u)) / 2 eps
  (xt_core.checks.directional). A forward step checks dL/d(its output) (the full gradient); a
  backward step checks the contribution it adds to each of its inputs, perturbing the input
  for that op only. The loss is always the true one, so a wrong backward (the bug lab) fails
  at its own step. The update step: xt_core.checks.update_check.
* `gradcheck(cfg, params, inputs, targets)`: entry by entry for every parameter (all
  entries of small tensors, a seeded sample of large ones) and every recorded tensor.

Error measure: |analytic - numeric| / max(|analytic|, |numeric|, FLOOR) per direction or
entry set, and normwise over a tensor's sampled entries. Tolerances in xt_core.checks.tolerances. A float32
trace is checked through its float64 twin (xt_core.checks.twin: same params, tokens and faults):
float32 round-off is not a wrong gradient, and it is reported apart (StepCheck.float32_roundoff).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from xt_core.checks.directional import (
    DirectionCheck,
    StepCheck,
    directional,
    directional_large,
    large_step,
    roundoff,
    step_size,
)
from xt_core.checks.directions import lookup_rows, moved_whole
from xt_core.checks.tolerances import FINITE_DIFFERENCES, FLOOR
from xt_core.checks.twin import twin_of
from xt_core.checks.update_check import update_check
from xt_core.config import Config
from xt_core.memory import reusable_empty
from xt_core.model import forward_backward
from xt_core.tape import Node, first_reader, replay_loss, replay_losses
from xt_core.trace import Trace


def check_record(trace: Trace, index: int, seed: int = 0) -> StepCheck:
    """The gradient check of one walkthrough step (see module docstring). A float32 trace is
    checked through its float64 twin (`twin_of(trace)`: same parameters, tokens and backward, in
    float64), so the verdict is about the backward pass, not float32 round-off; the round-off
    of the gradient on screen is reported beside it (DirectionCheck.roundoff)."""
    record = trace.records[index]
    shown = trace.dtype != np.float64  # report the float32 gradient on screen against the float64 one
    step_seed = seed * 1_000_003 + index
    if record.phase == "update":  # needs no twin
        return StepCheck(index, [update_check(trace, step_seed, shown)], FINITE_DIFFERENCES)
    ref = twin_of(trace)
    replays = _Replays(trace.nodes, ref.values)
    if record.phase != "backward":
        name = record.name
        check = replays.check(name, ref.grad(name), step_seed, trace.grad(name) if shown else None, record.node + 1)
        return StepCheck(index, [check], FINITE_DIFFERENCES)
    checks = []
    contributions = ref.contributions(record.node)
    for slot, name in enumerate(record.inputs):
        if name in contributions:
            on_screen = record.contributions.get(name) if shown else None
            checks.append(replays.check(name, contributions[name], step_seed + slot, on_screen, record.node, slot))
    return StepCheck(index, checks, FINITE_DIFFERENCES)


class _Replays:
    """The float64 replays of one step's checks, on the twin's values `env`: a float32 weight
    is perturbed in float64 (x + h u), never cast whole; the casts of large float32 weights are
    shared by the check's replays (dropped with it)."""

    def __init__(self, nodes: list[Node], env):
        self.nodes, self.env, self.casts = nodes, env, {}

    def losses(self, start: int, replaces: list, swaps=None) -> list[float]:
        return replay_losses(self.nodes, self.env, start, replaces, np.float64, swaps, self.casts)

    def check(self, name: str, grad, seed: int, shown, start: int, slot: int | None = None) -> DirectionCheck:
        """<grad, u> for tensor `name` perturbed for every reader from node `start` on, or, with
        `slot`, as argument `slot` of node `start` only (a backward step's contribution)."""
        x = self.env[name]
        eps = large_step(x)
        if eps is None:  # both sides replayed in lockstep
            if slot is None:
                losses_at = lambda values: self.losses(start, [{name: v} for v in values])  # noqa: E731
            else:
                losses_at = lambda values: self.losses(start, [{}] * 2, [(start, slot, v) for v in values])  # noqa: E731
            return directional(name, x, grad, seed, losses_at, shown)
        return directional_large(name, x, eps, grad, seed, self._along(name, x, start, slot), shown)

    def _along(self, name: str, x: np.ndarray, start: int, slot: int | None):
        """(direction, h) -> (L(x + h u), L(x - h u)) of a tensor beyond LARGE entries: an
        embedding lookup's table moved only in the rows its tokens read; else moved whole, one
        side at a time (never two (V, C) float64 copies at once), both in one reused array."""
        node = self.nodes[start]
        if slot == 1 and node.kind == "embedding" and node.inputs[0] == "tokens":
            tokens = self.env[node.inputs[0]]
            return lambda direction, h: self.losses(
                start + 1, [{node.name: y} for y in lookup_rows(node, {name: x}, tokens, direction, h)]
            )
        scratch = reusable_empty(x.shape, np.float64)  # its pages faulted in once, not per side

        return lambda direction, h: [
            self._loss(start, slot, name, moved_whole(x, direction, name, step, out=scratch)) for step in (h, -h)
        ]

    def _loss(self, start: int, slot: int | None, name: str, value) -> float:
        if slot is None:
            return self.losses(start, [{name: value}])[0]
        return self.losses(start, [{}], [(start, slot, value)])[0]


# ---------------------------------------------------------------------- whole-step gradcheck


@dataclass
class TensorReport:
    name: str
    kind: str  # "param" or "activation"
    shape: tuple[int, ...]
    checked: int  # entries compared
    max_abs_error: float
    max_rel_error: float  # max |g - fd| over max(|g|, |fd|) of the checked entries
    passed: bool


@dataclass
class GradcheckReport:
    rows: list[TensorReport] = field(default_factory=list)
    tolerance: float = FINITE_DIFFERENCES
    loss: float = float("nan")

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.rows)


def _entries(x: np.ndarray, grad: np.ndarray, max_entries: int, rng: np.random.Generator) -> np.ndarray:
    """All finite entries of a small tensor; of a large one, the half with the largest
    |gradient| (a sparse gradient such as dL/dprobs would otherwise be sampled as all
    zeros and pass trivially) and a seeded random half of the rest."""
    candidates = np.flatnonzero(np.isfinite(x))
    if candidates.size <= max_entries:
        return candidates
    magnitude = np.abs(np.asarray(grad).reshape(-1)[candidates])
    top = candidates[np.argsort(-magnitude, kind="stable")[: max_entries // 2]]
    rest = np.setdiff1d(candidates, top)
    return np.sort(np.concatenate([top, rng.choice(rest, size=max_entries - top.size, replace=False)]))


def _check_entries(name, kind, x, grad, entries, loss_at, tolerance) -> TensorReport:
    eps = step_size(x)
    flat = x.reshape(-1).copy()
    numeric = np.empty(entries.size)
    unresolved = np.empty(entries.size)
    for n, i in enumerate(entries):
        original = flat[i]
        flat[i] = original + eps
        plus = loss_at(flat.reshape(x.shape))
        flat[i] = original - eps
        minus = loss_at(flat.reshape(x.shape))
        flat[i] = original
        numeric[n] = (plus - minus) / (2 * eps)
        unresolved[n] = roundoff(plus, minus, eps)
    analytic = np.asarray(grad, dtype=np.float64).reshape(-1)[entries]
    # what the finite differences cannot resolve is not an error (see ROUNDOFF_ULPS)
    abs_err = float(np.max(np.maximum(np.abs(analytic - numeric) - unresolved, 0.0), initial=0.0))
    scale = max(float(np.max(np.abs(analytic), initial=0.0)), float(np.max(np.abs(numeric), initial=0.0)), FLOOR)
    rel = abs_err / scale
    return TensorReport(name, kind, x.shape, int(entries.size), abs_err, rel, rel <= tolerance)


def gradcheck(
    cfg: Config,
    params: dict[str, np.ndarray],
    inputs,
    targets,
    max_entries: int = 64,
    seed: int = 0,
    include_activations: bool = True,
    progress=None,
) -> GradcheckReport:
    """Entry-wise central differences in float64 against the hand-written backward.

    Tensors with at most `max_entries` entries are checked whole, larger ones on a seeded
    sample of that many. `progress(name)` is called before each tensor (CLI progress bar)."""
    params64 = {k: np.asarray(v, dtype=np.float64) for k, v in params.items()}
    trace = forward_backward(cfg, params64, inputs, targets)
    env, nodes = trace.values64, trace.nodes
    rng = np.random.default_rng(seed)
    tol = FINITE_DIFFERENCES
    report = GradcheckReport(tolerance=tol, loss=trace.loss)
    for name in trace.param_names:
        if progress:
            progress(name)
        start = first_reader(nodes, name)
        report.rows.append(
            _check_entries(
                name,
                "param",
                env[name],
                trace.grad(name),
                _entries(env[name], trace.grad(name), max_entries, rng),
                lambda value, name=name, start=start: replay_loss(nodes, env, start, replace={name: value}),
                tol,
            )
        )
    if include_activations:
        for i, node in enumerate(nodes):
            if progress:
                progress(node.name)
            x = np.asarray(env[node.name])
            report.rows.append(
                _check_entries(
                    node.name,
                    "activation",
                    x,
                    trace.grad(node.name),
                    _entries(x, trace.grad(node.name), max_entries, rng),
                    lambda value, name=node.name, start=i + 1: replay_loss(nodes, env, start, replace={name: value}),
                    tol,
                )
            )
    return report
