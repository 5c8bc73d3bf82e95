"""The output softmax's backward: the usual backward figures, then the identity that makes the
softmax + cross-entropy pair cheap, dL/dlogits = (p − onehot)/N, checked at one position."""

from __future__ import annotations

import numpy as np

from app import figures
from app.steps import backward
from app.steps.axes import value_name
from app.steps.context import TraceContext
from app.steps.kind import ChartFigure, Figure, StepKind
from app.steps.wording import num, t
from xt_core import names
from xt_core.checks.jacobian import top_tokens
from xt_core.checks.tolerances import SOFTMAX_IDENTITY
from xt_core.trace import Record


def identity_entry(ctx: TraceContext, seq: int, pos: int, k: int = 10, lang: str = "en") -> tuple[dict, float]:
    """The output softmax + cross-entropy identity dL/dlogits = (p − onehot)/N at one
    position, with numbers; and the largest deviation over every position."""
    trace = ctx.trace
    p = np.asarray(trace[names.OUTPUT_PROBS][seq, pos], dtype=np.float64)
    target = int(trace.targets[seq, pos])
    N = trace.targets.size
    onehot = np.zeros_like(p)
    onehot[target] = 1.0
    expected = (p - onehot) / N
    recorded = np.asarray(trace.grad(names.LOGITS)[seq, pos], dtype=np.float64)
    idx = top_tokens(p, target, k)
    labels = [t(lang, "step-target-label", token=ctx.vocab[i]) if i == target else ctx.vocab[i] for i in idx]
    recorded_name = t(lang, "step-identity-recorded")
    token, next_token = ctx.input_labels(seq)[pos], ctx.target_labels(seq)[pos]
    title = t(lang, "names-identity-title", pos=pos, token=token, target=next_token, n=N)
    fig = figures.series_bars(
        labels,
        {recorded_name: recorded[idx], "(p − onehot)/N": expected[idx]},
        title=title,
        value_name=value_name(names.LOGITS, True, lang),
        x_title=t(lang, "names-axis-token"),
    )
    columns = ["p", "onehot", "(p − onehot)/N", recorded_name]
    matrix = np.stack([p[idx], onehot[idx], expected[idx], recorded[idx]], axis=1)
    error = trace.logits_identity_error()
    notes = [
        t(lang, "step-identity-largest", positions=N, tokens=p.shape[0], error=num(error, ".3g", lang)),
        t(lang, "step-identity-shown", count=min(k, p.shape[0])),
    ]
    return ctx.entry("identity", title, "check", fig, ctx.table(matrix, labels, columns, lang), notes), error


class SoftmaxIdentity(ChartFigure):
    def draw(
        self, ctx: TraceContext, seq: int, pos: int, cells: int, lang: str = "en"
    ) -> tuple[dict | None, list[str]]:
        trace = ctx.trace
        entry, error = identity_entry(ctx, seq, pos, lang=lang)
        scale = float(np.max(np.abs(trace[names.OUTPUT_PROBS]))) / trace.targets.size
        if not np.isfinite(error):
            return entry, [t(lang, "step-identity-not-finite")]
        if not error <= SOFTMAX_IDENTITY.of(ctx.spec.canonical["dtype"]) * max(scale, 1e-30):
            return entry, [t(lang, "step-identity-deviates", error=num(error, ".3g", lang))]
        return entry, []


def plan(ctx: TraceContext, record: Record) -> list[Figure]:
    return [*backward.plan(ctx, record), SoftmaxIdentity()]


KIND = StepKind(
    "the output softmax, backward: (p − onehot)/N",
    lambda r: names.is_output_softmax(r.name) and r.phase == "backward",
    plan,
    reads_pos=True,  # the identity check's position
)
