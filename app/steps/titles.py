"""The walkthrough's structure and its words: the block diagram, one step per trace record,
each step's title, and what every recorded tensor is called in a figure's title."""

from __future__ import annotations

import re

import xt_core
from app.spec.training import OPTIMIZER_LABELS
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


# What each recorded tensor and parameter holds, in words, keyed like _TITLES ({L}: the layer).
_TENSOR_LABELS = {
    "tokens": "input token ids",
    "targets": "target token ids",
    "tok_embeddings": "token embedding matrix",
    "embedding": "token embeddings",
    "attention_norm": "layer {L} attention RMSNorm gain",
    "attention_norm.out": "RMSNorm output of layer {L}, before attention",
    "attention.wq": "layer {L} query weights Wq",
    "attention.wk": "layer {L} key weights Wk",
    "attention.wv": "layer {L} value weights Wv",
    "attention.wo": "layer {L} attention output weights Wo",
    "attention.q": "layer {L} queries",
    "attention.k": "layer {L} keys",
    "attention.v": "layer {L} values",
    "attention.q_rot": "layer {L} queries after RoPE",
    "attention.k_rot": "layer {L} keys after RoPE",
    "attention.scores": "layer {L} attention scores, all heads",
    "attention.probs": "layer {L} attention probabilities, all heads",
    "attention.heads": "layer {L} attention outputs, all heads",
    "attention.concat": "layer {L} heads side by side",
    "attention.out": "layer {L} attention output",
    "attention_residual": "residual stream after layer {L} attention",
    "ffn_norm": "layer {L} feed-forward RMSNorm gain",
    "ffn_norm.out": "RMSNorm output of layer {L}, before the feed-forward",
    "feed_forward.w1": "layer {L} gate weights W1",
    "feed_forward.w3": "layer {L} up weights W3",
    "feed_forward.w2": "layer {L} down weights W2",
    "feed_forward.gate": "layer {L} gate projection",
    "feed_forward.up": "layer {L} up projection",
    "feed_forward.swiglu": "layer {L} SwiGLU activation",
    "feed_forward.out": "layer {L} feed-forward output",
    "ffn_residual": "residual stream after layer {L}",
    "norm": "final RMSNorm gain",
    "norm.out": "final RMSNorm output",
    "output": "LM head weights",
    "logits": "next-token logits",
    "probs": "next-token probabilities",
    "token_loss": "loss per position",
    "loss": "mean loss L",
}


def tensor_label(name: str) -> str:
    """A recorded tensor in words: "layers.1.attention.probs" -> "layer 1 attention
    probabilities, all heads". A name the table does not know is shown as it is."""
    label = _TENSOR_LABELS.get(local_name(name))
    layer = re.match(r"^layers\.(\d+)\.", name)
    if label is None or ("{L}" in label) != (layer is not None):
        return name
    return label.format(L=layer.group(1)) if layer else label


def output_title(name: str) -> str:
    """What a forward op computes: "Layer 1 attention probabilities, all heads"."""
    label = tensor_label(name)
    return label if label == name else label[:1].upper() + label[1:]  # an unknown name keeps its case


def one_head_title(title: str, head: int) -> str:
    """A grid's title for one of its heads: "…, all heads" -> "…, head 2"."""
    if title.endswith(", all heads"):
        return f"{title.removesuffix(', all heads')}, head {head}"
    return f"{title} — head {head}"


def input_title(name: str, is_param: bool) -> str:
    return f"Input: {tensor_label(name)}" + (" (a parameter)" if is_param else "")


def arriving_title(name: str) -> str:
    """The gradient a backward op starts from: dL/d(its forward output)."""
    return f"Gradient arriving at the {tensor_label(name)}"


def contribution_title(name: str, is_param: bool) -> str:
    """What a backward op adds to the gradient of one of its inputs."""
    if is_param:
        return f"Weight gradient from this op: {tensor_label(name)}"
    return f"This op's share of the gradient of the {tensor_label(name)}"


def title(record: Record) -> str:
    if record.phase == "update":
        return f"Parameter update: one {OPTIMIZER_LABELS.get(record.kind, record.kind)} step"
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


def groups(cfg: xt_core.Config, has_update: bool) -> list[dict]:
    """The timeline's groups, in model order: the embedding, each layer (its forward and its
    backward steps), the output head with the loss, the update. The walk page folds a long
    walkthrough into these and jumps to a group and op."""
    out = [{"id": "embedding", "label": "Embedding", "layer": None}]
    out += [{"id": f"layers.{L}", "label": f"Layer {L}", "layer": L} for L in range(cfg.n_layer)]
    out.append({"id": "output", "label": "Output and loss", "layer": None})
    if has_update:
        out.append({"id": UPDATE_BLOCK["id"], "label": UPDATE_BLOCK["label"], "layer": None})
    return out


def group_of(record: Record) -> str:
    """The id of the record's group in groups()."""
    if record.layer is not None:
        return f"layers.{record.layer}"
    block = block_of(record.name)
    return block if block in ("embedding", UPDATE_BLOCK["id"]) else "output"


def op_title(record: Record) -> str:
    """What the op computes, without its layer or direction: "Attention softmax over keys"."""
    if record.phase == "update":
        return title(record)
    return _TITLES.get(local_name(record.name), record.name)


def steps(trace: xt_core.Trace) -> list[dict]:
    """The step list of the trace summary: each step's summary, with where the timeline puts it
    (its group) and its op, by name ("attention.probs") and in words."""
    return [
        {**step_summary(r), "group": group_of(r), "op": local_name(r.name), "op_title": op_title(r)}
        for r in trace.records
    ]
