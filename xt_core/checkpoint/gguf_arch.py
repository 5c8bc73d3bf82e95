"""The GGUF architectures xt reads (`general.architecture`) and the tensor names of each: llama,
and qwen2 / qwen3 (Qwen2, Qwen2.5, Qwen3), which are Llama's script with a part switched on
(xt_core/families/llama.py): qwen2's q/k/v biases (`blk.N.attn_q.bias`, ...), qwen3's QK-norm
gains (`blk.N.attn_q_norm.weight`, ...).

Layout of q and k. llama.cpp's converter reorders a llama's q/k rows per head from Hugging Face's
rotate-half layout into adjacent pairs, because ggml's llama RoPE rotates (2i, 2i+1): xt's
interleaved RoPE, so they are taken as stored. Qwen2 and Qwen3 run ggml's NEOX RoPE, which rotates
halves: their rows (and what lies along them, the q/k biases and the q/k norm gains, one head wide)
stay in Hugging Face's order, and the importer permutes them to interleaved pairs (`unrotated`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from xt_core.checkpoint.hf import rotate_half_to_interleaved
from xt_core.config import Config


@dataclass(frozen=True)
class Architecture:
    name: str  # general.architecture, and the prefix of its metadata keys
    parts: dict  # the Config parts it switches on
    rotate_half: bool  # q/k stored in rotate-half order (ggml's NEOX RoPE): permuted on import


ARCHITECTURES = {
    "llama": Architecture("llama", {}, rotate_half=False),
    "qwen2": Architecture("qwen2", {"qkv_bias": True}, rotate_half=True),
    "qwen3": Architecture("qwen3", {"qk_norm": True}, rotate_half=True),
    # GPT-2: a family of its own, its tensors named its own way (read by gguf_gpt2.py)
    "gpt2": Architecture("gpt2", {"family": "gpt2"}, rotate_half=False),
}

LAYER_TENSORS = {  # GGUF blk.{L}.<name>.weight -> (xt parameter, transposed to (in, out)?)
    "attn_norm": ("attention_norm", False),
    "attn_q": ("attention.wq", True),
    "attn_k": ("attention.wk", True),
    "attn_v": ("attention.wv", True),
    "attn_output": ("attention.wo", True),
    "ffn_norm": ("ffn_norm", False),
    "ffn_gate": ("feed_forward.w1", True),
    "ffn_up": ("feed_forward.w3", True),
    "ffn_down": ("feed_forward.w2", True),
    "attn_q_norm": ("attention.q_norm", False),  # qwen3
    "attn_k_norm": ("attention.k_norm", False),
}
LAYER_BIASES = {"attn_q": "attention.bq", "attn_k": "attention.bk", "attn_v": "attention.bv"}  # <name>.bias: qwen2
GLOBAL_TENSORS = {"token_embd": ("tok_embeddings", False), "output_norm": ("norm", False), "output": ("output", False)}
_LAYER_TENSOR = re.compile(r"blk\.([0-9]{1,6})\.(\w+)\.(weight|bias)", re.ASCII)
_ROTATED = {"attention.wq", "attention.wk", "attention.bq", "attention.bk", "attention.q_norm", "attention.k_norm"}


def xt_name(gguf_name: str) -> tuple[str, bool] | None:
    """(xt parameter, transpose?) for a GGUF tensor name, or None when xt has no such tensor."""
    if gguf_name.endswith(".weight") and gguf_name[: -len(".weight")] in GLOBAL_TENSORS:
        return GLOBAL_TENSORS[gguf_name[: -len(".weight")]]
    match = _LAYER_TENSOR.fullmatch(gguf_name)
    if match is None:
        return None
    layer, kind, suffix = int(match[1]), match[2], match[3]
    if suffix == "bias":
        return (f"layers.{layer}.{LAYER_BIASES[kind]}", False) if kind in LAYER_BIASES else None
    return (f"layers.{layer}.{LAYER_TENSORS[kind][0]}", LAYER_TENSORS[kind][1]) if kind in LAYER_TENSORS else None


def rotated_heads(arch: Architecture, cfg: Config, name: str) -> int | None:
    """For a rotate-half architecture, how many heads the stored rows (entries) of xt parameter
    `name` hold in rotate-half order (a QK-norm gain: one); None: taken as stored."""
    kind = name.split(".", 2)[-1]
    if not arch.rotate_half or kind not in _ROTATED:
        return None
    return 1 if kind.endswith("_norm") else cfg.n_head if kind[-1] == "q" else cfg.n_kv_head


def unrotated(values: np.ndarray, heads: int | None) -> np.ndarray:
    """Stored (out, ...) rows per head [x_0..x_{hd/2-1} | y_0..y_{hd/2-1}] -> [x_0, y_0, x_1, y_1, ...]."""
    return values if heads is None else rotate_half_to_interleaved(values, heads)
