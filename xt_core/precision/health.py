"""The numbers' health of a low-precision step: for each recorded tensor and its gradient, what the
format did to it against the step's float64 twin (the same parameters and tokens, exact math).

The rule for "loses information" (LOSES_INFORMATION_*): a relative error past 10x the format's unit
round-off, more than 1 % of entries flushed to zero where the twin's are not, or any entry
overflowed to inf where the twin's is finite.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from xt_core.checks.twin import twin_of
from xt_core.precision.formats import FLOAT32, Format
from xt_core.precision.policy import OP_PRECISION, ROUNDED
from xt_core.precision.scaling import update_loss

LOSES_INFORMATION_ROUNDOFFS = 10  # relative error past this many unit round-offs of the held format
LOSES_INFORMATION_FLUSHED = 0.01  # or more than this fraction of entries flushed to zero


@dataclass(frozen=True)
class Health:
    """One tensor (or gradient) against its float64 twin. Fractions are of all its entries."""

    held_in: str  # the format the tensor is held in: the step's low precision, or float32 (reductions)
    size: int
    rel_error: float  # ||x - x64|| / ||x64|| over the finite entries (0 where x64 is all zero)
    flushed: float  # x == 0 where x64 != 0: underflowed
    subnormal: float  # 0 < |x| < the format's smallest normal number
    overflowed: float  # x = ±inf or NaN where x64 is finite
    exponents: dict  # {"lowest": e0, "counts": [n(e0), n(e0 + 1), ...]}: entries with floor(log2|x|) = e
    range: dict  # the held format's exponents: smallest subnormal, smallest normal, largest
    loses_information: bool

    def as_json(self) -> dict:
        return asdict(self)


def health(value: np.ndarray, reference: np.ndarray, fmt: Format, step_format: Format | None = None) -> Health:
    """What holding `value` in `fmt` (its bits already rounded there) lost against `reference`. The
    relative error is judged by the step's format (step_format, by default fmt): a float32 softmax
    of bfloat16 scores carries their error, which is the step's precision at work, not float32's."""
    x = np.asarray(value, dtype=np.float64)
    ref = np.asarray(reference, dtype=np.float64)
    size = max(x.size, 1)
    finite = np.isfinite(x) & np.isfinite(ref)
    ref_norm = float(np.linalg.norm(ref[finite]))
    rel = float(np.linalg.norm(x[finite] - ref[finite])) / ref_norm if ref_norm else 0.0
    roundoff = (step_format or fmt).unit_roundoff
    magnitude = np.abs(x[np.isfinite(x) & (x != 0)])
    flushed = int(np.count_nonzero((x == 0) & (ref != 0))) / size
    overflowed = int(np.count_nonzero(~np.isfinite(x) & np.isfinite(ref))) / size
    return Health(
        held_in=fmt.name,
        size=int(x.size),
        rel_error=rel,
        flushed=flushed,
        subnormal=int(np.count_nonzero(magnitude < fmt.min_normal)) / size,
        overflowed=overflowed,
        exponents=_exponent_counts(magnitude),
        range={
            "subnormal": fmt.min_exponent - fmt.mantissa,
            "normal": fmt.min_exponent,
            "largest": fmt.max_exponent,
        },
        loses_information=bool(
            rel > LOSES_INFORMATION_ROUNDOFFS * roundoff or flushed > LOSES_INFORMATION_FLUSHED or overflowed > 0
        ),
    )


def _exponent_counts(magnitude: np.ndarray) -> dict:
    if not magnitude.size:
        return {"lowest": 0, "counts": []}
    exponents = np.floor(np.log2(magnitude)).astype(np.int64)
    lowest = int(exponents.min())
    return {"lowest": lowest, "counts": np.bincount(exponents - lowest).tolist()}


def trace_health(trace, names=None) -> dict[str, dict[str, Health]]:
    """{name: {"value": Health, "grad": Health}} for every recorded tensor (or those `names`) of a
    low-precision trace, against its float64 twin. A tensor a rounded op made is held in the step's
    format, its gradient too (several contributions, summed in float32, as its op reads them:
    rounded; counted as held, times the loss scale); a reduction's output and gradient are float32."""
    if trace.precision is None:
        raise ValueError(
            "the numbers' health compares a low-precision step with its float64 twin: this step is not one"
        )
    twin = twin_of(trace)
    low = trace.precision.low
    chosen = [node.name for node in trace.nodes] if names is None else list(names)
    summary = {}
    step_format, scale = trace.precision.format, _held_scale(trace)
    for name in chosen:
        fmt, times = (step_format, scale) if name in low else (FLOAT32, 1.0)
        summary[name] = {
            "value": health(trace[name], twin.values[name], fmt, step_format),
            "grad": health(_as_read(trace, name) * times, twin.grad(name) * times, fmt, step_format),
        }
    return summary


def _held_scale(trace) -> float:
    """A low-precision gradient is held as S·g (the loss scale S, a power of two: exact): its
    subnormal share and exponents are counted there, against the format's range; its relative
    error and flushed share are the same either way."""
    return trace.precision.loss_scale


def _as_read(trace, name: str) -> np.ndarray:
    grad = trace.grad(name)
    return trace.precision.round_grad(grad) if name in trace.precision.low else grad


def first_losing(summary: dict[str, dict[str, Health]]) -> tuple[str, str] | None:
    """The first (name, "value" | "grad") of a step in its order (the forward's values, then the
    gradients from the loss back) that loses information, or None."""
    names = list(summary)
    for name, which in [(n, "value") for n in names] + [(n, "grad") for n in reversed(names)]:
        if summary[name][which].loses_information:
            return name, which
    return None


def param_health(trace) -> dict[str, Health]:
    """{parameter: Health of its gradient} against the exact gradient: one float64 forward and
    backward of its own from the same float32 master weights, tokens and backward rules (the
    twin keeps no parameter gradients). A parameter some rounded op reads (a matrix, a table, a
    bias) has its gradient's contributions rounded to the step's format; a norm's gain, read by a
    float32 op alone, has a float32 gradient."""
    if trace.precision is None:
        raise ValueError("the parameters' health compares a low-precision step with float64: this step is not one")
    from xt_core.model import forward_backward  # the step itself, in float64 (model imports none of this)

    names = trace.param_names
    params64 = {name: np.asarray(trace[name], dtype=np.float64) for name in names}
    exact = forward_backward(
        trace.cfg, params64, trace.tokens, trace.targets, backward_override=trace.backward_override,
        keep_param_grads=True,
    )  # fmt: skip
    step_format = trace.precision.format
    rounded = {name for node in trace.nodes if OP_PRECISION[node.kind] == ROUNDED for name in node.inputs}
    scale = _held_scale(trace)
    out = {}
    for name in names:
        fmt, times = (step_format, scale) if name in rounded else (FLOAT32, 1.0)
        out[name] = health(trace.grads[name] * times, exact.grads[name] * times, fmt, step_format)
    return out


def update_losses(trace) -> dict[str, float] | None:
    """{parameter: the share of its update ||ΔW|| lost had ΔW been added to weights held in the
    step's format instead of float32 master weights} (xt_core.precision.scaling.update_loss), for
    a training step; None for a step without an update."""
    update = trace.update
    if update is None or trace.precision is None:
        return None
    fmt = trace.precision.format
    return {name: update_loss(trace[name], p.delta, fmt) for name, p in update.per_param.items()}
