"""The numbers beside every figure: shape, dtype, min, max, mean, std, ‖·‖₂, NaN and ±inf
counts and the argmax (with its token where an axis has tokens), of the whole tensor, not
the cells drawn. Blocking work (a worker thread).

Read in slices of CHUNK entries in float64, two passes (the sum, extremes and counts; then the
squared deviations from the mean): no float64 copy of a whole tensor is made (SmolLM2's
embedding gradient, 28 M entries, would be 226 MB), and the mean and std are those np.mean and
np.std compute in float64. NaN and ±inf are counted and left out of the other numbers (the
attention scores hold −∞ for every masked key).
"""

from __future__ import annotations

import math

import numpy as np

from app.steps.context import TraceContext
from app.words import t
from xt_core import names

CHUNK = 1 << 20
# A parameter's axes (xt_core.names declares the recorded tensors'): the vocabulary's rows.
PARAM_AXES = {"tok_embeddings": ("V", "C"), "output": ("V", "C")}


def summarize(array: np.ndarray) -> dict:
    """{shape, dtype, count, finite, nan, inf, min, max, mean, std, norm, argmax} of the whole
    array; the numbers None when no entry is finite, argmax the index of the largest finite entry."""
    a = np.ascontiguousarray(array)
    flat = a.reshape(-1)
    total, count, nan, inf = 0.0, 0, 0, 0
    low, high, where = math.inf, -math.inf, None
    for start in range(0, flat.size, CHUNK):
        part = flat[start : start + CHUNK]
        finite = np.isfinite(part)
        if not finite.all():
            nan += int(np.isnan(part).sum())
            inf += int(np.isinf(part).sum())
            part = np.where(finite, part, -np.inf)
            kept = part[finite]
        else:
            kept = part
        if kept.size == 0:
            continue
        count += kept.size
        total += float(kept.sum(dtype=np.float64))
        low = min(low, float(kept.min()))
        peak = int(np.argmax(part))
        if float(part[peak]) > high:
            high, where = float(part[peak]), start + peak
    mean = total / count if count else None
    squares, deviations = 0.0, 0.0
    for start in range(0, flat.size, CHUNK) if count else ():
        part = flat[start : start + CHUNK].astype(np.float64)
        part = part[np.isfinite(part)]
        squares += float(part @ part)
        deviations += float(np.square(part - mean).sum())
    return {
        "shape": list(a.shape),
        "dtype": str(a.dtype),
        "count": int(a.size),
        "finite": count,
        "nan": nan,
        "inf": inf,
        "min": low if count else None,
        "max": high if count else None,
        "mean": mean,
        "std": math.sqrt(deviations / count) if count else None,
        "norm": math.sqrt(squares) if count else None,
        "argmax": [int(i) for i in np.unravel_index(where, a.shape)] if where is not None else None,
    }


def tensor_axes(ctx: TraceContext, name: str, ndim: int) -> tuple[str, ...] | None:
    """The axis names of a recorded tensor or parameter (B, T, V, ...), None when unknown."""
    if ctx.is_param(name):
        axes = PARAM_AXES.get(name)
    else:
        recorded = names.lookup(name)
        axes = recorded.axes if recorded is not None else None
    return axes if axes is not None and len(axes) == ndim else None


def index_labels(ctx: TraceContext, name: str, index: list[int]) -> list[str | None]:
    """What each coordinate of `index` names: the token at a position (T, of the index's
    sequence), a token of the vocabulary (V), a head (H); None for the other axes."""
    axes = tensor_axes(ctx, name, len(index))
    if axes is None:
        return [None] * len(index)
    seq = index[axes.index("B")] if "B" in axes else 0
    out = []
    for axis, i in zip(axes, index, strict=True):
        if axis == "T" and 0 <= i < ctx.T:
            out.append(f"{i} {ctx.input_labels(seq)[i]}")
        elif axis == "V":
            out.append(ctx.token_label(i))
        elif axis == "H":
            out.append(t(ctx.lang, "names-heads-one", head=i))
        elif axis == "B":
            out.append(t(ctx.lang, "names-index-sequence", index=i))
        else:
            out.append(None)
    return out


def tensor_stats(ctx: TraceContext, name: str, array: np.ndarray) -> dict:
    """summarize(array), with the axis names and the argmax's labels (its token, its head)."""
    stats = summarize(array)
    stats["axes"] = list(tensor_axes(ctx, name, np.ndim(array)) or [])
    stats["argmax_labels"] = index_labels(ctx, name, stats["argmax"]) if stats["argmax"] is not None else None
    return stats
