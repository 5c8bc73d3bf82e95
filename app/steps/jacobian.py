"""One softmax row's Jacobian J = diag(p) − p pᵀ and the chain-rule check, for the attention
softmax of a layer and head or for the output softmax."""

from __future__ import annotations

from app import figures
from app.figures.serialize import figure_json
from app.steps.context import TraceContext
from app.words import t
from xt_core.checks.jacobian import attention_jacobian, output_jacobian

DEFAULT_TOP_K = 10  # tokens the output softmax's Jacobian shows when the query names no top_k


def jacobian_view(ctx: TraceContext, layer: int | None, head: int, seq: int, pos: int, top_k: int) -> dict:
    """One softmax row's Jacobian J = diag(p) − p pᵀ and the chain-rule check
    J·dL/dp == recorded dL/dscores (attention, layer given) or dL/dlogits (layer None)."""
    trace, max_cells, lang = ctx.trace, ctx.settings.max_heatmap_cells, ctx.lang
    if layer is None:
        check = output_jacobian(trace, seq, pos, top_k=top_k)
        target = int(trace.targets[seq, pos])
        labels = [f"{ctx.vocab[i]}{' (target)' if i == target else ''}" for i in check.indices]
        where = t(lang, "names-jacobian-output-where", pos=pos, label=ctx.positions(seq)[pos])
        recorded_name, x_title = t(lang, "names-jacobian-recorded-logits"), t(lang, "names-axis-token")
        # p the output softmax of the logits z
        symbols = ("∂p[t,v]/∂z[t,w]", *(t(lang, "names-jacobian-token", symbol=s) for s in "vw"))
        extra = {
            "indices": check.indices.tolist(),
            "target": target,
            "note": f"Shown: the {top_k} most probable tokens and the target; the check covers the whole row.",
        }
    else:
        check = attention_jacobian(trace, layer, head, seq, pos)
        labels = ctx.positions(seq)[: pos + 1]
        where = t(lang, "names-jacobian-attention-where", layer=layer, head=head, query=ctx.positions(seq)[pos])
        recorded_name, x_title = t(lang, "names-jacobian-recorded-scores"), t(lang, "names-axis-key")
        # row i of head m: keys j, j′ of one query
        symbols = ("∂P[m,i,j]/∂S[m,i,j′]", *(t(lang, "names-jacobian-key", symbol=s) for s in ("j", "j′")))
        extra = {"note": f"Keys 0..{pos}: later keys are masked, their p is 0 and they take no part."}
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
