"""Each step's plain-text explanation: what happens and why, with the classic mistakes the
hand-written C++ backward pass this project started from warns about quoted where they apply
(its variable names beside ours: docs/notation.md). The words are the steps' catalogue's
(app/words/locales/<lang>/steps-explain.ftl: one whole message per op and phase, the sentences
it holds where they apply); numbers come from the trace (app.steps.measured), never from the text."""

from __future__ import annotations

import xt_core
from app.steps import measured, measured_parts
from app.steps.titles import about, local_name
from app.steps.wording import num, t
from xt_core import names
from xt_core.trace import Record

# The seed's C++ backward pass as the English explanations name it: the glossary
# (app/steps/glossary.py) finds the phrase in them.
CPP = "the hand-written C++ backward pass xt started from"

# The message of each kind of op, by phase (a loss-phase step reads as forward).
_FORWARD = {
    "embedding": "step-explain-forward-embedding",
    "rmsnorm": "step-explain-forward-rmsnorm",
    "linear": "step-explain-forward-linear",
    "rope": "step-explain-forward-rope",
    "scores": "step-explain-forward-scores",
    "softmax_attention": "step-explain-forward-softmax-attention",
    "softmax_output": "step-explain-forward-softmax-output",
    "attend": "step-explain-forward-attend",
    "merge_heads": "step-explain-forward-merge-heads",
    "residual": "step-explain-forward-residual",
    "swiglu": "step-explain-forward-swiglu",
    "unembed": "step-explain-forward-unembed",
    "token_loss": "step-explain-forward-token-loss",
    "mean": "step-explain-forward-mean",
    # GPT-2's and Qwen's ops
    "layernorm": "step-explain-forward-layernorm",
    "positions": "step-explain-forward-positions",
    "linear_bias": "step-explain-forward-linear-bias",
    "gelu_tanh": "step-explain-forward-gelu-tanh",
    "gelu": "step-explain-forward-gelu",
    "bias": "step-explain-forward-bias",
    "qk_norm": "step-explain-forward-qk-norm",
}
_BACKWARD = {
    "embedding": "step-explain-backward-embedding",
    "rmsnorm": "step-explain-backward-rmsnorm",
    "linear": "step-explain-backward-linear",
    "rope": "step-explain-backward-rope",
    "scores": "step-explain-backward-scores",
    "softmax_attention": "step-explain-backward-softmax-attention",
    "softmax_output": "step-explain-backward-softmax-output",
    "attend": "step-explain-backward-attend",
    "merge_heads": "step-explain-backward-merge-heads",
    "residual": "step-explain-backward-residual",
    "swiglu": "step-explain-backward-swiglu",
    "unembed": "step-explain-backward-unembed",
    "token_loss": "step-explain-backward-token-loss",
    "mean": "step-explain-backward-mean",
    "layernorm": "step-explain-backward-layernorm",
    "positions": "step-explain-backward-positions",
    "linear_bias": "step-explain-backward-linear-bias",
    "gelu_tanh": "step-explain-backward-gelu-tanh",
    "gelu": "step-explain-backward-gelu",
    "bias": "step-explain-backward-bias",
    "qk_norm": "step-explain-backward-qk-norm",
}
# A family's own message where Llama's would say what it lacks (RoPE, RMSNorm, SwiGLU's gate).
_FAMILY_MESSAGES = {
    "gpt2": {
        "step-explain-forward-embedding": "step-explain-gpt2-forward-embedding",
        "step-explain-forward-scores": "step-explain-gpt2-forward-scores",
        "step-explain-backward-scores": "step-explain-gpt2-backward-scores",
        "step-explain-backward-residual": "step-explain-gpt2-backward-residual",
        "step-stream-attention": "step-gpt2-stream-attention",
        "step-stream-ffn": "step-gpt2-stream-ffn",
        "step-norm-other-attention": "step-gpt2-norm-other-attention",
        "step-norm-other-ffn": "step-gpt2-norm-other-ffn",
        "step-role-feed-forward-up": "step-gpt2-role-feed-forward-up",
        "step-extra-ffn-in": "step-gpt2-extra-ffn-in",
    },
}
# The residual adds in symbols, by family: (the sum, its output, its skip).
_FAMILY_RESIDUAL = {
    "gpt2": {
        "attention_residual": ("step-residual-sum-gpt2-attention", "h", "x"),
        "ffn_residual": ("step-residual-sum-gpt2-ffn", "x′", "h"),
    },
}

# What a linear map computes, by the tensor it makes (xt_core.names' local name).
_ROLE = {
    "attention.q": "step-role-attention-q",
    "attention.k": "step-role-attention-k",
    "attention.v": "step-role-attention-v",
    "attention.out": "step-role-attention-out",
    "feed_forward.gate": "step-role-feed-forward-gate",
    "feed_forward.up": "step-role-feed-forward-up",
    "feed_forward.out": "step-role-feed-forward-out",
}
# What reads a norm's output, by the norm's output.
_READER = {
    "attention_norm.out": "step-reader-attention",
    "ffn_norm.out": "step-reader-ffn",
    "norm.out": "step-reader-head",
}
# The stream around each norm: the normalized copy feeds one reader, the stream goes on (or ends).
_STREAM = {
    "attention_norm.out": "step-stream-attention",
    "ffn_norm.out": "step-stream-ffn",
    "norm.out": "step-stream-final",
}
# The norm's other gradient contribution (the skip's), by the norm's output.
_NORM_OTHER = {
    "attention_norm.out": "step-norm-other-attention",
    "ffn_norm.out": "step-norm-other-ffn",
    "norm.out": "step-norm-other-final",
}
# What a linear's backward adds, by (role, block) of the tensor it makes (xt_core.names).
_LINEAR_BACKWARD_EXTRA = {
    ("branch out", "attention"): "step-extra-attention-out",
    ("projection", "attention"): "step-extra-attention-in",
    ("projection", "ffn"): "step-extra-ffn-in",
}
_TIED = {"forward": "step-tied-forward", "unembed": "step-tied-unembed", "embedding": "step-tied-embedding"}
_RESIDUAL = {
    "attention_residual": ("step-residual-sum-attention", "h", "x"),
    "ffn_residual": ("step-residual-sum-ffn", "x′", "h"),
}


def _explain_kind(record: Record) -> str:
    if record.kind == "softmax":
        return "softmax_output" if names.is_output_softmax(record.name) else "softmax_attention"
    return record.kind


def _gqa(record: Record, cfg: xt_core.Config, lang: str) -> str:
    if cfg.n_kv_head >= cfg.n_head:
        return ""
    if record.phase != "backward":
        return t(lang, "step-gqa-forward", group=cfg.kv_group)
    shared = "step-gqa-backward-key" if record.kind == "scores" else "step-gqa-backward-value"
    return t(lang, shared, group=cfg.kv_group)


def _tied(record: Record, cfg: xt_core.Config, lang: str) -> str:
    if not cfg.tie_embeddings:
        return ""
    message = _TIED["forward"] if record.phase == "forward" else _TIED.get(record.kind)
    return t(lang, message) if message else ""


def _in_family(message: str | None, family: str) -> str | None:
    """`message`, or the model family's own in its place."""
    return _FAMILY_MESSAGES.get(family, {}).get(message, message)


def _about(lang: str, messages: dict, name: str, recorded, roles: tuple, otherwise: str, family: str) -> str:
    """What a linear computes, or what reads a norm (`messages`, by the tensor's local name); a
    tensor these messages do not name: what the names' catalogue says of it (a new family's rows)."""
    if name in messages:
        return t(lang, _in_family(messages[name], family))
    said = about(recorded.name(0), lang, family) if recorded is not None and recorded.role in roles else None
    return said or t(lang, otherwise)


def _optional(lang: str, message: str | None, **values) -> str:
    return t(lang, message, **values) if message else ""


def _context(record: Record, trace: xt_core.Trace, judge: bool, lang: str) -> dict:
    cfg, name = trace.cfg, local_name(record.name)
    skip, branch = (record.inputs + ("", ""))[:2]
    recorded = names.lookup(record.name, cfg.family)
    role, block = (recorded.role, recorded.block) if recorded else ("", "")
    residuals = _FAMILY_RESIDUAL.get(cfg.family, _RESIDUAL)
    residual_sum, out_symbol, skip_symbol = residuals.get(name, ("step-residual-sum-other", "out", "skip"))
    other = _in_family(_NORM_OTHER.get(name), cfg.family) if record.kind in ("rmsnorm", "layernorm") else None
    return {
        "role": _about(lang, _ROLE, name, recorded, ("projection", "branch out"), "step-role-other", cfg.family),
        "reader": _about(lang, _READER, name, recorded, ("norm out",), "step-reader-head", cfg.family),
        "hd": cfg.head_dim,
        "theta": num(cfg.rope_theta, "g", lang),
        "stream": _optional(lang, _in_family(_STREAM.get(name), cfg.family)),
        "other": _optional(lang, other, recorded=record.inputs[0]),
        "gqa": _gqa(record, cfg, lang),
        "tied": _tied(record, cfg, lang),
        "weight": t(lang, "step-weight-tied" if cfg.tie_embeddings else "step-weight-untied"),
        "sum": t(lang, residual_sum),
        "out_symbol": out_symbol,
        "skip_symbol": skip_symbol,
        "skip": skip,
        "branch": branch,
        "norm": "attention_norm" if name == "attention_residual" else "ffn_norm",
        "extra": _optional(lang, _in_family(_LINEAR_BACKWARD_EXTRA.get((role, block)), cfg.family)),
        "eps": num(cfg.norm_eps, "g", lang),
        **measured.sentences(_explain_kind(record), record, trace, judge, lang),
        **measured_parts.sentences(record, trace, judge, lang),
    }


def explanation(record: Record, trace: xt_core.Trace, judge: bool = True, lang: str = "en") -> str:
    """One paragraph of plain text in `lang`: what this step does and why, its numbers from
    `trace`; judge False (a sealed quiz's step): its numbers, never a verdict on them."""
    table = _BACKWARD if record.phase == "backward" else _FORWARD
    message = _in_family(table.get(_explain_kind(record)), trace.cfg.family)
    if message is None:
        return t(lang, "step-explain-unknown", kind=record.kind, phase=record.phase)
    context = _context(record, trace, judge, lang)
    if record.kind == "linear_bias" and record.phase == "backward":  # a linear's backward, and its bias's
        context["linear"] = t(lang, _BACKWARD["linear"], **context)
    return t(lang, message, **context)


def induction_note(ctx, record: Record, lang: str = "en") -> str:
    """On a checkpoint whose training measured an induction head (xt_core.lab.probes: the head with the
    best score on repeated random tokens), its layer's attention-probability step names it."""
    found = ctx.measured()
    if record.phase != "forward" or "induction_layer" not in found:
        return ""
    layer, head = found["induction_layer"], found["induction_head"]
    if record.name != names.entry("layers.{L}.attention.probs").name(layer):
        return ""
    repeat = measured.repeat_sentence(ctx.trace.tokens, ctx.trace[record.name], head, lang)
    score = num(found["induction_score"], ".2f", lang)
    return t(lang, "step-induction", layer=layer, head=head, score=score, repeat=repeat)
