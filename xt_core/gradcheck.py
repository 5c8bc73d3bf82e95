"""Gradients are verified, never trusted: central finite differences in float64.

Two checks, both re-running the forward from the op onward on the tape:

* `check_record(trace, index)`: what the walkthrough badge shows for one step. For a
  seeded random direction u, compare <g, u> with (L(X + eps u) - L(X - eps u)) / 2 eps.
  A forward step checks dL/d(its output) (the full gradient); a backward step checks the
  contribution it adds to each of its inputs, perturbing the input for that op only. The
  loss is always the true one, so a wrong backward (the bug lab) fails at its own step.
* `gradcheck(cfg, params, inputs, targets)`: entry by entry for every parameter (all
  entries of small tensors, a seeded sample of large ones) and every recorded tensor.

Error measure: |analytic - numeric| / max(|analytic|, |numeric|, FLOOR) per direction or
entry set, and normwise over a tensor's sampled entries. Tolerances in TOLERANCE. A float32
trace is checked through its float64 twin (xt_core.twin: same params, tokens and faults):
float32 round-off is not a wrong gradient, and it is reported apart (StepCheck.float32_roundoff).
"""

from __future__ import annotations

import math
from collections import ChainMap
from dataclasses import dataclass, field

import numpy as np

from xt_core.config import Config
from xt_core.f64 import LARGE, chunks, dot, moved, sum_of_squares
from xt_core.model import forward_backward
from xt_core.tape import first_reader, replay_loss, replay_losses
from xt_core.trace import Trace
from xt_core.twin import Direction, lookup_rows, moved_pair, param_grad_dot

# Relative error allowed against float64 finite differences (FD truncation and round-off stay
# near 1e-9). Every check runs in float64: a float32 trace is checked through its float64
# twin, so both dtypes share the tolerance; float32 round-off is reported apart.
TOLERANCE = {"float64": 1e-6, "float32": 1e-6}
FLOOR = 1e-10  # below this a derivative counts as zero (masked scores, a lone token's softmax)
REL_STEP = 1e-5  # eps = REL_STEP * rms(X): central differences' sweet spot in float64
# A central difference cannot see below the round-off of the two losses it subtracts: about
# an ulp of L each, divided by 2h. Discrepancies within ROUNDOFF_ULPS of that are not held
# against the gradient (an exactly-zero gradient, e.g. attention over one repeated token,
# otherwise "fails" on 1e-11 of pure noise). A wrong backward is many orders above it.
ROUNDOFF_ULPS = 64


@dataclass(frozen=True)
class DirectionCheck:
    tensor: str  # the tensor perturbed
    analytic: float  # <gradient, u>, the gradient computed in float64
    numeric: float  # central difference of the true loss along u
    rel_error: float
    shown: float | None = None  # <gradient, u> of the float32 trace the learner sees, if float32

    @property
    def roundoff(self) -> float | None:
        """How far the float32 gradient on screen is from the float64 one (not an error of
        the backward pass: p - onehot with p near 1 keeps only a few float32 digits)."""
        return None if self.shown is None else _rel(self.shown, self.analytic)


@dataclass(frozen=True)
class StepCheck:
    record: int
    checks: list[DirectionCheck]
    tolerance: float

    @property
    def max_rel_error(self) -> float:
        return max((c.rel_error for c in self.checks), default=0.0)

    @property
    def passed(self) -> bool:
        return self.max_rel_error <= self.tolerance

    @property
    def float32_roundoff(self) -> float | None:
        values = [c.roundoff for c in self.checks if c.roundoff is not None]
        return max(values) if values else None

    @property
    def float32_nonfinite(self) -> bool:
        """The float32 gradient on screen holds NaN/inf where the float64 twin's does not need
        to: the rule may check fine while the numbers shown have overflowed (a diverged run)."""
        return any(c.shown is not None and not math.isfinite(c.shown) for c in self.checks)


def _rel(a: float, b: float) -> float:
    return abs(a - b) / max(abs(a), abs(b), FLOOR)


def _roundoff(plus: float, minus: float, h: float) -> float:
    """What float64 round-off of L(x + h u) and L(x - h u) can put into their central difference."""
    return ROUNDOFF_ULPS * np.finfo(np.float64).eps * max(abs(plus), abs(minus), 1.0) / (2 * h)


def _step_size(x: np.ndarray) -> float:
    squares = [
        sum_of_squares(np.asarray(c, np.float64), x.size > LARGE) for _, c in chunks(x)
    ]  # one chunk unless large
    count = sum(n for _, n in squares)
    rms = float(np.sqrt(sum(q for q, _ in squares) / count)) if count else 1.0
    return REL_STEP * max(rms, 1e-3)


def _direction(x: np.ndarray, seed: int) -> np.ndarray:
    """A seeded random direction of x's shape: standard normal; beyond LARGE entries (a
    vocabulary's (V, C) weights) uniform in [-1, 1) in float32, drawn ~6x faster than float64
    normals and half the bytes (any direction with entries everywhere checks the same rule)."""
    rng = np.random.default_rng(seed)
    if x.size > LARGE:
        u = rng.random(x.shape, dtype=np.float32)
        u = np.subtract(np.multiply(u, 2, out=u), 1, out=u)
    else:
        u = rng.standard_normal(x.shape)
    u[~np.isfinite(x)] = 0.0  # a masked score is a constant: nothing to perturb
    return u


def _resolved_error(analytic: float, numeric: float, roundoff: float, difference_at) -> float:
    """_rel(analytic, numeric), except where that fails the tolerance: then the finite
    difference is taken again with twice the step, and the part of the discrepancy within
    the two differences' spread plus the losses' round-off (what the finite difference itself
    cannot resolve, e.g. when the loss is ~1e-5, or the gradient is exactly zero) is not held
    against the gradient. A real bug is orders of magnitude above that."""
    rel = _rel(analytic, numeric)
    if rel <= TOLERANCE["float64"]:
        return rel
    spread = abs(numeric - difference_at(2.0)[0]) + roundoff
    return max(abs(analytic - numeric) - spread, 0.0) / max(abs(analytic), abs(numeric), FLOOR)


def _directional(tensor: str, x: np.ndarray, grad, seed: int, loss_at, shown=None) -> DirectionCheck:
    u = _direction(x, seed)
    eps = _step_size(x)

    def difference(scale: float) -> tuple[float, float]:
        h = scale * eps
        plus, minus = loss_at(moved(x, h, u)), loss_at(moved(x, -h, u))
        return (plus - minus) / (2 * h), _roundoff(plus, minus, h)

    numeric, roundoff = difference(1.0)
    analytic = dot(grad, u)
    error = _resolved_error(analytic, numeric, roundoff, difference)
    return DirectionCheck(tensor, analytic, numeric, error, None if shown is None else dot(shown, u))


def check_record(trace: Trace, index: int, seed: int = 0) -> StepCheck:
    """The gradient check of one walkthrough step (see module docstring). A float32 trace is
    checked through its float64 twin (`trace.twin`: same parameters, tokens and faults, in
    float64), so the verdict is about the backward pass, not float32 round-off; the round-off
    of the gradient on screen is reported beside it (DirectionCheck.roundoff)."""
    record = trace.records[index]
    shown = trace.dtype != np.float64  # report the float32 gradient on screen against the float64 one
    if record.phase == "update":  # needs no twin
        return StepCheck(index, [_update_check(trace, seed * 1_000_003 + index, shown)], TOLERANCE["float64"])
    ref = trace.twin
    env, nodes = ref.values, trace.nodes
    casts: dict = {}  # float64 casts of large float32 weights, shared by this check's replays

    def replay(start, **replaced) -> float:
        return replay_loss(nodes, env, start, dtype=np.float64, casts=casts, **replaced)

    step_seed, checks = seed * 1_000_003 + index, []
    if record.phase != "backward":
        name = record.name
        checks.append(
            _directional(
                name,
                env[name],
                ref.grad(name),
                step_seed,
                lambda value: replay(record.node + 1, replace={name: value}),
                shown=trace.grad(name) if shown else None,
            )
        )
    else:
        contributions = ref.contributions(record.node)
        for slot, name in enumerate(record.inputs):
            if name not in contributions:
                continue
            checks.append(
                _directional(
                    name,
                    env[name],  # a float32 weight: perturbed in float64 (x + h u), never cast whole
                    contributions[name],
                    step_seed + slot,
                    lambda value, slot=slot: replay(record.node, replace_input=(record.node, slot, value)),
                    shown=record.contributions.get(name) if shown else None,
                )
            )
    return StepCheck(index, checks, TOLERANCE["float64"])


def _update_check(trace: Trace, seed: int, shown: bool) -> DirectionCheck:
    """The update step: the gradient the optimizer used, all parameters at once, along one
    random direction in the whole parameter space (xt_core.twin.Direction: windows of one random
    block). A float32 trace's float64 gradient comes from one float64 forward and backward that
    dots each parameter gradient as it is made (xt_core.twin.param_grad_dot: no twin needed)."""
    nodes, names = trace.nodes, trace.param_names
    params = {name: trace.values[name] for name in names}
    direction = Direction(seed, params)
    eps = REL_STEP * max(min(_rms(params[n]) for n in names), 1e-3)
    ids = {"tokens": trace.tokens, "targets": trace.targets}
    lookup = nodes[0].kind == "embedding" and nodes[0].inputs[0] == "tokens" and nodes[0].inputs[1] in params

    def difference(scale: float) -> tuple[float, float]:  # both replays in lockstep: u cut once per weight
        h = scale * eps
        sides = list(moved_pair(params, direction, h))
        if lookup:  # only the rows the tokens read are moved; the replays start after the lookup
            looked_up = lookup_rows(nodes[0], params, trace.tokens, direction, h)
            sides = [ChainMap({nodes[0].name: x}, side) for x, side in zip(looked_up, sides, strict=True)]
        plus, minus = replay_losses(nodes, ids, 1 if lookup else 0, sides, dtype=np.float64)
        return (plus - minus) / (2 * h), _roundoff(plus, minus, h)

    numeric, roundoff = difference(1.0)
    on_screen = trace.grads if shown else None
    if trace.dtype == np.float64:
        analytic, on_screen = trace.twin.param_grad_dot(direction, on_screen)
    else:
        analytic, on_screen = param_grad_dot(
            nodes, params, *ids.values(), direction, on_screen, trace.backward_override
        )
    error = _resolved_error(analytic, numeric, roundoff, difference)
    return DirectionCheck("parameters", analytic, numeric, error, on_screen)


def _rms(x: np.ndarray) -> float:
    """RMS of x's finite entries, one dot product in x's own dtype if all are finite (plenty for a
    step size; a float64 cast of a real model's 135M weights cost its update check ~0.4 s)."""
    flat = np.reshape(x, -1)
    q = float(np.dot(flat, flat))
    if not math.isfinite(q):
        flat = np.asarray(flat[np.isfinite(flat)], np.float64)
        q = float(np.dot(flat, flat))
    return math.sqrt(q / flat.size) if flat.size else 1.0


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
    tolerance: float = TOLERANCE["float64"]
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
    eps = _step_size(x)
    flat = x.reshape(-1).copy()
    numeric = np.empty(entries.size)
    roundoff = np.empty(entries.size)
    for n, i in enumerate(entries):
        original = flat[i]
        flat[i] = original + eps
        plus = loss_at(flat.reshape(x.shape))
        flat[i] = original - eps
        minus = loss_at(flat.reshape(x.shape))
        flat[i] = original
        numeric[n] = (plus - minus) / (2 * eps)
        roundoff[n] = _roundoff(plus, minus, eps)
    analytic = np.asarray(grad, dtype=np.float64).reshape(-1)[entries]
    # what the finite differences cannot resolve is not an error (see ROUNDOFF_ULPS)
    abs_err = float(np.max(np.maximum(np.abs(analytic - numeric) - roundoff, 0.0), initial=0.0))
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
    tol = TOLERANCE["float64"]
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
