"""The walkthrough's structure and its words: the block diagram, one step per trace record,
each step's title, and what every recorded tensor is called in a figure's title."""

from __future__ import annotations

import re

import xt_core
from app.spec.training import OPTIMIZER_LABELS
from xt_core import names
from xt_core.config import DEFAULT_FAMILY
from xt_core.trace import Record


def blocks(cfg: xt_core.Config) -> list[dict]:
    """The clickable block diagram, in model order."""
    embedding = "Token and position embeddings" if cfg.positions == "learned" else "Token embedding"
    out = [{"id": "embedding", "label": embedding, "layer": None}]
    for L in range(cfg.n_layer):
        out.append({"id": f"layers.{L}.attention", "label": f"Layer {L} · attention", "layer": L})
        out.append({"id": f"layers.{L}.ffn", "label": f"Layer {L} · feed-forward", "layer": L})
    out.append(
        {"id": "norm", "label": "Final LayerNorm" if cfg.norm_type == "layernorm" else "Final RMSNorm", "layer": None}
    )
    out.append({"id": "head", "label": "LM head (logits)", "layer": None})
    out.append({"id": "loss", "label": "Softmax and cross-entropy loss", "layer": None})
    return out


def block_of(name: str, family: str = DEFAULT_FAMILY) -> str:
    """The block id a recorded tensor of the model family belongs to (see blocks())."""
    if name == "update":
        return UPDATE_BLOCK["id"]
    recorded = names.lookup(name, family)
    if recorded is None:
        return "embedding"
    if recorded.per_layer:
        return f"{name[: -len(recorded.local)]}{recorded.block}"
    return recorded.block


# The optimizer step of a training trace: one more block, after the loss (views add it).
UPDATE_BLOCK = {"id": "update", "label": "Optimizer update", "layer": None}


def local_name(name: str) -> str:
    """ "layers.3.attention.q" -> "attention.q"; names outside a layer are unchanged."""
    return re.sub(r"^layers\.\d+\.", "", name)


# What each parameter and the token ids hold, in words, by name without "layers.{L}." ({L}: the
# layer); the recorded tensors' words are in xt_core.names.
_INPUT_LABELS = {
    "tokens": "input token ids",
    "targets": "target token ids",
    "tok_embeddings": "token embedding matrix",
    "attention_norm": "layer {L} attention RMSNorm gain",
    "attention.wq": "layer {L} query weights Wq",
    "attention.wk": "layer {L} key weights Wk",
    "attention.wv": "layer {L} value weights Wv",
    "attention.wo": "layer {L} attention output weights Wo",
    "ffn_norm": "layer {L} feed-forward RMSNorm gain",
    "feed_forward.w1": "layer {L} gate weights W1",
    "feed_forward.w3": "layer {L} up weights W3",
    "feed_forward.w2": "layer {L} down weights W2",
    "norm": "final RMSNorm gain",
    "output": "LM head weights",
    # GPT-2's (the gpt2 family): its norms' gains keep the words above
    "pos_embeddings": "position embedding matrix",
    "attention_norm_bias": "layer {L} attention LayerNorm bias",
    "attention.bq": "layer {L} query bias bq",
    "attention.bk": "layer {L} key bias bk",
    "attention.bv": "layer {L} value bias bv",
    "attention.bo": "layer {L} attention output bias bo",
    "ffn_norm_bias": "layer {L} feed-forward LayerNorm bias",
    "feed_forward.b1": "layer {L} up bias b1",
    "feed_forward.b2": "layer {L} down bias b2",
    "norm_bias": "final LayerNorm bias",
}
_FAMILY_INPUT_LABELS = {  # a family's own words for a parameter name it shares with Llama
    "gpt2": {
        "attention_norm": "layer {L} attention LayerNorm gain",
        "ffn_norm": "layer {L} feed-forward LayerNorm gain",
        "feed_forward.w1": "layer {L} up weights W1",
        "norm": "final LayerNorm gain",
    },
}


def _label(name: str, family: str) -> str | None:
    recorded = names.lookup(name, family)
    if recorded:
        return recorded.label
    local = local_name(name)
    return _FAMILY_INPUT_LABELS.get(family, {}).get(local) or _INPUT_LABELS.get(local)


def tensor_label(name: str, family: str = DEFAULT_FAMILY) -> str:
    """A recorded tensor in words: "layers.1.attention.probs" -> "layer 1 attention
    probabilities, all heads". A name the table does not know is shown as it is."""
    label = _label(name, family)
    layer = re.match(r"^layers\.(\d+)\.", name)
    if label is None or ("{L}" in label) != (layer is not None):
        return name
    return label.format(L=layer.group(1)) if layer else label


def output_title(name: str, family: str = DEFAULT_FAMILY) -> str:
    """What a forward op computes: "Layer 1 attention probabilities, all heads"."""
    label = tensor_label(name, family)
    return label if label == name else label[:1].upper() + label[1:]  # an unknown name keeps its case


def one_head_title(title: str, head: int) -> str:
    """A grid's title for one of its heads: "…, all heads" -> "…, head 2"."""
    if title.endswith(", all heads"):
        return f"{title.removesuffix(', all heads')}, head {head}"
    return f"{title} — head {head}"


def input_title(name: str, is_param: bool, family: str = DEFAULT_FAMILY) -> str:
    return f"Input: {tensor_label(name, family)}" + (" (a parameter)" if is_param else "")


def arriving_title(name: str, family: str = DEFAULT_FAMILY) -> str:
    """The gradient a backward op starts from: dL/d(its forward output)."""
    return f"Gradient arriving at the {tensor_label(name, family)}"


def contribution_title(name: str, is_param: bool, family: str = DEFAULT_FAMILY) -> str:
    """What a backward op adds to the gradient of one of its inputs."""
    if is_param:
        return f"Weight gradient from this op: {tensor_label(name, family)}"
    return f"This op's share of the gradient of the {tensor_label(name, family)}"


def _op_title(name: str, family: str = DEFAULT_FAMILY) -> str:
    recorded = names.lookup(name, family)
    return recorded.title if recorded else name


def _family(record) -> str:
    """The record's model family (a record of the bug lab's catalogue is a namespace without one: Llama's)."""
    return getattr(record, "family", DEFAULT_FAMILY)


def title(record: Record) -> str:
    if record.phase == "update":
        return f"Parameter update: one {OPTIMIZER_LABELS.get(record.kind, record.kind)} step"
    base = _op_title(record.name, _family(record))
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
        "block": block_of(record.name, _family(record)),
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
    block = block_of(record.name, _family(record))
    return block if block in ("embedding", UPDATE_BLOCK["id"]) else "output"


def op_title(record: Record) -> str:
    """What the op computes, without its layer or direction: "Attention softmax over keys"."""
    if record.phase == "update":
        return title(record)
    return _op_title(record.name, _family(record))


def steps(trace: xt_core.Trace) -> list[dict]:
    """The step list of the trace summary: each step's summary, with where the timeline puts it
    (its group) and its op, by name ("attention.probs") and in words."""
    return [
        {**step_summary(r), "group": group_of(r), "op": local_name(r.name), "op_title": op_title(r)}
        for r in trace.records
    ]
