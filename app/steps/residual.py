"""The backward of a residual add: the arriving gradient, then how gradients add at a skip
connection (what arrives along the skip, what the branch adds, their sum)."""

from __future__ import annotations

import numpy as np

from app import figures
from app.steps import backward
from app.steps.context import TraceContext
from app.steps.kind import Figure, StepKind, heatmap_cells
from app.steps.titles import tensor_label
from app.steps.wording import cut_note, t
from xt_core.trace import Record


def residual_entry(ctx: TraceContext, record, seq: int, max_cells: int | None = None, lang: str = "en") -> dict:
    """Residual gradients add: the gradient arriving along the skip (this op's share of
    dL/dx), what the branch adds through its norm, and the sum, the full dL/dx."""
    skip_name = record.inputs[0]
    skip = np.asarray(record.contributions[skip_name])[seq]
    total = np.asarray(ctx.trace.grad(skip_name))[seq]
    branch = total - skip
    rows = ctx.positions(seq)
    lang = ctx.lang
    title = t(lang, "names-figure-residual-title", label=tensor_label(skip_name, lang, ctx.trace.cfg.family))
    parts = ("names-figure-residual-skip", "names-figure-residual-branch", "names-figure-residual-sum")
    names = tuple(t(lang, part) for part in parts)
    cells = ctx.settings.max_heatmap_cells if max_cells is None else min(max_cells, ctx.settings.max_heatmap_cells)
    fig = figures.residual_view(skip, branch, total, rows, title=title, names=names, max_cells=cells, lang=lang)
    per = max(1, ctx.settings.max_table_cols // 3)
    n = min(per, skip.shape[1])
    interleaved = np.stack([skip[:, :n], branch[:, :n], total[:, :n]], axis=-1).reshape(skip.shape[0], 3 * n)
    parts = [
        t(lang, part)
        for part in ("step-residual-column-skip", "step-residual-column-branch", "step-residual-column-sum")
    ]
    columns = [f"{part}[{j}]" for j in range(n) for part in parts]
    table_json, _ = ctx.table(interleaved, rows, columns, lang)
    note = _residual_note((len(table_json["index"]), n), skip.shape, lang)
    return ctx.entry("residual", title, "residual", fig, (table_json, None), [note])


def _residual_note(shown: tuple[int, int], full: tuple[int, int], lang: str) -> str:
    """What the skip | branch | sum table holds: which positions and features (only the cut axes named)."""
    messages = (
        "step-residual-note-positions-features",
        "step-residual-note-positions",
        "step-residual-note-features",
        "step-residual-note",
    )
    return cut_note(lang, shown, full, ("positions", "features"), messages)


class ResidualSplit:
    """Three (T, C) panels of the skip input's gradient."""

    def __init__(self, record: Record):
        self.record = record

    def cells(self, ctx: TraceContext, seq: int) -> int:
        skip = self.record.inputs[0]
        return 3 * heatmap_cells(ctx, skip, ctx.trace.grad(skip), seq)

    def weight(self, ctx: TraceContext) -> float:
        return 1.0

    def draw(
        self, ctx: TraceContext, seq: int, pos: int, cells: int, lang: str = "en"
    ) -> tuple[dict | None, list[str]]:
        return residual_entry(ctx, self.record, seq, max_cells=cells, lang=lang), []


def plan(ctx: TraceContext, record: Record) -> list[Figure]:
    return [backward.arriving_figure(ctx, record), ResidualSplit(record)]


KIND = StepKind(
    "a residual add, backward: skip + branch", lambda r: r.kind == "residual" and r.phase == "backward", plan
)
