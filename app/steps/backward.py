"""Any backward op: the gradient arriving at its output, then what it adds to the gradient of
each of its inputs (for a parameter: the weight gradient from this op)."""

from __future__ import annotations

from app.steps.context import TraceContext
from app.steps.kind import Figure, StepKind, TensorFigure, float_inputs
from app.steps.titles import arriving_title, contribution_title
from xt_core.trace import Record


def arriving_figure(ctx: TraceContext, record: Record) -> Figure:
    title = arriving_title(record.name, ctx.lang, record.family)
    return TensorFigure(f"arriving.{record.name}", record.name, ctx.trace.grad(record.name), title, "grad", True)


def contribution_figures(ctx: TraceContext, record: Record) -> list[Figure]:
    out: list[Figure] = []
    for name in float_inputs(record):
        if name not in record.contributions:
            continue
        title = contribution_title(name, ctx.is_param(name), ctx.lang, record.family)
        contribution = record.contributions[name]
        out.append(TensorFigure(f"contribution.{name}", name, contribution, title, "grad", True, whole=False))
    return out


def plan(ctx: TraceContext, record: Record) -> list[Figure]:
    return [arriving_figure(ctx, record), *contribution_figures(ctx, record)]


KIND = StepKind("a backward op: arriving gradient and contributions", lambda r: r.phase == "backward", plan)
