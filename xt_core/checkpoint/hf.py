"""Hugging Face Llama, Qwen2/2.5 and Qwen3 directories: config.json (hf_config.py) and the
weights in model.safetensors, or in shards listed by model.safetensors.index.json. Tensors may be
float32, float64, float16 or bfloat16.

HF stores Linear weights (out, in) and q/k rows per head as [first halves of the RoPE
pairs | second halves] (its RoPE rotates halves); xt stores (in, out) and rotates
interleaved pairs (2i, 2i+1), so import transposes and undoes that permutation. What lies along
those rows is permuted alike: Qwen2's q and k biases (per head) and Qwen3's q and k norm gains
(one head wide: its RMSNorm's mean is over the head, so permuting its features with the gain
changes nothing else). v's bias, like v's rows, is not rotated and stays as it is.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import numpy as np

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
from xt_core.checkpoint.hf_config import config_fields
from xt_core.checkpoint.safetensors_file import Entry, read_header, read_tensor
from xt_core.config import Config
from xt_core.model import FLOAT_DTYPES, param_shapes

log = logging.getLogger("xt.models")

MAX_JSON_BYTES = 10 << 20  # config.json and the shard index: a few kB in practice
IGNORABLE = re.compile(r"model\.layers\.\d+\.self_attn\.rotary_emb\.inv_freq")  # older writers kept RoPE's table

_LAYER = {
    "attention_norm": "input_layernorm.weight",
    "attention.wq": "self_attn.q_proj.weight",
    "attention.wk": "self_attn.k_proj.weight",
    "attention.wv": "self_attn.v_proj.weight",
    "attention.wo": "self_attn.o_proj.weight",
    "ffn_norm": "post_attention_layernorm.weight",
    "feed_forward.w1": "mlp.gate_proj.weight",
    "feed_forward.w3": "mlp.up_proj.weight",
    "feed_forward.w2": "mlp.down_proj.weight",
}
_LAYER |= {  # Qwen2's q/k/v biases, Qwen3's QK-norm gains (where the config has them)
    "attention.bq": "self_attn.q_proj.bias",
    "attention.bk": "self_attn.k_proj.bias",
    "attention.bv": "self_attn.v_proj.bias",
    "attention.q_norm": "self_attn.q_norm.weight",
    "attention.k_norm": "self_attn.k_norm.weight",
}
_ROTATED = ("attention.wq", "attention.wk", "attention.bq", "attention.bk", "attention.q_norm", "attention.k_norm")
_TOP = {"tok_embeddings": "model.embed_tokens.weight", "norm": "model.norm.weight", "output": "lm_head.weight"}


def hf_name(name: str) -> str:
    """xt's parameter name -> the HF tensor name (layers.3.attention.wq -> model.layers.3.self_attn.q_proj.weight)."""
    if name in _TOP:
        return _TOP[name]
    _, layer, kind = name.split(".", 2)
    return f"model.layers.{layer}.{_LAYER[kind]}"


def to_hf(name: str, w: np.ndarray, cfg: Config) -> np.ndarray:
    """One xt parameter in HF's layout: layer Linears transposed to (out, in), q/k rows per
    head in rotate-half order (and what lies along them: q/k biases, q/k norm gains).
    Embeddings (V, C) and norms are stored alike."""
    if not name.startswith("layers."):
        return w
    w = w.T if w.ndim == 2 else w
    heads = _rotated_heads(name, cfg)
    return w if heads is None else interleaved_to_rotate_half(w, heads)


def from_hf(name: str, w: np.ndarray, cfg: Config) -> np.ndarray:
    """The inverse of to_hf: the HF tensor of xt's parameter `name` in xt's layout."""
    if not name.startswith("layers."):
        return w
    heads = _rotated_heads(name, cfg)
    w = w if heads is None else rotate_half_to_interleaved(w, heads)
    return w.T if w.ndim == 2 else w


def _rotated_heads(name: str, cfg: Config) -> int | None:
    """How many heads the rows (entries) of a RoPE-rotated parameter hold; None: not rotated.
    A QK-norm gain is one head wide, shared by all."""
    kind = name.split(".", 2)[-1]
    if kind not in _ROTATED:
        return None
    return 1 if kind.endswith("_norm") else cfg.n_head if kind[-1] == "q" else cfg.n_kv_head


def rotate_half_to_interleaved(w: np.ndarray, n_heads: int) -> np.ndarray:
    """(out, ...) rows per head [x_0..x_{hd/2-1} | y_0..y_{hd/2-1}] -> [x_0, y_0, x_1, y_1, ...]."""
    hd = w.shape[0] // n_heads
    return w.reshape(n_heads, 2, hd // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def interleaved_to_rotate_half(w: np.ndarray, n_heads: int) -> np.ndarray:
    hd = w.shape[0] // n_heads
    return w.reshape(n_heads, hd // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def read_json(path: Path, source: str):
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise CheckpointError(f"{source}: no readable {path.name} ({short(str(exc), 120)})") from None
    if size > MAX_JSON_BYTES:
        raise CheckpointError(f"{source}: {path.name} is {size} bytes, over {MAX_JSON_BYTES >> 20} MB")
    try:
        return json.loads(path.read_bytes())
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise CheckpointError(f"{source}: no readable {path.name} ({short(str(exc), 120)})") from None


def _is_shard_name(file) -> bool:
    """A plain file name in the directory: no path, not hidden."""
    return isinstance(file, str) and file.endswith(".safetensors") and Path(file).name == file and file[0] != "."


def weight_map_of(directory: Path, source: str) -> dict[str, str] | None:
    """Tensor name -> the shard in `directory` holding it; None without an index (one file)."""
    index = directory / "model.safetensors.index.json"
    if not index.exists():
        return None
    data = read_json(index, source)
    weight_map = data.get("weight_map") if isinstance(data, dict) else None
    if not isinstance(weight_map, dict) or not weight_map:
        raise CheckpointError(f"{source}: {index.name} has no weight_map object naming the tensors")
    for name, file in weight_map.items():
        if not _is_shard_name(file):
            raise CheckpointError(
                f"{source}: {index.name} maps {short(name)} to {short(file)}, not a shard in the directory"
            )
    return weight_map


def tensor_entries(directory: Path, weight_map: dict[str, str] | None, source: str) -> dict[str, tuple[Path, Entry]]:
    if weight_map is None:
        path = directory / "model.safetensors"
        if not path.exists():
            raise CheckpointError(f"{source}: neither model.safetensors nor model.safetensors.index.json")
        return {name: (path, e) for name, e in read_header(path, f"{source}/{path.name}").entries.items()}
    headers = {
        file: read_header(directory / file, f"{source}/{file}").entries for file in sorted(set(weight_map.values()))
    }
    missing = [name for name, file in weight_map.items() if name not in headers[file]]
    if missing:
        raise CheckpointError(f"{source}: the index puts {missing[0]} in {weight_map[missing[0]]}, which lacks it")
    return {name: (directory / file, headers[file][name]) for name, file in weight_map.items()}


def read_config(directory: Path, limits: Limits | None = None) -> Config:
    """config.json as xt's Config, key by key (hf_config.config_fields; its row's config step)."""
    source = directory.name
    fields = config_fields(read_json(directory / "config.json", source), source)
    return config_from_fields(fields, source, limits, part="config.json", names={"norm_eps": "rms_norm_eps"})


def import_hf(directory, dtype=None, limits: Limits | None = None) -> Checkpoint:
    """A Hugging Face Llama directory as an xt checkpoint. dtype: float32 or float64 (None:
    float64 when the file holds float64 tensors, else float32; bf16/f16 widen exactly).
    `limits(cfg)` runs right after config.json is parsed, before any tensor header is read."""
    directory = Path(directory)
    source = directory.name
    if dtype is not None and np.dtype(dtype) not in FLOAT_DTYPES:
        raise ValueError(f"dtype must be float32, float64 or None, got {dtype!r}")
    cfg = read_config(directory, limits)
    weight_map = weight_map_of(directory, source)
    if (
        weight_map is not None
    ):  # the index alone says how many tensors there are: refuse a lying config before any shard
        check_count(cfg, len(weight_map), source)
    entries = tensor_entries(directory, weight_map, source)
    check_count(cfg, len(entries), source)
    expected = {hf_name(name): name for name in param_shapes(cfg)}
    check_names(expected, [n for n in entries if not IGNORABLE.fullmatch(n)], source)
    _check_headers(cfg, expected, entries, source)
    if dtype is None:
        dtype = np.float64 if any(entries[n][1].dtype == "F64" for n in expected) else np.float32
    params = {}
    for name, xt in expected.items():
        path, entry = entries[name]
        with open(path, "rb") as f:
            w = check_finite(name, read_tensor(f, entry, dtype, source, name), source)
        params[xt] = np.ascontiguousarray(from_hf(xt, w, cfg))
    return Checkpoint(cfg, params, None, {"imported_from": f"huggingface {source}"})


def checkpoint_header(directory, limits: Limits | None = None) -> Header:
    """The Hugging Face row of xt_core.checkpoint.formats: the directory read whole as float32,
    with its tokenizer.json when xt can label it (hf_tokenizer)."""
    ckpt = import_hf(directory, dtype="float32", limits=limits)
    ckpt.tokenizer = hf_tokenizer(Path(directory), ckpt.cfg)
    return Header.holding(ckpt)


def hf_tokenizer(directory: Path, cfg: Config):
    """A directory's tokenizer.json when it is byte-level BPE (GPT-2 style: SmolLM, Llama 3),
    the kind xt labels; None otherwise (the model then takes token ids)."""
    path = directory / "tokenizer.json"
    if not path.is_file():
        return None
    try:
        from tokenizers import Tokenizer

        from xt_core.text.bpe import BPETokenizer

        backend = Tokenizer.from_file(str(path))
        tokenizer = BPETokenizer(backend)
        byte_level = "ByteLevel" in type(backend.decoder).__name__ or '"ByteLevel"' in backend.to_str()[:4096]
    except Exception as exc:  # the tokenizers library's own errors carry no common type
        log.warning("%s: tokenizer.json not read (%s): token ids only", directory.name, exc)
        return None
    if not byte_level or tokenizer.vocab_size > cfg.vocab_size:
        log.warning("%s: tokenizer.json is not byte-level BPE within the vocabulary: token ids only", directory.name)
        return None
    return tokenizer


def _check_headers(cfg: Config, expected: dict[str, str], entries: dict, source: str) -> None:
    shapes = param_shapes(cfg)
    for name, xt in expected.items():
        needed = shapes[xt][::-1] if xt.startswith("layers.") else shapes[xt]  # layer Linears: (out, in)
        if entries[name][1].shape != needed:
            hint = " (does config.json's head_dim match?)" if ".self_attn." in name else ""
            raise CheckpointError(
                f"{source}: tensor {name} has shape {entries[name][1].shape}, config.json needs {needed}{hint}"
            )


def export_hf(directory, cfg: Config, params: dict) -> Path:
    """The layout `LlamaForCausalLM.save_pretrained` writes (transformers 5: rope_parameters),
    in the parameters' dtype; the inverse of import_hf."""
    from safetensors.numpy import save_file

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    dtype = np.dtype(params["tok_embeddings"].dtype)
    tensors = {}
    for name, value in params.items():
        tensors[hf_name(name)] = np.ascontiguousarray(to_hf(name, np.asarray(value), cfg), dtype=dtype)
    save_file(tensors, str(directory / "model.safetensors"), metadata={"format": "pt"})
    (directory / "config.json").write_text(json.dumps(hf_config(cfg, dtype.name), indent=2, sort_keys=True))
    return directory


def hf_config(cfg: Config, dtype: str = "float32") -> dict:
    """config.json as transformers 5 writes it for this model: a Llama's, or with Qwen2's q/k/v
    biases a Qwen2's, with Qwen3's QK-norm a Qwen3's (no HF model type has both)."""
    config = _llama_config(cfg, dtype)
    if not (cfg.qkv_bias or cfg.qk_norm):
        return config
    if cfg.qkv_bias and cfg.qk_norm:
        raise ValueError("qkv_bias and qk_norm together: no Hugging Face model type computes both")
    qwen = "qwen2" if cfg.qkv_bias else "qwen3"
    for key in ("mlp_bias", "pretraining_tp") + (("attention_bias",) if qwen == "qwen2" else ()):
        del config[key]  # Llama's own keys
    config |= {"architectures": [f"{qwen.capitalize()}ForCausalLM"], "model_type": qwen, "use_sliding_window": False}
    return config


def _llama_config(cfg: Config, dtype: str) -> dict:
    return {
        "architectures": ["LlamaForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": 1,
        "dtype": dtype,
        "eos_token_id": 2,
        "head_dim": cfg.head_dim,
        "hidden_act": "silu",
        "hidden_size": cfg.n_embd,
        "initializer_range": 0.02,
        "intermediate_size": cfg.ffn_hidden,
        "max_position_embeddings": cfg.seq_len,
        "mlp_bias": False,
        "model_type": "llama",
        "num_attention_heads": cfg.n_head,
        "num_hidden_layers": cfg.n_layer,
        "num_key_value_heads": cfg.n_kv_head,
        "pad_token_id": None,
        "pretraining_tp": 1,
        "rms_norm_eps": cfg.norm_eps,
        "rope_parameters": {"rope_theta": cfg.rope_theta, "rope_type": "default"},
        "tie_word_embeddings": cfg.tie_embeddings,
        "use_cache": True,
        "vocab_size": cfg.vocab_size,
    }
