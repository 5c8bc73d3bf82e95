"""llama2.c's legacy `.bin`: 7 int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads,
vocab_size, seq_len), then float32 weights: embeddings, then each kind stacked over layers
as PyTorch stores Linear weights, (out, in); final norm; two unused RoPE tables (seq_len *
head_size / 2 each); the classifier when vocab_size < 0 (untied).

The header alone says how many floats must follow, so a lying header is refused from the
file's size before anything is read or allocated.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from xt_core.checkpoint.common import Checkpoint, CheckpointError, Header, Limits, check_finite, config_from_fields
from xt_core.config import Config
from xt_core.model import param_shapes

HEADER = struct.Struct("<7i")

_ORDER = [  # (name, stored (out, in) -> transpose), each stacked over layers
    ("attention_norm", False),
    ("attention.wq", True),
    ("attention.wk", True),
    ("attention.wv", True),
    ("attention.wo", True),
    ("ffn_norm", False),
    ("feed_forward.w1", True),
    ("feed_forward.w2", True),
    ("feed_forward.w3", True),
]


def float_count(cfg: Config) -> int:
    """Floats after the header, in O(1): the parameters and the two RoPE tables."""
    return cfg.n_params() + cfg.seq_len * cfg.head_dim


def config_from_header(values: tuple, source: str, limits: Limits | None = None) -> Config:
    """The Config the header's seven numbers say (its row's config step): a negative vocab_size
    means an untied classifier."""
    dim, hidden, n_layers, n_heads, n_kv, vocab, max_seq = values
    fields = dict(n_embd=dim, ffn_hidden=hidden, n_layer=n_layers, n_head=n_heads, n_kv_head=n_kv)
    fields.update(vocab_size=abs(vocab), seq_len=max_seq, tie_embeddings=vocab > 0)
    return config_from_fields(fields, source, limits, part=f"header {values}")


def import_llama2c(path, limits: Limits | None = None) -> Checkpoint:
    """A llama2.c legacy checkpoint as float32; `limits(cfg)` runs before any weight is read.
    Its seq_len is the header's (the length the model was built for)."""
    path = Path(path)
    source = path.name
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            head = f.read(HEADER.size)
            if len(head) < HEADER.size:
                raise CheckpointError(f"{source}: {size} bytes, too short for the 28-byte llama2.c header")
            values = HEADER.unpack(head)
            cfg = config_from_header(values, source, limits)
            needed = float_count(cfg)
            if size - HEADER.size != 4 * needed:
                held = (size - HEADER.size) / 4
                raise CheckpointError(
                    f"{source}: holds {held:g} float32 values after the header; its header {values} needs {needed} "
                    f"({'truncated' if held < needed else 'trailing data'})"
                )
            data = np.fromfile(f, dtype="<f4", count=needed)
    except OSError as exc:
        raise CheckpointError(f"{source}: not readable ({exc})") from None
    if data.size != needed:
        raise CheckpointError(f"{source}: truncated while reading ({data.size} of {needed} float32 values)")
    return _unpack(cfg, data, source)


def checkpoint_header(path, limits: Limits | None = None) -> Header:
    """The llama2.c row of xt_core.checkpoint.formats: the file read whole (its header says
    little more than the sizes)."""
    return Header.holding(import_llama2c(path, limits))


def _unpack(cfg: Config, data: np.ndarray, source: str) -> Checkpoint:
    shapes = param_shapes(cfg)
    V, C, n_layers = cfg.vocab_size, cfg.n_embd, cfg.n_layer
    offset = 0

    def take(n):
        nonlocal offset
        offset += n
        return data[offset - n : offset]

    params = {"tok_embeddings": take(V * C).reshape(V, C)}
    for name, transpose in _ORDER:
        shape = shapes[f"layers.0.{name}"]
        stack = take(n_layers * int(np.prod(shape))).reshape(n_layers, *(shape[::-1] if transpose else shape))
        for L in range(n_layers):
            params[f"layers.{L}.{name}"] = stack[L].T if transpose else stack[L]
    params["norm"] = take(C)
    take(cfg.seq_len * cfg.head_dim)  # the two legacy RoPE tables: xt computes its own
    if not cfg.tie_embeddings:
        params["output"] = take(V * C).reshape(V, C)
    params = {k: check_finite(k, np.array(v, dtype=np.float32, order="C"), source) for k, v in params.items()}
    return Checkpoint(cfg, params, None, {"imported_from": f"llama2.c {source}"})


def export_llama2c(path, cfg: Config, params: dict) -> Path:
    """The legacy llama2.c layout (the inverse of import_llama2c); used by the tests."""
    path = Path(path)
    header = HEADER.pack(
        cfg.n_embd,
        cfg.ffn_hidden,
        cfg.n_layer,
        cfg.n_head,
        cfg.n_kv_head,
        cfg.vocab_size if cfg.tie_embeddings else -cfg.vocab_size,
        cfg.seq_len,
    )
    parts = [params["tok_embeddings"]]
    for name, transpose in _ORDER:
        parts += [
            params[f"layers.{L}.{name}"].T if transpose else params[f"layers.{L}.{name}"] for L in range(cfg.n_layer)
        ]
    parts += [params["norm"], np.zeros(cfg.seq_len * cfg.head_dim)]
    if not cfg.tie_embeddings:
        parts.append(params["output"])
    with open(path, "wb") as f:
        f.write(header)
        for p in parts:
            f.write(np.ascontiguousarray(p, dtype="<f4").tobytes())
    return path
