"""Float64 arithmetic of gradient checks on tensors of any size, without whole-size temporaries.

A real model's (V, C) embedding has 28M entries: each float64 temporary of it is 226 MB, and a
check made half a dozen. Beyond LARGE entries a tensor is reduced in chunks, in float64; a
small one exactly as before (its check's numbers do not change).
"""

from __future__ import annotations

import math

import numpy as np

LARGE = 1 << 22  # entries: a chunk is 32 MB in float64


def chunks(a: np.ndarray):
    """(slice of the flattened array, that part), LARGE entries at a time (one part if small)."""
    flat = a.reshape(-1)
    return ((slice(i, i + LARGE), flat[i : i + LARGE]) for i in range(0, flat.size, LARGE))


def sum_of_squares(c: np.ndarray, large: bool) -> tuple[float, int]:
    """(sum of squares of the finite entries of float64 `c`, their count); a chunk of a large
    tensor first tries one dot product (no copy), filtering only if it holds NaN or inf."""
    if large and math.isfinite(q := float(np.dot(c, c))):
        return q, c.size
    finite = c[np.isfinite(c)]
    return float(np.sum(finite * finite)), finite.size


def dot(grad, u: np.ndarray) -> float:
    """<grad, u> in float64 (grad of any float dtype, u float64 or float32, same shape)."""
    grad = np.asarray(grad)
    if grad.size > LARGE:
        flat = u.reshape(-1)
        return float(
            sum(np.dot(np.asarray(c, np.float64), np.asarray(flat[where], np.float64)) for where, c in chunks(grad))
        )
    return float(np.sum(np.asarray(grad, dtype=np.float64) * u))


def moved(x: np.ndarray, h: float, u: np.ndarray) -> np.ndarray:
    """x + h u in float64: one new array (a large x: no other temporary of its size)."""
    out = np.multiply(u, h, dtype=np.float64)
    out += x
    return out
