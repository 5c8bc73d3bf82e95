"""The walkthrough's structure: the block diagram, one step per trace record, and each step's title."""

from __future__ import annotations

import re

import xt_core
from xt_core.trace import Record

_LAYER_PART = re.compile(
    r"^layers\.(\d+)\.(attention|feed_forward|attention_norm|attention_residual|ffn_norm|ffn_residual)"
)


_ATTENTION_PARTS = ("attention", "attention_norm", "attention_residual")


def blocks(cfg: xt_core.Config) -> list[dict]:
    """The clickable block diagram, in model order."""
    out = [{"id": "embedding", "label": "Token embedding", "layer": None}]
    for L in range(cfg.n_layer):
        out.append({"id": f"layers.{L}.attention", "label": f"Layer {L} · attention", "layer": L})
        out.append({"id": f"layers.{L}.ffn", "label": f"Layer {L} · feed-forward", "layer": L})
    out.append({"id": "norm", "label": "Final RMSNorm", "layer": None})
    out.append({"id": "head", "label": "LM head (logits)", "layer": None})
    out.append({"id": "loss", "label": "Softmax and cross-entropy loss", "layer": None})
    return out


def block_of(name: str) -> str:
    """The block id a recorded tensor belongs to (see blocks())."""
    match = _LAYER_PART.match(name)
    if match:
        layer, part = match.groups()
        return f"layers.{layer}.{'attention' if part in _ATTENTION_PARTS else 'ffn'}"
    if name == "norm.out":
        return "norm"
    if name == "logits":
        return "head"
    if name in ("probs", "token_loss", "loss"):
        return "loss"
    if name == "update":
        return UPDATE_BLOCK["id"]
    return "embedding"


# The optimizer step of a training trace: one more block, after the loss (views add it).
UPDATE_BLOCK = {"id": "update", "label": "Optimizer update", "layer": None}


_OPTIMIZER_LABELS = {"sgd": "SGD", "adamw": "AdamW"}


# What each op computes, keyed by the tensor name with "layers.{L}." removed.
_TITLES = {
    "embedding": "Token embedding lookup",
    "attention_norm.out": "RMSNorm before attention",
    "attention.q": "Query projection q = n·Wq",
    "attention.k": "Key projection k = n·Wk",
    "attention.v": "Value projection v = n·Wv",
    "attention.q_rot": "RoPE rotates the queries",
    "attention.k_rot": "RoPE rotates the keys",
    "attention.scores": "Attention scores q·kᵀ/√hd, causal mask",
    "attention.probs": "Attention softmax over keys",
    "attention.heads": "Weighted sum of values, per head",
    "attention.concat": "Concatenate the heads",
    "attention.out": "Attention output projection ·Wo",
    "attention_residual": "Residual add h = x + attention",
    "ffn_norm.out": "RMSNorm before the feed-forward",
    "feed_forward.gate": "Gate projection ·W1",
    "feed_forward.up": "Up projection ·W3",
    "feed_forward.swiglu": "SwiGLU silu(gate) ⊙ up",
    "feed_forward.out": "Down projection ·W2",
    "ffn_residual": "Residual add x' = h + feed-forward",
    "norm.out": "Final RMSNorm",
    "logits": "Logits: LM head",
    "probs": "Output softmax: next-token probabilities",
    "token_loss": "Per-token loss −log p(target)",
    "loss": "Mean loss over all positions",
}


def local_name(name: str) -> str:
    """ "layers.3.attention.q" -> "attention.q"; names outside a layer are unchanged."""
    return re.sub(r"^layers\.\d+\.", "", name)


def title(record: Record) -> str:
    if record.phase == "update":
        return f"Parameter update: one {_OPTIMIZER_LABELS.get(record.kind, record.kind)} step"
    base = _TITLES.get(local_name(record.name), record.name)
    where = f"Layer {record.layer} · " if record.layer is not None else ""
    return f"{where}{base}" + (" — backward" if record.phase == "backward" else "")


def step_summary(record: Record) -> dict:
    """One entry of the step list in POST /api/traces."""
    return {
        "index": record.index,
        "name": record.name,
        "phase": record.phase,
        "layer": record.layer,
        "title": title(record),
        "block": block_of(record.name),
    }


def steps(trace: xt_core.Trace) -> list[dict]:
    return [step_summary(r) for r in trace.records]
