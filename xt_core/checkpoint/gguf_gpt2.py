"""GGUF files of the `gpt2` architecture (llama.cpp's convert_hf_to_gguf.py, GPT2Model) as checkpoints
of xt's gpt2 family; the llama, qwen2 and qwen3 architectures are gguf_file.py's (the file format
table's GGUF row picks by `general.architecture`: gguf_row.py).

llama.cpp names GPT-2's tensors its own way and stores every Linear (out, in), GPT-2's Conv1D
weights transposed; this module maps each name back to GPT-2's own (`transformer.h.{L}.attn.c_attn`,
...) and each weight back to (in, out), so GPT-2's table (gpt2_files.py: tensor_names, to_params) cuts
the fused c_attn into Wq, Wk, Wv and bq, bk, bv as for the Hugging Face and nanoGPT files. GELU is
the tanh form (ggml's gelu, GPT-2's `gelu_new`). The converter writes the tied LM head a second time,
as `output.weight`: one byte for byte the same as `token_embd.weight` is the tie, any other an untied
head. The tokenizer is GPT-2's byte-level BPE with the `gpt-2` pre-tokenizer (xt_core.text.bpe).
Everything is checked from the header before a weight is dequantized, as gguf_file.py does.
"""

from __future__ import annotations

import re

import numpy as np

from xt_core.checkpoint import gguf_file
from xt_core.checkpoint.common import Checkpoint, CheckpointError, Header, Limits, check_names
from xt_core.checkpoint.gpt2_files import stored_shape, tensor_names, to_params
from xt_core.config import Config

KEYS = {  # gpt2.<key> -> Config field (every one required), type
    "block_count": ("n_layer", int),
    "context_length": ("seq_len", int),
    "embedding_length": ("n_embd", int),
    "feed_forward_length": ("ffn_hidden", int),
    "attention.head_count": ("n_head", int),
    "attention.layer_norm_epsilon": ("norm_eps", float),
}
REFUSED = {  # a gpt2.<key>'s prefix -> why xt refuses it
    "attention.layer_norm_rms_epsilon": "GPT-2 normalizes with LayerNorm, not RMSNorm",
    "rope": "GPT-2 has learned position embeddings, no RoPE",
    "expert": "GPT-2's feed-forward is one GELU MLP, not a mixture of experts",
}
NO_SUCH_SETTING = "xt's GPT-2 has no such setting"
TOP = {  # GGUF tensor -> GPT-2's name
    "token_embd.weight": "transformer.wte.weight",
    "position_embd.weight": "transformer.wpe.weight",
    "output_norm.weight": "transformer.ln_f.weight",
    "output_norm.bias": "transformer.ln_f.bias",
    "output.weight": "lm_head.weight",
}
LAYER = {"attn_norm": "ln_1", "attn_qkv": "attn.c_attn", "attn_output": "attn.c_proj", "ffn_norm": "ln_2"}
LAYER |= {"ffn_up": "mlp.c_fc", "ffn_down": "mlp.c_proj"}
LINEAR = ("attn_qkv", "attn_output", "ffn_up", "ffn_down")  # stored (out, in): transposed back to Conv1D's
_LAYER_TENSOR = re.compile(r"blk\.([0-9]{1,6})\.(\w+)\.(weight|bias)", re.ASCII)


def gpt2_name(gguf_name: str) -> tuple[str, bool] | None:
    """(GPT-2's tensor name, stored transposed?) of a GGUF tensor, or None: no place in GPT-2."""
    if gguf_name in TOP:
        return TOP[gguf_name], False
    match = _LAYER_TENSOR.fullmatch(gguf_name)
    if match is None or match[2] not in LAYER:
        return None
    return f"transformer.h.{int(match[1])}.{LAYER[match[2]]}.{match[3]}", match[2] in LINEAR and match[3] == "weight"


def _same(fields, key: str, other: str) -> bool:
    return gguf_file.scalar(fields, key, int) == gguf_file.scalar(fields, other, int)


def _config_values(fields) -> dict:
    values = {}
    for key in fields:
        short = key.removeprefix("gpt2.")
        if short == key or short in KEYS or short == "vocab_size":
            continue
        heads = "gpt2.attention.head_count"
        if short == "attention.head_count_kv" and heads in fields and _same(fields, key, heads):
            continue  # GPT-2's heads each have their own keys and values
        why = next((reason for prefix, reason in REFUSED.items() if short.startswith(prefix)), None)
        raise CheckpointError(f"metadata {key} is not supported: {why or NO_SUCH_SETTING}")
    for short, (name, kind) in KEYS.items():
        if f"gpt2.{short}" not in fields:
            raise CheckpointError(f"metadata gpt2.{short} is missing (xt needs it for {name})")
        values[name] = gguf_file.scalar(fields, f"gpt2.{short}", kind)
    return values


def _tied(found: dict) -> bool:
    """No lm_head, or one holding token_embd's very bytes (the converter's copy of the tie)."""
    if "lm_head.weight" not in found:
        return True
    head, embeddings = found["lm_head.weight"][0], found["transformer.wte.weight"][0]
    same = head.tensor_type == embeddings.tensor_type and head.shape.tolist() == embeddings.shape.tolist()
    return same and np.array_equal(np.asarray(head.data), np.asarray(embeddings.data))


def config_from_gpt2(fields, found: dict) -> Config:
    """The gpt2-family Config a gpt2 GGUF header and its tensors describe."""
    if "split.count" in fields and gguf_file.scalar(fields, "split.count", int) > 1:
        raise CheckpointError("metadata split.count > 1: a model split over several files is not supported")
    embeddings = found.get("transformer.wte.weight", (None,))[0]
    if embeddings is None or len(embeddings.shape) != 2:
        raise CheckpointError("tensor token_embd.weight is missing or not 2-D")
    vocab = int(embeddings.shape[1])  # ne [n_embd, vocab]
    if "gpt2.vocab_size" in fields and gguf_file.scalar(fields, "gpt2.vocab_size", int) != vocab:
        raise CheckpointError(f"metadata gpt2.vocab_size differs from the {vocab} rows of token_embd.weight")
    values = _config_values(fields)
    try:
        return Config(
            family="gpt2", vocab_size=vocab, n_kv_head=values.get("n_head"), tie_embeddings=_tied(found), **values
        )
    except ValueError as exc:
        raise CheckpointError(f"metadata describes no valid config: {exc}") from None


def _check_tensors(cfg: Config, found: dict, names: dict) -> None:
    check_names(names, found, "the file")
    for name, xt in names.items():
        need = stored_shape(cfg, xt)
        gguf_file.check_tensor(*found[name], need, needed=need)


def header(reader, limits, source: str, check: Limits | None = None) -> Header:
    """A gpt2 GGUF's header, every check made (gguf_file.read_gguf_header's, for this architecture);
    its checkpoint() dequantizes the weights into xt's gpt2 parameters."""
    fields, found = reader.fields, gguf_file.inventory(reader, gpt2_name, "xt's GPT-2")
    cfg = config_from_gpt2(fields, found)
    if limits.max_params is not None and cfg.n_params() > limits.max_params:
        raise CheckpointError(f"{cfg.n_params():,} parameters, more than the limit of {limits.max_params:,}")
    if check is not None:
        check(cfg)
    if cfg.tie_embeddings:
        found.pop("lm_head.weight", None)
    names = tensor_names(cfg)
    _check_tensors(cfg, found, names)
    tokenizer = gguf_file.tokenizer_of(fields, cfg)
    meta = {
        "imported_from": f"gguf {source}",
        "gguf_name": fields["general.name"].contents() if "general.name" in fields else None,
    }

    def read() -> Checkpoint:
        try:
            return Checkpoint(
                cfg, to_params(cfg, names, lambda name: gguf_file.dequantized(*found[name])), tokenizer, meta
            )
        except CheckpointError as exc:
            raise CheckpointError(f"{source}: {exc}") from None

    return Header(cfg, tokenizer, meta, read)
