"""The answer to POST /api/traces: the trace's tokens, blocks, step list and training summary."""

from __future__ import annotations

from app.spec import spec_to_query
from app.steps import titles
from app.steps.context import TraceContext, in_language
from app.steps.nonfinite import first_nonfinite
from app.steps.update import training_summary


def trace_summary(ctx: TraceContext, lang: str = "en") -> dict:
    """The summary, its words in `lang`: the blocks, groups and step titles (app.steps.titles) and
    the training summary's words."""
    ctx = in_language(ctx, lang)
    spec, trace = ctx.spec, ctx.trace
    return {
        "id": spec.id,
        "loss": trace.loss,
        "spec": spec.canonical,
        "query": spec_to_query(spec.canonical),
        "config": trace.cfg.to_dict(),
        "dtype": spec.canonical["dtype"],  # a low precision's name (its arrays are float32: spec.dtype)
        "n_seq": ctx.n_seq,
        "T": ctx.T,
        "tokens": {
            "inputs": spec.inputs.tolist(),
            "targets": spec.targets.tolist(),
            "input_labels": [ctx.input_labels(s) for s in range(ctx.n_seq)],
            "target_labels": [ctx.target_labels(s) for s in range(ctx.n_seq)],
        },
        "blocks": titles.blocks(trace.cfg, lang) + ([titles.update_block(lang)] if trace.update else []),
        "steps": titles.steps(trace, lang),
        "groups": titles.groups(trace.cfg, has_update=trace.update is not None, lang=lang),
        "training": training_summary(ctx, lang),
        # where NaN/inf first appear (the page's divergence banner), or null
        "first_nonfinite": first_nonfinite(ctx, lang),
    }
