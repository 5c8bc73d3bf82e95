"""The low-precision number formats a step may emulate: bfloat16 and float16, held in float32 arrays.

A value "in bfloat16" is a float32 whose bits a bfloat16 holds exactly; rounding to the format is
xt's own code (round to nearest, ties to even, IEEE subnormals kept, flush-to-zero on request),
tested bit for bit against PyTorch's casts (tests/core/precision/test_against_torch.py). Nothing
here inherits a library's arithmetic: every op computes in float32 and rounds where the policy
(xt_core.precision.policy) says.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

F32 = np.dtype(np.float32)


@dataclass(frozen=True)
class Format:
    """A binary floating-point format: `mantissa` stored fraction bits, exponents of normal numbers
    in [min_exponent, max_exponent] (x = 1.f × 2^e)."""

    name: str
    mantissa: int
    min_exponent: int
    max_exponent: int

    @property
    def unit_roundoff(self) -> float:
        """u = 2^-(p) with p = mantissa + 1 significant bits: the largest relative error of one rounding."""
        return 2.0 ** -(self.mantissa + 1)

    @property
    def min_normal(self) -> float:
        return 2.0**self.min_exponent

    @property
    def min_subnormal(self) -> float:
        return 2.0 ** (self.min_exponent - self.mantissa)

    @property
    def max_finite(self) -> float:
        return (2.0 - 2.0**-self.mantissa) * 2.0**self.max_exponent

    def round(self, x: np.ndarray, flush: bool = False) -> np.ndarray:
        """x (float32, or cast to it first) rounded to this format, as float32: nearest, ties to
        even; past the largest finite value ±inf; below the smallest subnormal ±0; NaN stays NaN.
        flush: results below the smallest normal number become ±0 (flush-to-zero)."""
        x = np.asarray(x, dtype=F32)
        rounded = _ROUNDERS[self.name](x)
        if flush:
            rounded = np.where(np.abs(rounded) < self.min_normal, np.copysign(F32.type(0), rounded), rounded)
        return rounded


def _round_bfloat16(x: np.ndarray) -> np.ndarray:
    """bfloat16 is float32's upper 16 bits: add half of the dropped part's weight, 0x7FFF, plus the
    kept part's last bit (ties to even), then clear the lower 16 bits. A carry into the exponent
    is the rounding up to the next binade, or to inf past the largest finite value; float32
    subnormals round by the same rule to bfloat16's. NaNs are kept as they are (a quiet NaN's top
    bits are a NaN in bfloat16 too, but the carry could turn a NaN with low payload into inf)."""
    bits = x.view(np.uint32)
    kept_last = (bits >> np.uint32(16)) & np.uint32(1)
    rounded = ((bits + np.uint32(0x7FFF) + kept_last) & np.uint32(0xFFFF0000)).view(F32)
    nan = np.isnan(x)
    return np.where(nan, x, rounded) if nan.any() else rounded


def _round_float16(x: np.ndarray) -> np.ndarray:
    """float16 keeps 10 of float32's 23 fraction bits: normal numbers round as bfloat16's do, on 13
    dropped bits (a carry past 65,504 reaches 65,536: inf); below 2^-14 its spacing is a fixed 2^-24,
    so x · 2^24 (exact) rounds to the nearest even integer (np.rint) and back (exact). NumPy's own
    float32 -> float16 cast rounds the same way but takes ~30x longer on a step's values."""
    bits = x.view(np.uint32)
    kept_last = (bits >> np.uint32(13)) & np.uint32(1)
    rounded = ((bits + np.uint32(0xFFF) + kept_last) & np.uint32(0xFFFFE000)).view(F32)
    small = np.abs(x) < F32.type(2.0**-14)
    if small.any():
        with np.errstate(over="ignore", invalid="ignore"):  # the large entries' products, not taken
            rounded = np.where(small, np.rint(x * F32.type(2.0**24)) * F32.type(2.0**-24), rounded)
    past = np.abs(rounded) > F32.type(65504.0)
    if past.any():
        rounded = np.where(past & ~np.isnan(x), np.copysign(F32.type(np.inf), x), rounded)
    nan = np.isnan(x)
    return np.where(nan, x, rounded) if nan.any() else rounded


_ROUNDERS = {"bfloat16": _round_bfloat16, "float16": _round_float16, "float32": lambda x: x}

BFLOAT16 = Format("bfloat16", mantissa=7, min_exponent=-126, max_exponent=127)
FLOAT16 = Format("float16", mantissa=10, min_exponent=-14, max_exponent=15)
FORMATS = {f.name: f for f in (BFLOAT16, FLOAT16)}  # the low precisions a step may run in
FLOAT32 = Format("float32", mantissa=23, min_exponent=-126, max_exponent=127)  # what the reductions hold
