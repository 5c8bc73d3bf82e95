"""The grids of attention heads a step shows, and one head of them at full resolution (what
enlarging a head fetches: GET .../steps/{index}/head)."""

from __future__ import annotations

from app.steps.context import TraceContext, in_language
from app.steps.kind import TensorFigure
from app.steps.registry import kind_of
from app.steps.tensors import head_entry
from xt_core.trace import Record


def head_grids(ctx: TraceContext, index: int) -> list[str]:
    """Figure ids of step `index`'s grids of attention heads (what the head route enlarges)."""
    return list(grids_of(ctx, ctx.trace.records[index]))


def head_view(ctx: TraceContext, index: int, figure_id: str, head: int, seq: int, lang: str = "en") -> dict:
    """One head of step `index`'s grid `figure_id` at full resolution (validated by the route)."""
    ctx = in_language(ctx, lang)
    source = grids_of(ctx, ctx.trace.records[index])[figure_id]
    return _head_view(ctx, index, source, head, seq, lang)


def grids_of(ctx: TraceContext, record: Record) -> dict[str, TensorFigure]:
    """The step's grids of attention heads, by figure id (what the head route can enlarge)."""
    if record.phase not in ("forward", "backward"):
        return {}
    kind = kind_of(record)
    items = kind.figures(ctx, record) if kind.figures is not None else []
    return {f.figure_id: f for f in items if isinstance(f, TensorFigure) and f.is_head_grid(ctx)}


def _head_view(ctx: TraceContext, index: int, source: TensorFigure, head: int, seq: int, lang: str) -> dict:
    """One head of a step's grid at full resolution: a figure entry (figure, numbers, note)
    plus where it comes from. The caller validated head and seq."""
    entry = head_entry(
        ctx,
        source.name,
        source.array,
        seq,
        head,
        figure_id=source.figure_id,
        title=source.title,
        gradient=source.gradient,
        whole=source.whole,
        lang=lang,
    )
    return {"index": index, "seq": seq, "head": head, "grid": source.figure_id, **entry}
