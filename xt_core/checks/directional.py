"""One directional gradient check and the error measure every check shares.

A check compares <g, u>, the analytic gradient g along a seeded random direction u, with the
central difference (L(x + h u) - L(x - h u)) / 2h of the true loss, all in float64
(xt_core.checks.gradcheck: one step's checks; xt_core.checks.update_check: the optimizer update's).

Error measure: |analytic - numeric| / max(|analytic|, |numeric|, FLOOR) per direction;
what the finite difference itself cannot resolve is not held against the gradient
(resolved_error). Tolerances in xt_core.checks.tolerances.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from xt_core.checks.directions import BLOCK, Direction
from xt_core.checks.f64 import LARGE, chunks, dot, moved, sum_of_squares
from xt_core.checks.tolerances import FINITE_DIFFERENCES, FLOOR, RESOLVED, ROUNDOFF_ULPS

REL_STEP = 1e-5  # eps = REL_STEP * rms(X): central differences' sweet spot in float64
# Where a plain central difference fails the tolerance (resolved_error): the steps (h / shrink)
# extrapolated until the truncation is below the tolerance or the round-off.
STEP_SHRINKS = (1, 16, 256, 4096, 65536)


@dataclass(frozen=True)
class DirectionCheck:
    tensor: str  # the tensor perturbed
    analytic: float  # <gradient, u>, the gradient computed in float64
    numeric: float  # central difference of the true loss along u
    rel_error: float
    shown: float | None = None  # <gradient, u> of the float32 trace the learner sees, if float32
    # where the plain central difference missed the tolerance: the relative uncertainty of the
    # extrapolated one (resolved_error), within which a discrepancy is not held against the
    # gradient; rel_error is then what is left beyond it (0: agreement to within `resolution`)
    resolution: float = 0.0

    @property
    def roundoff(self) -> float | None:
        """How far the float32 gradient on screen is from the float64 one (not an error of
        the backward pass: p - onehot with p near 1 keeps only a few float32 digits)."""
        return None if self.shown is None else rel(self.shown, self.analytic)


@dataclass(frozen=True)
class StepCheck:
    record: int
    checks: list[DirectionCheck]
    tolerance: float

    @property
    def max_rel_error(self) -> float:
        return max((c.rel_error for c in self.checks), key=_nan_first, default=0.0)

    @property
    def passed(self) -> bool:
        return self.max_rel_error <= self.tolerance

    @property
    def resolution(self) -> float:
        """The coarsest finite-difference resolution of the checks (0: all compared plainly)."""
        return max((c.resolution for c in self.checks), default=0.0)

    @property
    def error_bound(self) -> float:
        """What the checks vouch for: the largest rel_error plus the resolution below which that
        check could not see."""
        return max((c.rel_error + c.resolution for c in self.checks), key=_nan_first, default=0.0)

    @property
    def float32_roundoff(self) -> float | None:
        values = [c.roundoff for c in self.checks if c.roundoff is not None]
        return max(values) if values else None

    @property
    def float32_nonfinite(self) -> bool:
        """The float32 gradient on screen holds NaN/inf where the float64 twin's does not need
        to: the rule may check fine while the numbers shown have overflowed (a diverged run)."""
        return any(c.shown is not None and not math.isfinite(c.shown) for c in self.checks)


def _nan_first(error: float) -> float:
    """max()'s key: a NaN error is the largest (plain max() skips it unless it comes first)."""
    return math.inf if math.isnan(error) else error


def rel(a: float, b: float) -> float:
    return abs(a - b) / max(abs(a), abs(b), FLOOR)


def roundoff(plus: float, minus: float, h: float) -> float:
    """What float64 round-off of L(x + h u) and L(x - h u) can put into their central difference."""
    return ROUNDOFF_ULPS * np.finfo(np.float64).eps * max(abs(plus), abs(minus), 1.0) / (2 * h)


def _squares(x: np.ndarray) -> tuple[float, int]:
    """(sum of squares of x's finite entries, their count), in float64, one chunk unless large."""
    parts = [sum_of_squares(np.asarray(c, np.float64), x.size > LARGE) for _, c in chunks(x)]
    return sum(q for q, _ in parts), sum(n for _, n in parts)


def step_size(x: np.ndarray) -> float:
    return _step_of(*_squares(x))


def _step_of(squares: float, count: int) -> float:
    rms = float(np.sqrt(squares / count)) if count else 1.0
    return REL_STEP * max(rms, 1e-3)


def _direction(x: np.ndarray, seed: int) -> np.ndarray:
    """A seeded random direction of x's shape: standard normal; beyond LARGE entries uniform in
    [-1, 1) in float32 (a large tensor with NaN or inf entries: directional_large takes the rest)."""
    rng = np.random.default_rng(seed)
    if x.size > LARGE:
        u = rng.random(x.shape, dtype=np.float32)
        u = np.subtract(np.multiply(u, 2, out=u), 1, out=u)
    else:
        u = rng.standard_normal(x.shape)
    u[~np.isfinite(x)] = 0.0  # a masked score is a constant: nothing to perturb
    return u


@dataclass(frozen=True)
class _Extrapolated:
    """Richardson's (4 D(h/2) - D(h)) / 3 at one step h, and what it cannot see below."""

    fine: float
    unresolved: float  # |fine - (4 D(h) - D(2h)) / 3|: the truncation left at this step
    noise: float  # what the losses' round-off puts into the two extrapolations


def _extrapolated(difference_at, shrink: int, here: tuple[float, float] | None = None) -> _Extrapolated:
    here_value, here_spread = here if here is not None else difference_at(1 / shrink)
    wide, wide_spread = difference_at(2 / shrink)
    narrow, narrow_spread = difference_at(0.5 / shrink)
    coarse, fine = (4 * here_value - wide) / 3, (4 * narrow - here_value) / 3
    noise = (4 * narrow_spread + here_spread) / 3 + (4 * here_spread + wide_spread) / 3
    return _Extrapolated(fine, abs(fine - coarse), noise)


def resolved_error(analytic: float, numeric: float, spread: float, difference_at) -> tuple[float, float, float]:
    """(rel_error, resolution, numeric): rel(analytic, numeric) where that passes the tolerance.

    Else the difference is taken again at twice and at half the step and each pair Richardson-
    extrapolated (a loss that curves strongly along u, such as -log p of an unlikely target
    token, is off by percents at the plain step), at steps 16 times smaller each time
    (STEP_SHRINKS) until the two extrapolations agree to the tolerance or to the losses'
    round-off: as far as a finite difference can see. The estimate that got furthest is then
    judged by _verdict."""
    error = rel(analytic, numeric)
    if error <= FINITE_DIFFERENCES:
        return error, 0.0, numeric
    best, best_ratio = None, math.inf
    for shrink in STEP_SHRINKS:
        found = _extrapolated(difference_at, shrink, (numeric, spread) if shrink == 1 else None)
        if not math.isfinite(found.unresolved):  # a loss not finite at 2h: no measurement
            continue
        size = max(abs(analytic), abs(found.fine), FLOOR)
        if found.unresolved / size < best_ratio:
            best, best_ratio = found, found.unresolved / size
        if found.unresolved <= found.noise or found.unresolved <= FINITE_DIFFERENCES * size:
            break
    return _verdict(analytic, best)


def _verdict(analytic: float, found: _Extrapolated | None) -> tuple[float, float, float]:
    """The part of the discrepancy beyond the estimate's uncertainty (its unresolved truncation
    plus round-off) is held against the gradient, and that uncertainty, relative, is the
    resolution reported. Both values within it: the derivative is zero within round-off (an
    exactly-zero gradient: nothing to report). Truncation never resolved below RESOLVED:
    nothing forgiven."""
    if found is None:
        return math.inf, 0.0, math.nan
    uncertainty = found.unresolved + found.noise
    if max(abs(analytic), abs(found.fine)) <= uncertainty:
        return 0.0, 0.0, float(found.fine)
    size = max(abs(analytic), abs(found.fine), FLOOR)
    if found.unresolved > max(found.noise, RESOLVED * size):
        return rel(analytic, found.fine), 0.0, float(found.fine)
    return (
        float(max(abs(analytic - found.fine) - uncertainty, 0.0) / size),
        float(uncertainty / size),
        float(found.fine),
    )


Losses = Callable[[float], tuple[float, float]]  # h -> (L(x + h u), L(x - h u))


def measured(tensor: str, eps: float, losses: Losses, analytic: float, shown: float | None) -> DirectionCheck:
    """The check of analytic = <g, u> against the central difference of `losses` at step eps."""

    def difference(scale: float) -> tuple[float, float]:
        h = scale * eps
        plus, minus = losses(h)
        return (plus - minus) / (2 * h), roundoff(plus, minus, h)

    numeric, spread = difference(1.0)
    error, resolution, numeric = resolved_error(analytic, numeric, spread, difference)
    return DirectionCheck(tensor, analytic, numeric, error, shown, resolution)


def directional(tensor: str, x: np.ndarray, grad, seed: int, losses_at, shown=None) -> DirectionCheck:
    """<grad, u> along a seeded random u of x's shape; losses_at([x + h u, x - h u]) gives both
    losses (replays in lockstep). shown: the float32 gradient on screen, dotted with the same u."""
    u = _direction(x, seed)
    return measured(
        tensor,
        step_size(x),
        lambda h: losses_at([moved(x, h, u), moved(x, -h, u)]),
        dot(grad, u),
        None if shown is None else dot(shown, u),
    )


def large_step(x: np.ndarray) -> float | None:
    """The step size of a tensor beyond LARGE entries, all finite (directional_large's); else None."""
    if x.size <= LARGE:
        return None
    squares, count = _squares(x)
    return _step_of(squares, count) if count == x.size else None


def directional_large(
    tensor: str, x: np.ndarray, eps: float, grad, seed: int, losses_along, shown=None
) -> DirectionCheck:
    """directional for a tensor beyond LARGE entries, all finite (a vocabulary's (V, C) weights),
    at step eps = large_step(x). u is a directions.Direction, windows of one random block held in
    float64, so neither u nor its float64 cast is made whole for the dot products (a whole
    float32 u, its draw and the casts in <g, u> cost the LM head's check ~0.5 s);
    losses_along(direction, h) -> (L(x + h u), L(x - h u)) moves x itself: whole, one side at
    a time, or only the rows an op reads."""
    direction = Direction(seed, {tensor: x}, size=min(BLOCK, max(2 * LARGE, x.size)))
    dots = direction.dots(tensor, grad, *([] if shown is None else [shown]))
    losses = lambda h: losses_along(direction, h)  # noqa: E731
    return measured(tensor, eps, losses, dots[0], None if shown is None else dots[1])
