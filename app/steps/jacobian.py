"""One softmax row's Jacobian J = diag(p) − p pᵀ and the chain-rule check, for the attention
softmax of a layer and head or for the output softmax."""

from __future__ import annotations

from app import figures
from app.figures.serialize import figure_json
from app.steps.context import TraceContext, in_language
from app.steps.wording import t
from xt_core.checks.jacobian import attention_jacobian, output_jacobian

DEFAULT_TOP_K = 10  # tokens the output softmax's Jacobian shows when the query names no top_k


def jacobian_view(
    ctx: TraceContext, layer: int | None, head: int, seq: int, pos: int, top_k: int, lang: str = "en"
) -> dict:
    """One softmax row's Jacobian J = diag(p) − p pᵀ and the chain-rule check
    J·dL/dp == recorded dL/dscores (attention, layer given) or dL/dlogits (layer None)."""
    ctx = in_language(ctx, lang)
    max_cells = ctx.settings.max_heatmap_cells
    side = _output_row(ctx, seq, pos, top_k) if layer is None else _attention_row(ctx, layer, head, seq, pos)
    check, labels, where, recorded_name, x_title, symbols, extra = side
    figure = figures.jacobian_heatmap(
        check.jacobian,
        labels,
        title=t(lang, "names-jacobian-title", where=where),
        symbols=symbols,
        max_cells=max_cells,
        lang=lang,
    )
    vectors = figures.series_bars(
        labels,
        {t(lang, "names-jacobian-chain"): check.chain, recorded_name: check.recorded},
        title=t(lang, "names-jacobian-vectors-title", where=where),
        value_name=t(lang, "names-jacobian-gradient"),
        x_title=x_title,
    )
    return {
        "kind": "output" if layer is None else "attention",
        "layer": "output" if layer is None else layer,
        "head": None if layer is None else head,
        "seq": seq,
        "pos": pos,
        "labels": labels,
        "p": check.p,
        "dprobs": check.dprobs,
        "chain": check.chain,
        "recorded": check.recorded,
        "max_abs_error": check.max_abs_error,
        "max_rel_error": check.max_rel_error,
        "ok": check.ok,
        "sealed": False,  # a quiz's, before its answer: app.buglab.quiz.seal_jacobian
        "figure": figure_json(figure)[0],
        "vectors_figure": figure_json(vectors)[0],
        **extra,
    }


def _output_row(ctx: TraceContext, seq: int, pos: int, top_k: int) -> tuple:
    """The output softmax's row at `pos`: (check, labels, where, recorded name, x title, symbols, extra)."""
    lang = ctx.lang
    check = output_jacobian(ctx.trace, seq, pos, top_k=top_k)
    target = int(ctx.trace.targets[seq, pos])
    labels = [t(lang, "step-target-label", token=ctx.vocab[i]) if i == target else ctx.vocab[i] for i in check.indices]
    where = t(lang, "names-jacobian-output-where", pos=pos, label=ctx.positions(seq)[pos])
    # p the output softmax of the logits z
    symbols = ("∂p[t,v]/∂z[t,w]", *(t(lang, "names-jacobian-token", symbol=s) for s in "vw"))
    extra = {
        "indices": check.indices.tolist(),
        "target": target,
        "note": t(lang, "step-jacobian-output-note", count=top_k),
    }
    recorded_name, x_title = t(lang, "names-jacobian-recorded-logits"), t(lang, "names-axis-token")
    return check, labels, where, recorded_name, x_title, symbols, extra


def _attention_row(ctx: TraceContext, layer: int, head: int, seq: int, pos: int) -> tuple:
    """Head `head`'s attention softmax row at query `pos`: as _output_row."""
    lang = ctx.lang
    check = attention_jacobian(ctx.trace, layer, head, seq, pos)
    where = t(lang, "names-jacobian-attention-where", layer=layer, head=head, query=ctx.positions(seq)[pos])
    # row i of head m: keys j, j′ of one query
    symbols = ("∂P[m,i,j]/∂S[m,i,j′]", *(t(lang, "names-jacobian-key", symbol=s) for s in ("j", "j′")))
    extra = {"note": t(lang, "step-jacobian-attention-note", pos=pos)}
    recorded_name, x_title = t(lang, "names-jacobian-recorded-scores"), t(lang, "names-axis-key")
    return check, ctx.positions(seq)[: pos + 1], where, recorded_name, x_title, symbols, extra
