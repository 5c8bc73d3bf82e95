"""GPT-2's files: its tensor names, shared by the two formats that store them, and the Hugging
Face GPT2LMHeadModel directory (config.json `model_type: gpt2`, model.safetensors or shards).
nanoGPT named its modules as GPT-2's (nanogpt.py reads its ckpt.pt through the same table).

GPT-2 stores one fused attention projection, c_attn: (C, 3C) columns [q | k | v] and a (3C,) bias;
xt's gpt2 family splits it at import into Wq, Wk, Wv and bq, bk, bv (xt_core/families/gpt2.py says
why). Orientation: HF's GPT-2 layers are Conv1D, whose weight is stored (in, out), xt's own layout,
so nothing is transposed; nanoGPT's are nn.Linear, stored (out, in), which its reader transposes
before this table cuts c_attn. Dropout (attn_pdrop, resid_pdrop, embd_pdrop) is read and not
applied: xt shows the deterministic step, the model as `model.eval()` computes it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np

from xt_core.checkpoint import hf, hf_config
from xt_core.checkpoint.common import (
    Checkpoint,
    CheckpointError,
    Header,
    Limits,
    check_count,
    check_finite,
    check_names,
    config_from_fields,
    short,
)
from xt_core.checkpoint.safetensors_file import read_tensor
from xt_core.config import Config
from xt_core.model import param_shapes

# GPT-2's buffers, not parameters: the causal mask (attn.bias, (1, 1, n_ctx, n_ctx)), attn.masked_bias
BUFFERS = re.compile(r"transformer\.h\.\d+\.attn\.(masked_)?bias")
_TOP = {
    "transformer.wte.weight": ("tok_embeddings",),
    "transformer.wpe.weight": ("pos_embeddings",),
    "transformer.ln_f.weight": ("norm",),
    "transformer.ln_f.bias": ("norm_bias",),
    "lm_head.weight": ("output",),
}
_LAYER = {  # under transformer.h.{L}. -> under layers.{L}.; c_attn holds three of xt's parameters
    "ln_1.weight": ("attention_norm",),
    "ln_1.bias": ("attention_norm_bias",),
    "attn.c_attn.weight": ("attention.wq", "attention.wk", "attention.wv"),
    "attn.c_attn.bias": ("attention.bq", "attention.bk", "attention.bv"),
    "attn.c_proj.weight": ("attention.wo",),
    "attn.c_proj.bias": ("attention.bo",),
    "ln_2.weight": ("ffn_norm",),
    "ln_2.bias": ("ffn_norm_bias",),
    "mlp.c_fc.weight": ("feed_forward.w1",),
    "mlp.c_fc.bias": ("feed_forward.b1",),
    "mlp.c_proj.weight": ("feed_forward.w2",),
    "mlp.c_proj.bias": ("feed_forward.b2",),
}


def tensor_names(cfg: Config) -> dict[str, tuple[str, ...]]:
    """GPT-2's tensor name -> the xt parameters it holds, for the tensors this config has."""
    shapes = param_shapes(cfg)
    names = {name: xt for name, xt in _TOP.items() if xt[0] in shapes}
    for L in range(cfg.n_layer):
        for local, xt in _LAYER.items():
            if xt[0] in {n.removeprefix(f"layers.{L}.") for n in shapes if n.startswith(f"layers.{L}.")}:
                names[f"transformer.h.{L}.{local}"] = tuple(f"layers.{L}.{p}" for p in xt)
    return names


def stored_shape(cfg: Config, xt: tuple[str, ...]) -> tuple[int, ...]:
    """The (in, out) shape of the GPT-2 tensor holding `xt`: c_attn's columns side by side."""
    shapes = param_shapes(cfg)
    first = shapes[xt[0]]
    return (*first[:-1], sum(shapes[name][-1] for name in xt))


def to_params(cfg: Config, names: dict[str, tuple[str, ...]], read: Callable[[str], np.ndarray]) -> dict:
    """xt's parameters from GPT-2's tensors, each read(name) in (in, out) layout; c_attn cut in three."""
    shapes, params = param_shapes(cfg), {}
    for name, xt in names.items():
        value = read(name)
        edges = np.cumsum([shapes[p][-1] for p in xt])[:-1]
        for part, piece in zip(xt, np.split(value, edges, axis=-1), strict=True):
            params[part] = np.ascontiguousarray(piece)
    return params


def canonical(name: str) -> str:
    """The original GPT-2 files name their tensors without "transformer." (h.0.ln_1.weight, wte.weight)."""
    return name if name.startswith(("transformer.", "lm_head.")) else f"transformer.{name}"


# --------------------------------------------------------------------------- HF config.json

COMPUTED = {  # config.json key -> Config field
    "vocab_size": "vocab_size",
    "n_embd": "n_embd",
    "n_layer": "n_layer",
    "n_head": "n_head",
    "n_positions": "seq_len",
    "n_inner": "ffn_hidden",  # null: 4 n_embd
    "layer_norm_epsilon": "norm_eps",
    "tie_word_embeddings": "tie_embeddings",
    "activation_function": "activation",
}
ACTIVATIONS = {"gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "gelu": "gelu"}
IGNORED = hf_config.IGNORED | {
    "attn_pdrop",  # dropout: xt's step is the deterministic one (model.eval())
    "embd_pdrop",
    "resid_pdrop",
    "summary_activation",  # the sequence-summary head of GPT2DoubleHeadsModel, not the LM
    "summary_first_dropout",
    "summary_proj_to_labels",
    "summary_type",
    "summary_use_proj",
    "task_specific_params",
    "reorder_and_upcast_attn",  # float32 accumulation inside attention: the same math
    "n_ctx",  # the old name of n_positions (checked equal below)
}
FIXED = {  # key -> (the only values xt computes, what xt computes instead)
    "model_type": ((lambda v: v == "gpt2"), 'a GPT-2 model ("gpt2")'),
    "scale_attn_weights": ((lambda v: v is True), "scores scaled by 1/sqrt(head_dim)"),
    "scale_attn_by_inverse_layer_idx": ((lambda v: v is False), "scores not scaled by the layer's index"),
    "add_cross_attention": ((lambda v: v is False), "a decoder without cross-attention"),
}
REFUSED = {key: f"xt computes only {what}" for key, (_, what) in FIXED.items()}
REQUIRED = ("vocab_size", "n_embd", "n_layer", "n_head", "n_positions")


def config_fields(data, source: str) -> dict:
    """xt Config fields (family gpt2) from a GPT-2 config.json; refuses what xt would not compute."""
    if not isinstance(data, dict):
        raise CheckpointError(f"{source}: config.json is not an object")
    for key, value in data.items():
        if key in FIXED and not FIXED[key][0](value):
            raise CheckpointError(f"{source}: config.json {key} = {short(value)}: {REFUSED[key]}")
        if key not in IGNORED and key not in COMPUTED and key not in FIXED:
            raise CheckpointError(
                f"{source}: config.json {key} = {short(value)}: unknown key; it may change what the model "
                "computes, so xt does not import it"
            )
    missing = [key for key in REQUIRED if key not in data]
    if missing:
        raise CheckpointError(f"{source}: config.json lacks {', '.join(missing)}")
    if data.get("n_ctx", data["n_positions"]) != data["n_positions"]:
        raise CheckpointError(f"{source}: config.json n_ctx = {short(data['n_ctx'])} differs from n_positions")
    activation = data.get("activation_function", "gelu_new")
    if activation not in ACTIVATIONS:
        raise CheckpointError(
            f"{source}: config.json activation_function = {short(activation)}: xt computes GELU, "
            f"as {', '.join(ACTIVATIONS)}"
        )
    values = {COMPUTED[k]: v for k, v in data.items() if k in COMPUTED and v is not None}
    values["activation"] = ACTIVATIONS[activation]
    values.setdefault("ffn_hidden", 4 * data["n_embd"] if isinstance(data["n_embd"], int) else data["n_embd"])
    values.setdefault("tie_embeddings", True)
    values.setdefault("norm_eps", 1e-5)
    return {"family": "gpt2", "n_kv_head": values.get("n_head"), **values}


# --------------------------------------------------------------------------- the HF directory


def import_hf_gpt2(directory, dtype=None, limits: Limits | None = None) -> Checkpoint:
    """A Hugging Face GPT2LMHeadModel directory as an xt checkpoint of the gpt2 family (dtype as
    hf.import_hf: None keeps float64 files float64, else float32)."""
    directory = Path(directory)
    source = directory.name
    fields = config_fields(hf.read_json(directory / "config.json", source), source)
    cfg = config_from_fields(fields, source, limits, part="config.json", names={"norm_eps": "layer_norm_epsilon"})
    weight_map = hf.weight_map_of(directory, source)
    if weight_map is not None:
        check_count(cfg, len(weight_map), source)
    entries = {canonical(name): entry for name, entry in hf.tensor_entries(directory, weight_map, source).items()}
    names = tensor_names(cfg)
    held = [n for n in entries if not BUFFERS.fullmatch(n) and not (cfg.tie_embeddings and n == "lm_head.weight")]
    check_names(names, held, source)
    for name, xt in names.items():
        if entries[name][1].shape != stored_shape(cfg, xt):
            raise CheckpointError(
                f"{source}: tensor {name} has shape {entries[name][1].shape}, config.json needs {stored_shape(cfg, xt)}"
            )
    if dtype is None:
        dtype = np.float64 if any(entries[n][1].dtype == "F64" for n in names) else np.float32

    def read(name: str) -> np.ndarray:
        path, entry = entries[name]
        with open(path, "rb") as f:
            return check_finite(name, read_tensor(f, entry, dtype, source, name), source)

    return Checkpoint(cfg, to_params(cfg, names, read), None, {"imported_from": f"huggingface {source}"})


def hf_gpt2_header(directory, limits: Limits | None = None) -> Header:
    """The GPT-2 reader of the Hugging Face row (hf_directory.py): float32, with its tokenizer.json
    when xt can label it (GPT-2's byte-level BPE)."""
    ckpt = import_hf_gpt2(directory, dtype="float32", limits=limits)
    ckpt.tokenizer = hf.hf_tokenizer(Path(directory), ckpt.cfg)
    return Header.holding(ckpt)
