"""Checkpoints: xt's own .safetensors / .npz (config and tokenizer in the metadata), and
importers for llama2.c legacy `.bin` files and Hugging Face Llama safetensors.

Nothing here ever unpickles: .npz loads with allow_pickle=False, safetensors holds raw
arrays only. A wrong-shaped, truncated or corrupt file raises CheckpointError naming what
is wrong.
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from xt_core.config import Config
from xt_core.model import param_shapes
from xt_core.tokenizers import ByteTokenizer, CharTokenizer

FORMAT = "xt-checkpoint-1"


class CheckpointError(ValueError):
    """The file is not a checkpoint xt can load; the message says why."""


@dataclass
class Checkpoint:
    cfg: Config
    params: dict[str, np.ndarray]
    tokenizer: ByteTokenizer | CharTokenizer | None = None
    meta: dict = field(default_factory=dict)  # free-form: how it was trained, its loss ...


def tokenizer_from_dict(data: dict | None):
    if not data:
        return None
    if data.get("name") == "byte":
        return ByteTokenizer()
    if data.get("name") == "char" and isinstance(data.get("chars"), str):
        return CharTokenizer(data["chars"])
    raise CheckpointError(f"unknown tokenizer in checkpoint metadata: {data!r}")


def _validated(cfg_data, arrays: dict, tokenizer, meta, source: str) -> Checkpoint:
    try:
        cfg = Config.from_dict(cfg_data)
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"{source}: bad config in metadata: {exc}") from None
    expected = param_shapes(cfg)
    missing = sorted(set(expected) - set(arrays))
    extra = sorted(set(arrays) - set(expected))
    if missing or extra:
        raise CheckpointError(f"{source}: tensors do not match the config: missing {missing}, unexpected {extra}")
    params = {}
    for name, shape in expected.items():
        a = np.asarray(arrays[name])
        if a.shape != shape:
            raise CheckpointError(f"{source}: tensor {name} has shape {a.shape}, the config needs {shape}")
        if a.dtype not in (np.float32, np.float64):
            raise CheckpointError(f"{source}: tensor {name} has dtype {a.dtype}; float32 or float64 expected")
        if not np.all(np.isfinite(a)):
            raise CheckpointError(f"{source}: tensor {name} holds NaN or inf")
        params[name] = np.ascontiguousarray(a)
    if tokenizer is not None and tokenizer.vocab_size > cfg.vocab_size:
        raise CheckpointError(f"{source}: tokenizer has {tokenizer.vocab_size} tokens, vocab_size is {cfg.vocab_size}")
    return Checkpoint(cfg, params, tokenizer, meta or {})


# ---------------------------------------------------------------------- xt's own formats


def _metadata(ckpt: Checkpoint) -> dict[str, str]:
    return {
        "format": FORMAT,
        "config": json.dumps(ckpt.cfg.to_dict()),
        "tokenizer": json.dumps(ckpt.tokenizer.to_dict() if ckpt.tokenizer else None),
        "meta": json.dumps(ckpt.meta),
    }


def save(path, ckpt: Checkpoint) -> Path:
    """Writes `.safetensors` or `.npz` by suffix."""
    path = Path(path)
    arrays = {k: np.ascontiguousarray(v) for k, v in ckpt.params.items()}
    if path.suffix == ".safetensors":
        from safetensors.numpy import save_file

        save_file(arrays, str(path), metadata=_metadata(ckpt))
    elif path.suffix == ".npz":
        extras = {f"__{k}__": np.array(v) for k, v in _metadata(ckpt).items()}
        with open(path, "wb") as f:
            np.savez(f, **arrays, **extras)
    else:
        raise CheckpointError(f"unknown checkpoint suffix {path.suffix!r}: use .safetensors or .npz")
    return path


def _parse_metadata(meta: dict, source: str):
    if meta.get("format") != FORMAT:
        raise CheckpointError(f"{source}: not an xt checkpoint (metadata format is {meta.get('format')!r})")
    try:
        cfg = json.loads(meta["config"])
        tok = json.loads(meta.get("tokenizer", "null"))
        extra = json.loads(meta.get("meta", "{}"))
    except (KeyError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{source}: unreadable metadata ({exc})") from None
    if not isinstance(cfg, dict):
        raise CheckpointError(f"{source}: config metadata is not an object")
    return cfg, tokenizer_from_dict(tok), extra


def load(path) -> Checkpoint:
    """Loads an xt `.safetensors` or `.npz` checkpoint."""
    path = Path(path)
    source = path.name
    if path.suffix == ".safetensors":
        from safetensors import SafetensorError
        from safetensors.numpy import load_file

        try:
            from safetensors import safe_open

            with safe_open(str(path), framework="numpy") as f:
                meta = f.metadata() or {}
            arrays = load_file(str(path))
        except (SafetensorError, OSError, ValueError) as exc:
            raise CheckpointError(f"{source}: not a readable safetensors file ({exc})") from None
        cfg, tok, extra = _parse_metadata(meta, source)
        return _validated(cfg, arrays, tok, extra, source)
    if path.suffix == ".npz":
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
            raise CheckpointError(f"{source}: not a readable .npz file ({exc})") from None
        meta = {}
        for key in ("format", "config", "tokenizer", "meta"):
            value = arrays.pop(f"__{key}__", None)
            if value is not None:
                meta[key] = str(value)
        cfg, tok, extra = _parse_metadata(meta, source)
        return _validated(cfg, arrays, tok, extra, source)
    raise CheckpointError(f"{source}: unknown checkpoint suffix {path.suffix!r}: use .safetensors or .npz")


# ---------------------------------------------------------------------- llama2.c legacy .bin

_LLAMA2C_ORDER = [  # (name template, stacked over layers, stored (out, in) -> transpose)
    ("attention_norm", True, False),
    ("attention.wq", True, True),
    ("attention.wk", True, True),
    ("attention.wv", True, True),
    ("attention.wo", True, True),
    ("ffn_norm", True, False),
    ("feed_forward.w1", True, True),
    ("feed_forward.w2", True, True),
    ("feed_forward.w3", True, True),
]


def import_llama2c(path, seq_len: int | None = None) -> Checkpoint:
    """llama2.c legacy format: 7 int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads,
    vocab_size, seq_len), then float32 weights: embeddings, then each kind stacked over
    layers as PyTorch stores Linear weights, (out, in); final norm; two unused RoPE tables
    (seq_len * head_size / 2 each); the classifier when vocab_size < 0 (untied)."""
    path = Path(path)
    raw = path.read_bytes()
    if len(raw) < 28:
        raise CheckpointError(f"{path.name}: {len(raw)} bytes, too short for the 28-byte llama2.c header")
    dim, hidden, n_layers, n_heads, n_kv, vocab, max_seq = (int(v) for v in np.frombuffer(raw[:28], dtype="<i4"))
    tied = vocab > 0
    vocab = abs(vocab)
    try:
        cfg = Config(
            vocab_size=vocab,
            n_layer=n_layers,
            n_head=n_heads,
            n_kv_head=n_kv,
            n_embd=dim,
            ffn_hidden=hidden,
            seq_len=max_seq,
            tie_embeddings=tied,
        )
    except ValueError as exc:
        raise CheckpointError(
            f"{path.name}: header {dim, hidden, n_layers, n_heads, n_kv, vocab, max_seq} is not a valid config: {exc}"
        ) from None
    if (len(raw) - 28) % 4:
        raise CheckpointError(f"{path.name}: weights are not a whole number of float32 values")
    data = np.frombuffer(raw, dtype="<f4", offset=28)
    shapes = param_shapes(cfg)
    hd = cfg.head_dim
    sizes = [cfg.vocab_size * dim]
    sizes += [n_layers * int(np.prod(shapes[f"layers.0.{n}"])) for n, _, _ in _LLAMA2C_ORDER]
    sizes += [dim, max_seq * hd // 2, max_seq * hd // 2]
    sizes += [] if tied else [vocab * dim]
    if data.size != sum(sizes):
        raise CheckpointError(
            f"{path.name}: holds {data.size} float32 values after the header; its header needs {sum(sizes)} "
            f"({'truncated' if data.size < sum(sizes) else 'trailing data'})"
        )
    offset = 0

    def take(n):
        nonlocal offset
        chunk = data[offset : offset + n]
        offset += n
        return chunk

    params = {"tok_embeddings": take(sizes[0]).reshape(vocab, dim)}
    for name, _, transpose in _LLAMA2C_ORDER:
        shape = shapes[f"layers.0.{name}"]
        stored = shape[::-1] if transpose else shape
        stack = take(n_layers * int(np.prod(shape))).reshape(n_layers, *stored)
        for L in range(n_layers):
            params[f"layers.{L}.{name}"] = stack[L].T if transpose else stack[L]
    params["norm"] = take(dim)
    take(max_seq * hd)  # the two legacy RoPE tables: xt computes its own
    if not tied:
        params["output"] = take(vocab * dim).reshape(vocab, dim)
    params = {k: np.array(v, dtype=np.float32) for k, v in params.items()}
    return _validated(cfg.to_dict(), params, None, {"imported_from": f"llama2.c {path.name}"}, path.name)


def export_llama2c(path, cfg: Config, params: dict) -> Path:
    """The legacy llama2.c layout (the inverse of import_llama2c); used by the tests."""
    path = Path(path)
    hd = cfg.head_dim
    header = np.array(
        [
            cfg.n_embd,
            cfg.ffn_hidden,
            cfg.n_layer,
            cfg.n_head,
            cfg.n_kv_head,
            cfg.vocab_size if cfg.tie_embeddings else -cfg.vocab_size,
            cfg.seq_len,
        ],
        dtype="<i4",
    )
    parts = [params["tok_embeddings"]]
    for name, _, transpose in _LLAMA2C_ORDER:
        parts += [
            params[f"layers.{L}.{name}"].T if transpose else params[f"layers.{L}.{name}"] for L in range(cfg.n_layer)
        ]
    parts += [params["norm"], np.zeros(cfg.seq_len * hd)]
    if not cfg.tie_embeddings:
        parts.append(params["output"])
    with open(path, "wb") as f:
        f.write(header.tobytes())
        for p in parts:
            f.write(np.ascontiguousarray(p, dtype="<f4").tobytes())
    return path


# ---------------------------------------------------------------------- Hugging Face Llama

_HF_LAYER = {
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


def _rotate_half_to_interleaved(w: np.ndarray, n_heads: int) -> np.ndarray:
    """HF stores q/k rows per head as [first halves of the pairs | second halves] (its RoPE
    rotates halves); xt's RoPE rotates interleaved pairs (2i, 2i+1). Undo the permutation."""
    out, inp = w.shape
    hd = out // n_heads
    return w.reshape(n_heads, 2, hd // 2, inp).transpose(0, 2, 1, 3).reshape(out, inp)


def _interleaved_to_rotate_half(w: np.ndarray, n_heads: int) -> np.ndarray:
    out, inp = w.shape
    hd = out // n_heads
    return w.reshape(n_heads, hd // 2, 2, inp).transpose(0, 2, 1, 3).reshape(out, inp)


def import_hf(directory) -> Checkpoint:
    """A Hugging Face Llama directory: config.json and model.safetensors (one file)."""
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    directory = Path(directory)
    try:
        hf = json.loads((directory / "config.json").read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{directory.name}: no readable config.json ({exc})") from None
    try:
        cfg = Config(
            vocab_size=hf["vocab_size"],
            n_layer=hf["num_hidden_layers"],
            n_head=hf["num_attention_heads"],
            n_kv_head=hf.get("num_key_value_heads", hf["num_attention_heads"]),
            n_embd=hf["hidden_size"],
            ffn_hidden=hf["intermediate_size"],
            seq_len=hf.get("max_position_embeddings", 2048),
            tie_embeddings=bool(hf.get("tie_word_embeddings", False)),
            rope_theta=float(hf.get("rope_theta", 10000.0)),
            norm_eps=float(hf.get("rms_norm_eps", 1e-5)),
        )
    except KeyError as exc:
        raise CheckpointError(f"{directory.name}/config.json lacks {exc}") from None
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"{directory.name}/config.json is not a valid config: {exc}") from None
    try:
        tensors = load_file(str(directory / "model.safetensors"))
    except (SafetensorError, OSError, ValueError) as exc:
        raise CheckpointError(f"{directory.name}/model.safetensors is not readable ({exc})") from None

    def get(key):
        if key not in tensors:
            raise CheckpointError(f"{directory.name}/model.safetensors lacks tensor {key}")
        return np.asarray(tensors[key], dtype=np.float32)

    params = {"tok_embeddings": get("model.embed_tokens.weight"), "norm": get("model.norm.weight")}
    for L in range(cfg.n_layer):
        for name, hf_name in _HF_LAYER.items():
            w = get(f"model.layers.{L}.{hf_name}")
            if name == "attention.wq":
                w = _rotate_half_to_interleaved(w, cfg.n_head)
            elif name == "attention.wk":
                w = _rotate_half_to_interleaved(w, cfg.n_kv_head)
            params[f"layers.{L}.{name}"] = w.T if w.ndim == 2 else w
    if not cfg.tie_embeddings:
        params["output"] = get("lm_head.weight")
    params = {k: np.ascontiguousarray(v) for k, v in params.items()}
    return _validated(cfg.to_dict(), params, None, {"imported_from": f"huggingface {directory.name}"}, directory.name)


def export_hf(directory, cfg: Config, params: dict) -> Path:
    """The Hugging Face Llama layout (the inverse of import_hf); used by the tests."""
    from safetensors.numpy import save_file

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    tensors = {"model.embed_tokens.weight": params["tok_embeddings"], "model.norm.weight": params["norm"]}
    for L in range(cfg.n_layer):
        for name, hf_name in _HF_LAYER.items():
            w = params[f"layers.{L}.{name}"]
            w = w.T if w.ndim == 2 else w
            if name == "attention.wq":
                w = _interleaved_to_rotate_half(w, cfg.n_head)
            elif name == "attention.wk":
                w = _interleaved_to_rotate_half(w, cfg.n_kv_head)
            tensors[f"model.layers.{L}.{hf_name}"] = np.ascontiguousarray(w, dtype=np.float32)
    if not cfg.tie_embeddings:
        tensors["lm_head.weight"] = params["output"]
    save_file(
        {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in tensors.items()}, str(directory / "model.safetensors")
    )
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "vocab_size": cfg.vocab_size,
        "hidden_size": cfg.n_embd,
        "intermediate_size": cfg.ffn_hidden,
        "num_hidden_layers": cfg.n_layer,
        "num_attention_heads": cfg.n_head,
        "num_key_value_heads": cfg.n_kv_head,
        "max_position_embeddings": cfg.seq_len,
        "rms_norm_eps": cfg.norm_eps,
        "rope_theta": cfg.rope_theta,
        "tie_word_embeddings": cfg.tie_embeddings,
        "hidden_act": "silu",
    }
    (directory / "config.json").write_text(json.dumps(config, indent=2))
    return directory
