"""What a kind of step view is, and how its figures share one cell budget.

A `StepKind` says which recorded steps it shows (`matches`) and either lists the figures of
such a step (`figures`: each a `Figure`, drawn in order) or fills in the view's own fields
(`view`, the optimizer update); app.steps.view writes the fields every step view has around
them. The registry (app.steps.registry) is the ordered list of kinds; the first that matches
a step draws it. Drawing shares one cell budget (settings.max_step_cells)
among the step's heatmaps so its JSON stays small however many figures it has; a grid of
attention heads, the subject of the attention steps, gets a double share.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from app.steps.context import TraceContext
from app.steps.tensors import tensor_entry
from xt_core.names import TOKEN_IDS
from xt_core.trace import Record

HEAD_GRID_WEIGHT = 2.0


class Figure(Protocol):
    """One figure of a step view."""

    def cells(self, ctx: TraceContext, seq: int) -> int:
        """Heatmap cells it would draw at full resolution (0: not a heatmap, no share)."""

    def weight(self, ctx: TraceContext) -> float:
        """Its share of the cell budget relative to the step's other heatmaps."""

    def draw(
        self, ctx: TraceContext, seq: int, pos: int, cells: int, lang: str = "en"
    ) -> tuple[dict | None, list[str]]:
        """(its figure entry, or None to show nothing; warnings) within `cells` cells, its words in `lang`."""


@dataclass(frozen=True)
class StepKind:
    name: str  # what the kind shows, for readers and errors
    matches: Callable[[Record], bool]
    figures: Callable[[TraceContext, Record], list[Figure]] | None = None
    # a view of its own: (ctx, record, lang) -> its explanation, formula, shapes, figures, warnings and
    # any fields of its own (app.steps.view writes the fields every step view has around them)
    view: Callable[[TraceContext, Record, str], dict] | None = None
    reads_pos: bool = False  # its view depends on the request's `pos` (else one view serves every pos)


def float_inputs(record: Record) -> list[str]:
    return [name for name in record.inputs if name not in TOKEN_IDS]


@dataclass(frozen=True)
class TensorFigure:
    """One tensor a step draws: a value, a gradient or an op's contribution to one."""

    figure_id: str
    name: str
    array: np.ndarray
    title: str
    role: str
    gradient: bool
    whole: bool = True  # the recorded tensor or its gradient (False: one op's contribution to it)

    def is_head_grid(self, ctx: TraceContext) -> bool:
        return not ctx.is_param(self.name) and np.ndim(self.array) == 4

    def cells(self, ctx: TraceContext, seq: int) -> int:
        return heatmap_cells(ctx, self.name, self.array, seq)

    def weight(self, ctx: TraceContext) -> float:
        return HEAD_GRID_WEIGHT if self.is_head_grid(ctx) else 1.0

    def draw(
        self, ctx: TraceContext, seq: int, pos: int, cells: int, lang: str = "en"
    ) -> tuple[dict | None, list[str]]:
        entry = tensor_entry(
            ctx,
            self.name,
            self.array,
            seq,
            figure_id=self.figure_id,
            title=self.title,
            role=self.role,
            gradient=self.gradient,
            max_cells=cells,
            whole=self.whole,
            lang=lang,
        )
        return entry, []


class ChartFigure:
    """A figure that is not a heatmap (a chart of bars or lines): no share of the cell budget."""

    def cells(self, ctx: TraceContext, seq: int) -> int:
        return 0

    def weight(self, ctx: TraceContext) -> float:
        return 1.0


def heatmap_cells(ctx: TraceContext, name: str, array: np.ndarray, seq: int) -> int:
    """Cells tensor_entry would draw at full resolution (0 for bars and scalars)."""
    shape = np.shape(array) if ctx.is_param(name) else np.shape(array)[1:]
    return int(np.prod(shape)) if len(shape) >= 2 else 0


def split_budget(needs: list[int], weights: list[float], total: int) -> list[int]:
    """Share `total` cells among figures needing `needs` cells, in proportion to `weights`;
    what a small figure leaves unused goes to the others (water filling)."""
    budgets = [0] * len(needs)
    remaining, weight_left = total, sum(w for n, w in zip(needs, weights, strict=True) if n)
    for i in sorted(range(len(needs)), key=lambda i: needs[i] / weights[i]):
        if not needs[i]:
            continue
        budgets[i] = max(1, min(needs[i], int(remaining * weights[i] / weight_left)))
        remaining, weight_left = remaining - budgets[i], weight_left - weights[i]
    return budgets


def draw_figures(
    ctx: TraceContext, items: list[Figure], seq: int, pos: int, max_cells: int, lang: str = "en"
) -> tuple[list[dict], list[str]]:
    """(the figure entries, warnings) of a step's figures, their heatmaps within max_cells cells together."""
    budgets = split_budget([f.cells(ctx, seq) for f in items], [f.weight(ctx) for f in items], max_cells)
    entries, warnings = [], []
    for item, cells in zip(items, budgets, strict=True):
        entry, found = item.draw(ctx, seq, pos, cells, lang)
        if entry is not None:
            entries.append(entry)
        warnings += found
    return entries, warnings
