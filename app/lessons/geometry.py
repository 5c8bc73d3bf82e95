"""Where a lesson's annotation lands: the figures a step shows (their ids and the shape of the
tensor each draws), and each annotation resolved into polygons in tensor units, which the page
maps onto the drawn figure (pooled or not) as Plotly shapes.

Tensor units: cell (row r, column c) covers x in [c − ½, c + ½] and y in [r − ½, r + ½]; a 1-D
tensor (per-token losses, a norm's gain) is one row of bars, its marks spanning the plot's height.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.lessons.schema import Annotation
from app.steps.axes import VOCAB_ROWS, vocab_columns
from app.steps.context import TraceContext
from app.steps.kind import TensorFigure
from app.steps.registry import kind_of


class AnnotationError(ValueError):
    """An annotation that does not fit its figure: the message says which field and why."""


@dataclass(frozen=True)
class FigureInfo:
    id: str
    shape: tuple[int, int] | None  # one panel's (rows, columns); None: a chart (notes only)
    panels: int = 1  # heads of a grid (3-D tensors), else 1
    bars: bool = False  # a 1-D tensor drawn as bars
    row_tokens: bool = False  # the rows are vocabulary tokens
    col_tokens: bool = False
    targets: np.ndarray | None = None  # (T,) target ids, for a (T, V) tensor of sequence 0


def _tensor_info(ctx: TraceContext, fig: TensorFigure) -> FigureInfo | None:
    array = np.asarray(fig.array)
    if ctx.is_param(fig.name):
        if array.ndim == 1:
            return FigureInfo(fig.figure_id, (1, array.shape[0]), bars=True)
        return FigureInfo(fig.figure_id, tuple(array.shape), row_tokens=fig.name in VOCAB_ROWS)
    if array.ndim <= 1:
        return None  # a scalar (the loss): no figure
    panel = array[0]
    if panel.ndim == 1:
        return FigureInfo(fig.figure_id, (1, panel.shape[0]), bars=True)
    if panel.ndim == 3:
        return FigureInfo(fig.figure_id, tuple(panel.shape[1:]), panels=panel.shape[0])
    vocab = vocab_columns(fig.name)
    return FigureInfo(
        fig.figure_id, tuple(panel.shape), col_tokens=vocab, targets=ctx.trace.targets[0] if vocab else None
    )


def step_figures(ctx: TraceContext, index: int) -> dict[str, FigureInfo]:
    """The figures step `index` shows (sequence 0), by id, without drawing the heatmaps."""
    record = ctx.trace.records[index]
    kind = kind_of(record)
    if kind.figures is None:
        return {}  # a view of its own (the update): no annotations
    out: dict[str, FigureInfo] = {}
    for fig in kind.figures(ctx, record):
        if isinstance(fig, TensorFigure):
            info = _tensor_info(ctx, fig)
        else:  # a chart: cheap to draw for its id
            entry, _ = fig.draw(ctx, 0, 0, ctx.settings.max_heatmap_cells)
            info = FigureInfo(entry["id"], None) if entry else None
        if info is not None:
            out[info.id] = info
    return out


def _index(value: int | str, size: int, tokens: bool, vocab: list[str], field: str, axis: str) -> int:
    if isinstance(value, str):
        if not tokens:
            raise AnnotationError(f"{field} {value!r} names a token, but this figure's {axis} are not tokens")
        if value not in vocab:
            raise AnnotationError(f"{field} {value!r} is not a token of the model's vocabulary")
        return vocab.index(value)
    if not -size <= value < size:
        raise AnnotationError(
            f"{field} {value} is outside the tensor's {size} {axis} (0 to {size - 1}, or −1 for the last)"
        )
    return value % size


def _span(one, pair, size: int, tokens: bool, vocab: list[str], field: str, axis: str) -> tuple[int, int]:
    if pair is None:
        if one is None:
            return 0, size - 1
        i = _index(one, size, tokens, vocab, field, axis)
        return i, i
    first, last = (_index(v, size, tokens, vocab, field + "s", axis) for v in pair)
    if first > last:
        raise AnnotationError(f"{field}s [{pair[0]}, {pair[1]}]: the first comes after the last")
    return first, last


def _rect(r0: int, r1: int, c0: int, c1: int) -> list[list[float]]:
    return [[c0 - 0.5, r0 - 0.5], [c1 + 0.5, r0 - 0.5], [c1 + 0.5, r1 + 0.5], [c0 - 0.5, r1 + 0.5]]


def _clip(polygon: list[list[float]], sign: float, bound: float) -> list[list[float]]:
    """The part of a convex polygon where sign · (x − y) <= sign · bound (Sutherland–Hodgman)."""
    inside = lambda p: sign * (p[0] - p[1]) <= sign * bound + 1e-9
    out = []
    for i, p in enumerate(polygon):
        q = polygon[i - 1]
        if inside(p) != inside(q):
            dp, dq = p[0] - p[1] - bound, q[0] - q[1] - bound
            t = dq / (dq - dp)
            out.append([q[0] + t * (p[0] - q[0]), q[1] + t * (p[1] - q[1])])
        if inside(p):
            out.append(p)
    return out


def _band(lo: int, hi: int, rows: int, cols: int) -> list[list[float]]:
    """Cells with lo <= column − row <= hi, as one polygon clipped to the tensor."""
    if lo > hi:
        raise AnnotationError(f"offsets [{lo}, {hi}]: the lowest comes after the highest")
    if hi < -(rows - 1) or lo > cols - 1:
        raise AnnotationError(f"column − row in [{lo}, {hi}] misses every cell of the {rows}×{cols} tensor")
    polygon = _clip(_clip(_rect(0, rows - 1, 0, cols - 1), 1.0, hi + 0.5), -1.0, lo - 0.5)
    return [[round(x, 6), round(y, 6)] for x, y in polygon]


def _polygons(note: Annotation, info: FigureInfo, vocab: list[str]) -> list[list[list[float]]]:
    rows, cols = info.shape
    span_rows = lambda: _span(note.row, note.rows, rows, info.row_tokens, vocab, "row", "rows")
    span_cols = lambda: _span(note.col, note.cols, cols, info.col_tokens, vocab, "col", "columns")
    if note.kind in ("cell", "row", "column"):
        (r0, r1), (c0, c1) = span_rows(), span_cols()
        if info.bars and note.kind == "row":
            raise AnnotationError("a 1-D tensor is one row of bars: mark a column (a bar) instead")
        return [_rect(r0, r1, c0, c1)]
    if note.kind == "targets":
        if info.targets is None:
            raise AnnotationError(
                "targets marks the target token of each position: only on a (positions × vocabulary) tensor"
            )
        r0, r1 = span_rows()
        return [_rect(r, r, int(info.targets[r]), int(info.targets[r])) for r in range(r0, r1 + 1)]
    if info.bars:
        raise AnnotationError(f"a {note.kind} needs a matrix; this figure is one row of bars")
    lo, hi = (note.offset, note.offset) if note.kind == "diagonal" else tuple(note.offsets)
    return [_band(lo, hi, rows, cols)]


def resolve(note: Annotation, info: FigureInfo, vocab: list[str]) -> dict:
    """The annotation as the page draws it (AnnotationError when it does not fit the figure)."""
    out = {"figure": note.figure, "kind": note.kind, "label": note.label, "head": note.head, "bars": info.bars}
    if note.kind == "note":
        return {**out, "shape": list(info.shape) if info.shape else None, "polygons": []}
    if info.shape is None:
        raise AnnotationError(f'figure {info.id!r} is a chart, not a tensor: only a note (kind = "note") fits it')
    if note.head is not None and (info.panels == 1 or note.head >= info.panels):
        heads = f"heads 0 to {info.panels - 1}" if info.panels > 1 else "no grid of heads"
        raise AnnotationError(f"head {note.head}: figure {info.id!r} shows {heads}")
    return {**out, "shape": list(info.shape), "polygons": _polygons(note, info, vocab)}
