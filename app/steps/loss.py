"""The loss steps (per-token cross-entropy and its mean, forward and backward): the op's own
figures, then the loss per position with the mean L as a dashed line."""

from __future__ import annotations

from app import figures
from app.steps import backward, forward
from app.steps.context import TraceContext
from app.steps.kind import ChartFigure, Figure, StepKind
from app.words import t
from xt_core import names
from xt_core.trace import Record


def loss_entry(ctx: TraceContext, seq: int) -> dict:
    losses = ctx.trace[names.TOKEN_LOSS][seq]
    labels = ctx.predictions(seq)
    title = t(ctx.lang, "names-figure-loss-chart-title")
    fig = figures.loss_bars(losses, labels, ctx.trace.loss, title=title, lang=ctx.lang)
    value = t(ctx.lang, "names-figure-loss-value")
    return ctx.entry("loss.per_token", title, "loss", fig, ctx.table(losses, labels, [value]))


class LossChart(ChartFigure):
    def draw(
        self, ctx: TraceContext, seq: int, pos: int, cells: int, lang: str = "en"
    ) -> tuple[dict | None, list[str]]:
        return loss_entry(ctx, seq), []


def plan(ctx: TraceContext, record: Record) -> list[Figure]:
    if record.phase == "backward":
        return [*backward.plan(ctx, record), LossChart()]
    return [*forward.input_figures(ctx, record, skip=(names.TOKEN_LOSS,)), LossChart()]  # the mean's input: the chart


KIND = StepKind("the loss: per-token cross-entropy and its mean", lambda r: r.kind in ("token_loss", "mean"), plan)
