"""One page of a recorded tensor's numbers, cut on the server (GET .../tensors/{name}/slice):
the numbers table pages through the whole tensor instead of the first rows and columns a
figure's `table` holds.

A tensor of any rank is read as a matrix: `at` fixes every leading axis but the last two (a
(B, H, T, T) attention tensor: the sequence and the head), `rows` and `cols` are ranges of the
last two ("start:stop"; a 1-D tensor is one column). `find` moves the rows (or, when the rows
hold no tokens, the columns) to the first entry naming that token: a position whose input is
it, or that token of the vocabulary. Every value is checked against the tensor and the limits
(settings.max_slice_rows, max_slice_cols) before a number is read: a 422 naming the field."""

from __future__ import annotations

import numpy as np

from app.errors import SpecError
from app.steps.context import TraceContext
from app.steps.stats import tensor_axes
from app.words.said import Said


def _range(field: str, text: str | None, size: int, limit: int, limit_name: str) -> tuple[int, int]:
    """ "start:stop" (either may be left out) within [0, size], at most `limit` long; default
    the first `limit`."""
    if text is None or text == "":
        return 0, min(size, limit)
    parts = text.split(":")
    try:
        if len(parts) != 2:
            raise ValueError
        start = int(parts[0]) if parts[0] else 0
        stop = int(parts[1]) if parts[1] else min(size, start + limit)
    except ValueError:
        raise SpecError(("query", field), Said("error-slice-form", field=field, value=repr(text[:40]))) from None
    if not 0 <= start < stop <= size:
        raise SpecError(("query", field), Said("error-slice-bounds", field=field, size=size, value=f"{start}:{stop}"))
    if stop - start > limit:
        raise SpecError(
            ("query", field),
            Said("error-slice-too-long", field=field, span=stop - start, most=limit, setting=limit_name),
        )
    return start, stop


def _lead(at: str | None, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The indices of the leading axes, "0,3"; 0 for each one left out."""
    n = max(0, len(shape) - 2)
    if not at:
        return (0,) * n
    try:
        values = tuple(int(v) for v in at.split(","))
    except ValueError:
        raise SpecError(("query", "at"), Said("error-at-integers", value=repr(at[:40]))) from None
    if len(values) != n:
        raise SpecError(("query", "at"), Said("error-at-count", count=n, shape=str(list(shape)), given=len(values)))
    for axis, (i, size) in enumerate(zip(values, shape, strict=False)):
        if not 0 <= i < size:
            raise SpecError(("query", "at"), Said("error-at-between", axis=axis, last=size - 1, value=str(i)))
    return values


def axis_labels(ctx: TraceContext, axis: str | None, seq: int, start: int, stop: int) -> list[str]:
    """Labels of indices start..stop of an axis: "i token" for positions, a token for the vocabulary."""
    if axis == "T":
        tokens = ctx.input_labels(seq)
        return [f"{i} {tokens[i]}" if i < len(tokens) else str(i) for i in range(start, stop)]
    if axis == "V":
        return [ctx.token_label(i) for i in range(start, stop)]
    return [str(i) for i in range(start, stop)]


def _token_index(ctx: TraceContext, axis: str | None, seq: int, size: int, token: str) -> int | None:
    """The first index along a token axis whose token is `token` (its label or its text)."""
    if axis == "T":
        labels = ctx.input_labels(seq)
    elif axis == "V":
        labels = ctx.vocab[:size]
    else:
        return None
    for i, label in enumerate(labels):
        if token in (label, label.replace("␣", " ")):
            return i
    return None


def _found(ctx, axes, seq, shape, find, rows, cols, find_in) -> tuple[tuple[int, int], tuple[int, int]]:
    """rows (or cols) moved, their length kept, so that the first entry naming token `find` starts
    the page; `find_in` ("rows", "cols", None: rows, then cols) says along which."""
    row_axis, col_axis = axes[-2] if len(axes) >= 2 else axes[0], axes[-1] if len(axes) >= 2 else None
    for which, axis, size, span in (("rows", row_axis, shape[0], rows), ("cols", col_axis, shape[1], cols)):
        if find_in not in (None, which):
            continue
        index = _token_index(ctx, axis, seq, size, find)
        if index is not None:
            moved = (index, min(size, index + span[1] - span[0]))
            return (moved, cols) if which == "rows" else (rows, moved)
    where = Said({"rows": "error-along-rows", "cols": "error-along-cols"}.get(find_in, "error-along-token-axes"))
    raise SpecError(("query", "find"), Said("error-no-token", token=repr(find[:40]), where=where, axes=", ".join(axes)))


def tensor_slice(
    ctx: TraceContext, name: str, grad: bool, array: np.ndarray, at, rows, cols, find, find_in=None
) -> dict:
    """The page of `array` (the tensor `name`, or its gradient) the query asks for, checked."""
    shape = tuple(np.shape(array))
    if len(shape) == 0:
        raise SpecError(("path", "name"), Said("error-scalar-no-rows", name=name))
    lead = _lead(at, shape)
    matrix = np.asarray(array)[lead] if lead else np.asarray(array)
    matrix = matrix.reshape(-1, 1) if matrix.ndim == 1 else matrix
    axes = list(tensor_axes(ctx, name, len(shape)) or [])
    seq = lead[axes.index("B")] if "B" in axes[: len(lead)] else 0
    limits = (ctx.settings.max_slice_rows, ctx.settings.max_slice_cols)
    row_span = _range("rows", rows, matrix.shape[0], limits[0], "max_slice_rows")
    col_span = _range("cols", cols, matrix.shape[1], limits[1], "max_slice_cols")
    if find:
        row_span, col_span = _found(ctx, axes or ["?"], seq, matrix.shape, find, row_span, col_span, find_in)
    row_axis = axes[-2] if len(axes) >= 2 else (axes[0] if axes else None)
    col_axis = axes[-1] if len(axes) >= 2 else None
    values = matrix[row_span[0] : row_span[1], col_span[0] : col_span[1]]
    return {
        "name": name,
        "grad": grad,
        "shape": list(shape),
        "dtype": str(np.asarray(array).dtype),
        "axes": axes,
        "at": list(lead),
        "rows": list(row_span),
        "cols": list(col_span),
        "n_rows": int(matrix.shape[0]),
        "n_cols": int(matrix.shape[1]),
        "row_labels": axis_labels(ctx, row_axis, seq, *row_span),
        "col_labels": axis_labels(ctx, col_axis, seq, *col_span) if len(shape) > 1 else [name],
        "values": values,
    }
