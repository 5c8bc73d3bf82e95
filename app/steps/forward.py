"""Any forward op: its inputs (parameters marked), then what it computes."""

from __future__ import annotations

from app.steps.context import TraceContext
from app.steps.kind import Figure, StepKind, TensorFigure, float_inputs
from app.steps.titles import input_title, output_title
from xt_core.trace import Record


def input_figures(ctx: TraceContext, record: Record, skip: tuple[str, ...] = ()) -> list[Figure]:
    out: list[Figure] = []
    for name in float_inputs(record):
        if name in skip:
            continue
        title = input_title(name, ctx.is_param(name), ctx.lang, record.family)
        out.append(TensorFigure(f"input.{name}", name, ctx.trace[name], title, "input", False))
    return out


def output_figure(ctx: TraceContext, record: Record) -> Figure:
    name = record.name
    title = output_title(name, ctx.lang, record.family)
    return TensorFigure(f"output.{name}", name, ctx.trace[name], title, "output", False)


def plan(ctx: TraceContext, record: Record) -> list[Figure]:
    return [*input_figures(ctx, record), output_figure(ctx, record)]


KIND = StepKind("a forward op (or the loss phase): inputs and output", lambda r: r.phase in ("forward", "loss"), plan)
