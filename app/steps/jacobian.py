"""One softmax row's Jacobian J = diag(p) − p pᵀ and the chain-rule check, for the attention
softmax of a layer and head or for the output softmax."""

from __future__ import annotations

from app import figures
from app.figures.serialize import figure_json
from app.steps.context import TraceContext
from app.steps.wording import t
from xt_core.checks.jacobian import attention_jacobian, output_jacobian

DEFAULT_TOP_K = 10  # tokens the output softmax's Jacobian shows when the query names no top_k


def jacobian_view(
    ctx: TraceContext, layer: int | None, head: int, seq: int, pos: int, top_k: int, lang: str = "en"
) -> dict:
    """One softmax row's Jacobian J = diag(p) − p pᵀ and the chain-rule check
    J·dL/dp == recorded dL/dscores (attention, layer given) or dL/dlogits (layer None)."""
    trace, max_cells = ctx.trace, ctx.settings.max_heatmap_cells
    if layer is None:
        check = output_jacobian(trace, seq, pos, top_k=top_k)
        target = int(trace.targets[seq, pos])
        labels = [
            t(lang, "step-target-label", token=ctx.vocab[i]) if i == target else ctx.vocab[i] for i in check.indices
        ]
        where = f"output softmax, position {pos} ({ctx.positions(seq)[pos]})"
        recorded_name, x_title = "dL/dlogits recorded", "token"
        symbols = ("∂p[t,v]/∂z[t,w]", "token v", "token w")  # p the output softmax of the logits z
        extra = {
            "indices": check.indices.tolist(),
            "target": target,
            "note": t(lang, "step-jacobian-output-note", count=top_k),
        }
    else:
        check = attention_jacobian(trace, layer, head, seq, pos)
        labels = ctx.positions(seq)[: pos + 1]
        where = f"layer {layer}, head {head}, query {ctx.positions(seq)[pos]}"
        recorded_name, x_title = "dL/dscores recorded", "key"
        symbols = ("∂P[m,i,j]/∂S[m,i,j′]", "key j", "key j′")  # row i of head m: keys j, j′ of one query
        extra = {"note": t(lang, "step-jacobian-attention-note", pos=pos)}
    figure = figures.jacobian_heatmap(
        check.jacobian,
        labels,
        title=f"Softmax Jacobian J = diag(p) − ppᵀ (symmetric: Jᵀ = J): {where}",
        symbols=symbols,
        max_cells=max_cells,
    )
    vectors = figures.series_bars(
        labels,
        {"J·dL/dp (chain rule)": check.chain, recorded_name: check.recorded},
        title=f"J·dL/dp against the recorded gradient: {where}",
        value_name="gradient",
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
