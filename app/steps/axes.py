"""The one place that decides what a tensor's axes are: which labels run along its rows and
columns, and their titles. Every picture of a tensor (a step's figures, the update's ΔW, the
bug lab's diff) asks here.

* a (V, C) parameter (the token embedding, an untied LM head): one row per vocabulary token;
* a Linear weight (in, out): input features down, output features across;
* an activation of one sequence (T, X): positions down; the vocabulary across for logits and probs;
* one head's (T, T) scores or probabilities: queries down, keys across; (T, hd): features across.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.steps.titles import local_name
from app.traces.context import TraceContext

VOCAB_ROWS = ("tok_embeddings", "output")  # (V, C) parameters
VOCAB_COLS = ("logits", "probs")  # (..., V) activations
# The symbols of the formulas (x, h, x′ the residual stream; n a norm's output; p, Wq, …), by name
# without "layers.{L}."; any other tensor is named by its last part (q, k_rot, scores, gate, …).
_VALUE_NAMES = {
    "probs": "p",
    "logits": "logit",
    "token_loss": "ℓ",
    "embedding": "x",
    "attention_residual": "h",
    "ffn_residual": "x′",
    "attention_norm.out": "n",
    "ffn_norm.out": "n",
    "norm.out": "n",
    "attention.out": "attention",
    "feed_forward.out": "feed-forward",
    "attention.probs": "p",
    **{f"attention.w{m}": f"W{m}" for m in "qkvo"},
    **{f"feed_forward.w{i}": f"W{i}" for i in "123"},
}


@dataclass(frozen=True)
class Axes:
    rows: list[str] | None  # labels down the y axis (None: plain indices)
    cols: list[str] | None  # labels across
    row_title: str
    col_title: str


def param_axes(ctx: TraceContext, name: str) -> Axes:
    """A 2-D parameter."""
    if name in VOCAB_ROWS:
        return Axes(ctx.vocab, None, "token", "feature")
    return Axes(None, None, "input feature", "output feature")


def activation_axes(ctx: TraceContext, name: str, seq: int) -> Axes:
    """A (T, X) activation or gradient of sequence `seq`."""
    cols = ctx.vocab if name in VOCAB_COLS else None
    return Axes(ctx.positions(seq), cols, "position", "token" if cols is not None else "feature")


def head_axes(ctx: TraceContext, shape: tuple[int, ...], seq: int) -> Axes:
    """One head of a (H, T, X) tensor of sequence `seq`: keys across for scores and probs
    (T × T), features for head outputs (T × hd)."""
    rows = ctx.positions(seq)
    square = shape[-1] == shape[-2] == ctx.T
    return Axes(rows, rows if square else None, "query", "key" if square else "feature")


def value_name(name: str, gradient: bool) -> str:
    """The short name of a tensor's entries on a colour bar or value axis: p, logit, dL/dp, …"""
    short = _VALUE_NAMES.get(local_name(name), name.rsplit(".", 1)[-1])
    return f"dL/d{short}" if gradient else short
