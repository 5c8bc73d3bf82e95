"""Small synthetic GGUF files for the importer's tests, written with gguf.GGUFWriter: a llama
header from a Config, xt params laid out as llama.cpp stores them, and a tiny byte-level BPE
vocabulary. Tests edit the key/value and tensor dicts to build broken files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from gguf import GGMLQuantizationType, GGUFValueType, GGUFWriter
from gguf.quants import quantize

import xt_core
from xt_core.checkpoint.gguf_arch import ARCHITECTURES, LAYER_BIASES, rotated_heads
from xt_core.checkpoint.gguf_file import _GLOBAL_TENSORS, _LAYER_TENSORS
from xt_core.checkpoint.hf import interleaved_to_rotate_half
from xt_core.text.bpe import BYTE_TO_CHAR

Q = GGMLQuantizationType


def llama_kv(cfg: xt_core.Config, arch: str = "llama") -> dict:
    """The <arch>.* keys llama.cpp writes for this config (a qwen3's head width: key_length)."""
    keys = {
        "block_count": cfg.n_layer,
        "context_length": cfg.seq_len,
        "embedding_length": cfg.n_embd,
        "feed_forward_length": cfg.ffn_hidden,
        "attention.head_count": cfg.n_head,
        "attention.head_count_kv": cfg.n_kv_head,
        "rope.freq_base": float(cfg.rope_theta),
        "attention.layer_norm_rms_epsilon": float(cfg.norm_eps),
        "vocab_size": cfg.vocab_size,
        "rope.dimension_count": cfg.head_dim,
    }
    if arch == "qwen3":
        keys |= {"attention.key_length": cfg.head_dim, "attention.value_length": cfg.head_dim}
    return {f"{arch}.{key}": value for key, value in keys.items()}


def stored_layout(cfg: xt_core.Config, params: dict, arch: str = "llama") -> dict[str, np.ndarray]:
    """GGUF tensor name -> float32 array as llama.cpp stores it: Linear weights (out, in); a
    qwen2/qwen3's q/k rows, biases and norm gains in rotate-half order (ggml's NEOX RoPE)."""
    out = {}
    for gguf_name, (name, _) in _GLOBAL_TENSORS.items():
        if name in params:
            out[f"{gguf_name}.weight"] = params[name]
    layer = {f"{g}.weight": kind for g, kind in _LAYER_TENSORS.items()}
    layer |= {f"{g}.bias": (name, False) for g, name in LAYER_BIASES.items()}
    for L in range(cfg.n_layer):
        for gguf_name, (name, transpose) in layer.items():
            if f"layers.{L}.{name}" in params:
                value = params[f"layers.{L}.{name}"]
                heads = rotated_heads(ARCHITECTURES[arch], cfg, name)
                value = value.T if transpose else value
                out[f"blk.{L}.{gguf_name}"] = value if heads is None else interleaved_to_rotate_half(value, heads)
    return {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in out.items()}


def encoded(values: np.ndarray, qtype) -> tuple[np.ndarray, GGMLQuantizationType | None]:
    """(array to write, raw dtype) for float32 values in `qtype`."""
    if qtype == Q.F32:
        return values.astype(np.float32), None
    if qtype == Q.F16:
        return values.astype(np.float16), None
    return quantize(values, qtype), qtype


def random_blocks(shape: tuple[int, int], qtype, rng) -> np.ndarray:
    """Raw blocks for a (rows, cols) tensor of a type gguf cannot quantize. Every byte < 0x40
    keeps each float16 / e8m0 scale inside a block finite and small."""
    from gguf import GGML_QUANT_SIZES

    block, size = GGML_QUANT_SIZES[qtype]
    return rng.integers(0, 0x40, size=(shape[0], shape[1] // block * size), dtype=np.uint8)


def byte_level_vocab(merges: list[tuple[str, str]], control: list[str]) -> tuple[list[str], list[str], list[int]]:
    """tokens, merges ("a b") and token types: the 256 byte tokens, one token per merge, then
    control tokens (type 3)."""
    tokens = [BYTE_TO_CHAR[b] for b in range(256)]
    tokens += [a + b for a, b in merges] + control
    types = [1] * (len(tokens) - len(control)) + [3] * len(control)
    return tokens, [f"{a} {b}" for a, b in merges], types


TINY_MERGES = [
    ("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("i", "n"), ("Ġ", "a"), ("e", "r"), ("o", "n"), ("Ġ", "w"),
    ("o", "r"), ("l", "l"), ("Ġw", "or"), ("Ġwor", "l"), ("Ġworl", "d"), ("1", "2"), ("Ġ", "1"),
    ("Ã", "©"), ("c", "af"), ("a", "f"), ("Ċ", "Ċ"), ("Ġ", "Ġ"), ("!", "!"), ("Ġ", "ðŁ"), ("ð", "Ł"),
]  # fmt: skip


TINY_VOCAB = 256 + len(TINY_MERGES) + 1  # bytes, merges, <|endoftext|>


def tokenizer_kv(pre: str = "gpt-2", merges=TINY_MERGES, control=("<|endoftext|>",)) -> dict:
    tokens, merge_lines, types = byte_level_vocab(list(merges), list(control))
    return {
        "tokenizer.ggml.model": "gpt2",
        "tokenizer.ggml.pre": pre,
        "tokenizer.ggml.tokens": tokens,
        "tokenizer.ggml.merges": merge_lines,
        "tokenizer.ggml.token_type": types,
        "tokenizer.ggml.bos_token_id": len(tokens) - 1,
        "tokenizer.ggml.eos_token_id": len(tokens) - 1,
        "tokenizer.ggml.add_bos_token": False,
    }


def write_gguf(path, kv: dict, tensors: dict, arch: str = "llama"):
    """kv: key -> int (uint32) | float (float32) | bool | str | list; tensors: name -> (array,
    raw dtype or None). Keys are written in order; general.architecture comes from `arch`."""
    writer = GGUFWriter(str(path), arch)
    for key, value in kv.items():
        if isinstance(value, bool):
            writer.add_key_value(key, value, GGUFValueType.BOOL)
        elif isinstance(value, int):
            writer.add_key_value(key, value, GGUFValueType.UINT32)
        elif isinstance(value, float):
            writer.add_key_value(key, value, GGUFValueType.FLOAT32)
        elif isinstance(value, str):
            writer.add_key_value(key, value, GGUFValueType.STRING)
        else:
            writer.add_array(key, list(value))
    for name, (array, raw_dtype) in tensors.items():
        writer.add_tensor(name, array, raw_dtype=raw_dtype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def write_llama(
    path, cfg: xt_core.Config, params: dict, qtype=Q.F32, kv: dict | None = None, tokenizer: bool = False, arch="llama"
):
    """A llama (or qwen2, qwen3) GGUF of these params: norms and biases F32 (as llama.cpp keeps
    them), matrices in `qtype`; a qwen's tokenizer splits as Qwen2's."""
    tensors = {}
    for name, values in stored_layout(cfg, params, arch).items():
        tensors[name] = encoded(values, Q.F32 if values.ndim == 1 else qtype)
    pre = "qwen2" if arch.startswith("qwen") else "gpt-2"
    keys = {**llama_kv(cfg, arch), **(tokenizer_kv(pre) if tokenizer else {}), **(kv or {})}
    return write_gguf(path, keys, tensors, arch)


# A stand-in for SmolLM2: a tiny Llama .gguf with its own BPE tokenizer, stored under the real
# model's name, so the app's real-model paths (listing, tokenizer, limits, defaults) run in
# milliseconds (tests/app/checkpoints/test_real_models.py, routes/test_tokenize.py, spec/...).
STAND_IN_NAME = "smollm2-135m"
STAND_IN = xt_core.Config(vocab_size=600, n_layer=1, n_head=4, n_kv_head=2, n_embd=16, ffn_hidden=24, seq_len=64)
STAND_IN_TEXT = "the world in 12 worlds, the café"


def write_stand_in(directory: Path) -> Path:
    """`directory` holding the stand-in's .gguf (seed 7's weights)."""
    write_llama(directory / f"{STAND_IN_NAME}.gguf", STAND_IN, xt_core.init_params(STAND_IN, seed=7), tokenizer=True)
    return directory
