"""The walkthrough's structure and its words: the block diagram, one step per trace record,
each step's title, and what every recorded tensor is called in a figure's title. The words are
the catalogues' (app/words/locales/*/names.ftl), in the `lang` each function takes; xt_core's
table of recorded tensors gives each tensor's message id (its words_id)."""

from __future__ import annotations

import re

import xt_core
from app.spec.training import OPTIMIZER_LABELS
from app.words import DEFAULT, LANGUAGES, bundle, t
from xt_core import names
from xt_core.config import DEFAULT_FAMILY
from xt_core.trace import Record


def blocks(cfg: xt_core.Config, lang: str = "en") -> list[dict]:
    """The clickable block diagram, in model order."""
    embedding = "names-block-embedding-positions" if cfg.positions == "learned" else "names-block-embedding"
    out = [{"id": "embedding", "label": t(lang, embedding), "layer": None}]
    for L in range(cfg.n_layer):
        out.append({"id": f"layers.{L}.attention", "label": t(lang, "names-block-attention", layer=L), "layer": L})
        out.append({"id": f"layers.{L}.ffn", "label": t(lang, "names-block-ffn", layer=L), "layer": L})
    norm = "names-block-norm-layernorm" if cfg.norm_type == "layernorm" else "names-block-norm"
    out.append({"id": "norm", "label": t(lang, norm), "layer": None})
    out.append({"id": "head", "label": t(lang, "names-block-head"), "layer": None})
    out.append({"id": "loss", "label": t(lang, "names-block-loss"), "layer": None})
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
UPDATE_BLOCK = {"id": "update", "layer": None}


def update_block(lang: str = "en") -> dict:
    return {"id": UPDATE_BLOCK["id"], "label": t(lang, "names-block-update"), "layer": None}


def local_name(name: str) -> str:
    """ "layers.3.attention.q" -> "attention.q"; names outside a layer are unchanged."""
    return re.sub(r"^layers\.\d+\.", "", name)


# The message of what each parameter and the token ids hold, by name without "layers.{L}." (its
# $layer: the layer); a recorded tensor's is its row's (xt_core/recorded.py: words_id).
_INPUT_LABELS = {
    "tokens": "names-param-tokens-label",
    "targets": "names-param-targets-label",
    "tok_embeddings": "names-param-tok-embeddings-label",
    "attention_norm": "names-param-attention-norm-label",
    "attention.wq": "names-param-attention-wq-label",
    "attention.wk": "names-param-attention-wk-label",
    "attention.wv": "names-param-attention-wv-label",
    "attention.wo": "names-param-attention-wo-label",
    "attention.bq": "names-param-attention-bq-label",  # Qwen2's and GPT-2's
    "attention.bk": "names-param-attention-bk-label",
    "attention.bv": "names-param-attention-bv-label",
    "attention.q_norm": "names-param-attention-q-norm-label",  # Qwen3
    "attention.k_norm": "names-param-attention-k-norm-label",
    "ffn_norm": "names-param-ffn-norm-label",
    "feed_forward.w1": "names-param-feed-forward-w1-label",
    "feed_forward.w3": "names-param-feed-forward-w3-label",
    "feed_forward.w2": "names-param-feed-forward-w2-label",
    "norm": "names-param-norm-label",
    "output": "names-param-output-label",
    # GPT-2's (the gpt2 family): its norms' gains and W1 are worded by _FAMILY_INPUT_LABELS
    "pos_embeddings": "names-param-pos-embeddings-label",
    "attention_norm_bias": "names-param-attention-norm-bias-label",
    "attention.bo": "names-param-attention-bo-label",
    "ffn_norm_bias": "names-param-ffn-norm-bias-label",
    "feed_forward.b1": "names-param-feed-forward-b1-label",
    "feed_forward.b2": "names-param-feed-forward-b2-label",
    "norm_bias": "names-param-norm-bias-label",
}
_FAMILY_INPUT_LABELS = {  # a family's own message for a parameter name it shares with Llama
    "gpt2": {
        "attention_norm": "names-param-gpt2-attention-norm-label",
        "ffn_norm": "names-param-gpt2-ffn-norm-label",
        "feed_forward.w1": "names-param-gpt2-feed-forward-w1-label",
        "norm": "names-param-gpt2-norm-label",
    },
}
_NORM_PARAMS = {"attention_norm", "ffn_norm", "attention_norm_bias", "ffn_norm_bias"}  # per layer, no dot
_PER_LAYER_PARAMS = _NORM_PARAMS | {k for k in _INPUT_LABELS if "." in k}


def _label_id(name: str, family: str) -> tuple[str, bool] | None:
    """(the message of what `name` holds in the model family's words, whether it takes a layer),
    None for a name the table does not know."""
    recorded = names.lookup(name, family)
    if recorded is not None:
        return f"{recorded.words_id}-label", recorded.per_layer
    local = local_name(name)
    message = _FAMILY_INPUT_LABELS.get(family, {}).get(local) or _INPUT_LABELS.get(local)
    return (message, local in _PER_LAYER_PARAMS) if message else None


def tensor_label(name: str, lang: str = "en", family: str = DEFAULT_FAMILY) -> str:
    """A recorded tensor in words: "layers.1.attention.probs" -> "layer 1 attention
    probabilities, all heads". A name the table does not know is shown as it is."""
    found = _label_id(name, family)
    layer = re.match(r"^layers\.(\d+)\.", name)
    if found is None or found[1] != (layer is not None):
        return name
    return t(lang, found[0], layer=int(layer.group(1))) if layer else t(lang, found[0])


def output_title(name: str, lang: str = "en", family: str = DEFAULT_FAMILY) -> str:
    """What a forward op computes: "Layer 1 attention probabilities, all heads"."""
    label = tensor_label(name, lang, family)
    return label if label == name else label[:1].upper() + label[1:]  # an unknown name keeps its case


def one_head_title(title: str, head: int, lang: str = "en") -> str:
    """A grid's title for one of its heads: "…, all heads" -> "…, head 2"."""
    every = f", {t(lang, 'names-heads-all')}"
    if title.endswith(every):
        return f"{title.removesuffix(every)}, {t(lang, 'names-heads-one', head=head)}"
    return t(lang, "names-title-one-head", title=title, head=head)


def input_title(name: str, is_param: bool, lang: str = "en", family: str = DEFAULT_FAMILY) -> str:
    message = "names-input-param-title" if is_param else "names-input-title"
    return t(lang, message, label=tensor_label(name, lang, family))


def arriving_title(name: str, lang: str = "en", family: str = DEFAULT_FAMILY) -> str:
    """The gradient a backward op starts from: dL/d(its forward output)."""
    return t(lang, "names-arriving-title", label=tensor_label(name, lang, family))


def contribution_title(name: str, is_param: bool, lang: str = "en", family: str = DEFAULT_FAMILY) -> str:
    """What a backward op adds to the gradient of one of its inputs."""
    message = "names-contribution-param-title" if is_param else "names-contribution-title"
    return t(lang, message, label=tensor_label(name, lang, family))


def _op_title(name: str, lang: str, family: str = DEFAULT_FAMILY) -> str:
    recorded = names.lookup(name, family)
    return t(lang, f"{recorded.words_id}-title") if recorded else name


def about(name: str, lang: str = "en", family: str = DEFAULT_FAMILY) -> str | None:
    """What an explanation says a recorded tensor is ("queries: what each position is looking
    for"), None where the catalogue says nothing of it."""
    recorded = names.lookup(name, family)
    message = f"{recorded.words_id}-about" if recorded else None
    return t(lang, message) if message and bundle(lang if lang in LANGUAGES else DEFAULT).has_message(message) else None


def op_words(pattern: str, lang: str = "en", family: str = DEFAULT_FAMILY) -> str:
    """What the op making a recorded tensor computes, by its pattern ("layers.{L}.attention.probs")."""
    return t(lang, f"{names.entry(pattern, family).words_id}-title")


def _family(record) -> str:
    """The record's model family (a record of the bug lab's catalogue is a namespace without one: Llama's)."""
    return getattr(record, "family", DEFAULT_FAMILY)


_STEP_TITLES = {  # (in a layer, backward) -> its message
    (False, False): "names-step",
    (False, True): "names-step-backward",
    (True, False): "names-step-layer",
    (True, True): "names-step-layer-backward",
}


def title(record: Record, lang: str = "en") -> str:
    if record.phase == "update":
        return t(lang, "names-update-title", optimizer=OPTIMIZER_LABELS.get(record.kind, record.kind))
    message = _STEP_TITLES[(record.layer is not None, record.phase == "backward")]
    layer = {} if record.layer is None else {"layer": record.layer}
    return t(lang, message, op=_op_title(record.name, lang, _family(record)), **layer)


def step_summary(record: Record, lang: str = "en") -> dict:
    """One entry of the step list in POST /api/traces."""
    return {
        "index": record.index,
        "name": record.name,
        "phase": record.phase,
        "layer": record.layer,
        "title": title(record, lang),
        "block": block_of(record.name, _family(record)),
    }


def groups(cfg: xt_core.Config, has_update: bool, lang: str = "en") -> list[dict]:
    """The timeline's groups, in model order: the embedding, each layer (its forward and its
    backward steps), the output head with the loss, the update. The walk page folds a long
    walkthrough into these and jumps to a group and op."""
    out = [{"id": "embedding", "label": t(lang, "names-group-embedding"), "layer": None}]
    out += [
        {"id": f"layers.{L}", "label": t(lang, "names-group-layer", layer=L), "layer": L} for L in range(cfg.n_layer)
    ]
    out.append({"id": "output", "label": t(lang, "names-group-output"), "layer": None})
    if has_update:
        out.append(update_block(lang))
    return out


def group_of(record: Record) -> str:
    """The id of the record's group in groups()."""
    if record.layer is not None:
        return f"layers.{record.layer}"
    block = block_of(record.name, _family(record))
    return block if block in ("embedding", UPDATE_BLOCK["id"]) else "output"


def op_title(record: Record, lang: str = "en") -> str:
    """What the op computes, without its layer or direction: "Attention softmax over keys"."""
    if record.phase == "update":
        return title(record, lang)
    return _op_title(record.name, lang, _family(record))


def steps(trace: xt_core.Trace, lang: str = "en") -> list[dict]:
    """The step list of the trace summary: each step's summary, with where the timeline puts it
    (its group) and its op, by name ("attention.probs") and in words."""
    return [
        {**step_summary(r, lang), "group": group_of(r), "op": local_name(r.name), "op_title": op_title(r, lang)}
        for r in trace.records
    ]
