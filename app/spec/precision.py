"""A spec's precision: `dtype` "bfloat16" or "float16" (xt_core.precision: float32 master weights,
each op rounded as docs/precision.md states) with its loss-scale fields, checked and made canonical.

The fields: `loss_scale` (a power of two in [1, 2^32]; 1 by default: no scaling), `loss_scale_growth`
(the dynamic scaler: over the spec's training steps, double the scale after this many clean steps,
halve it and skip the update on inf/NaN; null: a static scale) and `flush_to_zero` (false by default).
They enter the canonical spec (and so the trace id and the permalink) only for a low-precision
dtype, so every float32 and float64 spec keeps its id; given with those, they are refused by name.
"""

from __future__ import annotations

from app.errors import SpecError
from app.words.said import Said
from xt_core.precision import FORMATS, Precision
from xt_core.precision.policy import MAX_LOSS_SCALE_EXPONENT
from xt_core.precision.scaling import MAX_GROWTH_INTERVAL

PRECISION_FIELDS = ("loss_scale", "loss_scale_growth", "flush_to_zero")


def is_low(dtype: str) -> bool:
    return dtype in FORMATS


def storage_dtype(dtype: str) -> str:
    """The dtype a step's arrays are held in: a low-precision step's are float32 (master weights,
    and values the format holds exactly), so it costs what a float32 step does."""
    return "float32" if is_low(dtype) else dtype


def resolve_precision(spec, where: str = "body") -> tuple:
    """(the spec with its storage dtype, the canonical spec's dtype and precision fields, the step's
    policy): ({"dtype": ...}, None) for float32 and float64, whose specs may not name the fields;
    SpecError naming the field and its limit."""
    given = {name: getattr(spec, name) for name in PRECISION_FIELDS if getattr(spec, name) is not None}
    if not is_low(spec.dtype):
        if given:
            field = next(iter(given))
            raise SpecError((where, field), Said("error-precision-low-only", field=field, dtype=spec.dtype))
        return spec, {"dtype": spec.dtype}, None
    scale = given.get("loss_scale", 1)
    try:
        policy = Precision.of(spec.dtype, loss_scale=scale, flush_to_zero=given.get("flush_to_zero", False))
    except ValueError:
        raise SpecError(
            (where, "loss_scale"),
            Said("error-precision-loss-scale", most=str(MAX_LOSS_SCALE_EXPONENT), value=str(scale)),
        ) from None
    growth = given.get("loss_scale_growth")
    if growth is not None and not 1 <= growth <= MAX_GROWTH_INTERVAL:
        raise SpecError(
            (where, "loss_scale_growth"),
            Said("error-between", field="loss_scale_growth", low="1", high=str(MAX_GROWTH_INTERVAL), value=str(growth)),
        )
    canonical = {"loss_scale": policy.loss_scale, "loss_scale_growth": growth, "flush_to_zero": policy.flush_to_zero}
    stored = spec.model_copy(update={"dtype": storage_dtype(spec.dtype)})
    return stored, {"dtype": policy.name, **canonical}, policy


def precision_to_query(canonical: dict) -> dict[str, str]:
    """A low-precision canonical spec's fields as /walk query values (none for another dtype)."""
    query = {}
    for key in PRECISION_FIELDS:
        value = canonical.get(key)
        if value is not None:
            query[key] = str(value).lower() if isinstance(value, bool) else _exact(value)
    return query


def _exact(value: float) -> str:
    """A number as a permalink keeps it whole: 2^32 is 4294967296, not "%g"'s 4.29497e+09 (no power of two)."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))
