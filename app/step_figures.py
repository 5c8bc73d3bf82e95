"""Which figures a step view shows, and how many heatmap cells each may send.

A step is planned first (the tensors it draws, in order, and its special figures: the loss
chart, the residual split, the output-softmax identity), then drawn with one cell budget for
the whole step (settings.max_step_cells), shared among its heatmaps so the step's JSON stays
small however many figures it has. Head grids are the subject of the attention steps: they
get a double share. One head of a grid at full resolution is drawn on demand (head_view).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.panels import (
    TraceContext,
    head_entry,
    heatmap_cells,
    identity_entry,
    loss_entry,
    residual_entry,
    split_budget,
    tensor_entry,
)

# Relative deviation from (p − onehot)/N beyond which the step shows a warning.
IDENTITY_TOLERANCE = {"float32": 1e-4, "float64": 1e-10}
HEAD_GRID_WEIGHT = 2.0


@dataclass(frozen=True)
class Source:
    """One tensor a step draws (a value, a gradient or an op's contribution to one)."""

    figure_id: str
    name: str
    array: np.ndarray
    title: str
    role: str
    gradient: bool


# The figures that are not one tensor: per-token loss, residual split, softmax identity.
LOSS, RESIDUAL, IDENTITY = "loss", "residual", "identity"


def float_inputs(record) -> list[str]:
    return [name for name in record.inputs if name not in ("tokens", "targets")]


def _forward_plan(ctx: TraceContext, record) -> list[Source | str]:
    trace, plan = ctx.trace, []
    for name in float_inputs(record):
        if name == "token_loss":  # the mean's input: the per-token loss chart
            plan.append(LOSS)
            continue
        title = f"Input {name}" + (" (parameter)" if ctx.is_param(name) else "")
        plan.append(Source(f"input.{name}", name, trace[name], title, "input", False))
    if record.kind == "token_loss":
        plan.append(LOSS)
    elif record.name != "loss":
        name = record.name
        plan.append(Source(f"output.{name}", name, trace[name], f"Output {name}", "output", False))
    return plan


def _backward_plan(ctx: TraceContext, record) -> list[Source | str]:
    arriving = f"dL/d({record.name}): the gradient arriving"
    plan: list[Source | str] = [
        Source(f"arriving.{record.name}", record.name, ctx.trace.grad(record.name), arriving, "grad", True)
    ]
    if record.kind == "residual":
        plan.append(RESIDUAL)
    else:
        for name in float_inputs(record):
            if name not in record.contributions:
                continue
            title = (
                f"dL/d({name}): the weight gradient from this op"
                if ctx.is_param(name)
                else f"Contribution of this op to dL/d({name})"
            )
            plan.append(Source(f"contribution.{name}", name, record.contributions[name], title, "grad", True))
    if record.name == "probs":
        plan.append(IDENTITY)
    if record.kind in ("token_loss", "mean"):
        plan.append(LOSS)
    return plan


def plan(ctx: TraceContext, record) -> list[Source | str]:
    return _backward_plan(ctx, record) if record.phase == "backward" else _forward_plan(ctx, record)


def _is_head_grid(ctx: TraceContext, item: Source | str) -> bool:
    return isinstance(item, Source) and not ctx.is_param(item.name) and np.ndim(item.array) == 4


def _budgets(ctx: TraceContext, record, items: list[Source | str], seq: int, max_cells: int) -> list[int]:
    needs, weights = [], []
    for item in items:
        if item == RESIDUAL:  # three (T, C) panels of the skip input's gradient
            skip = record.inputs[0]
            needs.append(3 * heatmap_cells(ctx, skip, ctx.trace.grad(skip), seq))
        elif isinstance(item, Source):
            needs.append(heatmap_cells(ctx, item.name, item.array, seq))
        else:
            needs.append(0)
        weights.append(HEAD_GRID_WEIGHT if _is_head_grid(ctx, item) else 1.0)
    return split_budget(needs, weights, max_cells)


def _identity(ctx: TraceContext, seq: int, pos: int) -> tuple[dict, list[str]]:
    trace = ctx.trace
    entry, error = identity_entry(ctx, seq, pos)
    scale = float(np.max(np.abs(trace["probs"]))) / trace.targets.size
    if not np.isfinite(error):
        return entry, ["p or dL/dlogits holds NaN or infinite values: the identity cannot be checked."]
    if not error <= IDENTITY_TOLERANCE[ctx.spec.dtype] * max(scale, 1e-30):
        return entry, [f"dL/dlogits deviates from (p − onehot)/N by up to {error:.3g}."]
    return entry, []


def step_figures(ctx: TraceContext, record, seq: int, pos: int, max_cells: int) -> tuple[list[dict], list[str]]:
    """(the step's figure entries, warnings), its heatmaps within max_cells cells together."""
    items = plan(ctx, record)
    out, warnings = [], []
    for item, cells in zip(items, _budgets(ctx, record, items, seq, max_cells), strict=True):
        if item == LOSS:
            out.append(loss_entry(ctx, seq))
        elif item == RESIDUAL:
            out.append(residual_entry(ctx, record, seq, max_cells=cells))
        elif item == IDENTITY:
            entry, found = _identity(ctx, seq, pos)
            out.append(entry)
            warnings += found
        else:
            out.append(
                tensor_entry(
                    ctx,
                    item.name,
                    item.array,
                    seq,
                    figure_id=item.figure_id,
                    title=item.title,
                    role=item.role,
                    gradient=item.gradient,
                    max_cells=cells,
                )
            )
    return [entry for entry in out if entry is not None], warnings


# ---------------------------------------------------------------------- one head, every value


def head_grids(ctx: TraceContext, record) -> dict[str, Source]:
    """The step's grids of attention heads, by figure id (what the head route can enlarge)."""
    if record.phase not in ("forward", "backward"):
        return {}
    return {item.figure_id: item for item in plan(ctx, record) if _is_head_grid(ctx, item)}


def head_view(ctx: TraceContext, index: int, source: Source, head: int, seq: int) -> dict:
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
    )
    return {"index": index, "seq": seq, "head": head, "grid": source.figure_id, **entry}
