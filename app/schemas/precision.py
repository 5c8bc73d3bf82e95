"""The answer of GET /api/traces/{id}/precision: a low-precision step's numbers' health."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from app.schemas.common import Answer


class Exponents(Answer):
    lowest: int = Field(description="the exponent of counts[0]")
    counts: list[int] = Field(description="entries with floor(log2|x|) = lowest + i (zeros and non-finite left out)")


class FormatRange(Answer):
    subnormal: int = Field(description="the smallest subnormal's exponent")
    normal: int = Field(description="the smallest normal number's exponent")
    largest: int = Field(description="the largest finite number's exponent")


class Health(Answer):
    held_in: str = Field(description="the format the tensor is held in: the step's, or float32 (a reduction's)")
    size: int
    rel_error: float = Field(description="||x - x64|| / ||x64|| against the float64 twin")
    flushed: float = Field(description="share of entries 0 where the twin's are not")
    subnormal: float = Field(description="share of entries below the held format's smallest normal number")
    overflowed: float = Field(description="share of entries inf or NaN where the twin's are finite")
    exponents: Exponents
    range: FormatRange
    loses_information: bool


class TensorHealth(Answer):
    name: str
    value: Health
    grad: Health


class ParamHealth(Answer):
    name: str
    grad: Health = Field(description="its gradient against one float64 step's (the same weights, tokens, rules)")


class UpdateLoss(Answer):
    name: str
    lost: float = Field(description="share of ||ΔW|| lost were ΔW added to weights held in the format (not float32)")


class OpPrecision(Answer):
    kind: str
    precision: Literal["rounded", "float32"] = Field(
        description="rounded: inputs and output (backward: every gradient) rounded to the format, computed in float32; "
        "float32: a reduction, its low-precision inputs' gradients rounded (docs/precision.md)"
    )


class Rule(Answer):
    roundoffs: int = Field(description="loses information past this many unit round-offs of relative error")
    flushed: float = Field(description="or past this share of entries flushed to zero (or any overflow)")


class FirstLosing(Answer):
    name: str
    which: Literal["value", "grad"]


class PrecisionHealth(Answer):
    """GET .../precision."""

    dtype: Literal["bfloat16", "float16"]
    loss_scale: float
    flush_to_zero: bool
    unit_roundoff: float
    formats: dict[str, FormatRange] = Field(
        description="bfloat16's and float16's exponents (any step's histogram marks both)"
    )
    rule: Rule
    ops: list[OpPrecision]
    first_losing: FirstLosing | None = Field(description="the first tensor in the step's order past the rule")
    tensors: list[TensorHealth]
    params: list[ParamHealth] | None = Field(
        description="every parameter's gradient; null past 20M parameters (a float64 copy of them all)"
    )
    update: list[UpdateLoss] | None = Field(description="a training step's update, per parameter; null: none")
