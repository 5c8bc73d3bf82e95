"""GGUF import: a llama-, qwen2- or qwen3-architecture `.gguf` file (a gpt2 one: gguf_gpt2.py; the
file format table's row reads either: gguf_row.py) (llama.cpp's format) as an xt
Checkpoint (the architectures and their tensor names: gguf_arch.py).

Read with the `gguf` package: GGUFReader for the header, gguf.quants.dequantize for the
weights, so every tensor type that package can dequantize (F32, F16, BF16, Q8_0, Q4_0, Q4_1,
Q5_*, the K-quants, ...) imports as float32. Everything is checked from the header (the
architecture, every metadata key, every tensor's name, shape and type, the parameter count
against the limits) before a single weight is dequantized.

Layout. GGUF stores a Linear weight as PyTorch does, (out, in) row-major (its `ne` dims list
them reversed, [in, out]); xt's are (in, out), so each is transposed. llama.cpp's converter
reorders the q/k rows of each head from Hugging Face's rotate-half layout into adjacent pairs,
because ggml's llama RoPE rotates (2i, 2i+1): that is xt's interleaved RoPE, so q and k are
taken as they are (a qwen2/qwen3's are not: gguf_arch.py). tests/core/test_gguf_import.py (against transformers on tiny files) and
tests/core/test_smollm2_reference.py (the real SmolLM2) prove it on logits and gradients.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from xt_core.checkpoint.common import Checkpoint, CheckpointError, Limits
from xt_core.checkpoint.gguf_arch import ARCHITECTURES, GLOBAL_TENSORS, LAYER_TENSORS, rotated_heads, unrotated, xt_name
from xt_core.checkpoint.gguf_bounds import check_gguf_header
from xt_core.config import Config
from xt_core.model import param_shapes
from xt_core.text.bpe import BPETokenizer

DEFAULT_ROPE_THETA = 10000.0  # llama.cpp's default when llama.rope.freq_base is absent


@dataclass(frozen=True)
class GGUFLimits:
    """What an import may cost, checked before any weight is read. None: no limit."""

    max_file_bytes: int | None = None
    max_params: int | None = None  # float32 params take 4 bytes each once dequantized


# ---------------------------------------------------------------------- metadata -> Config

# llama.<key> -> (Config field, type, default: None = required, a field's name = that field's value)
_CONFIG_KEYS = {
    "block_count": ("n_layer", int, None),
    "embedding_length": ("n_embd", int, None),
    "feed_forward_length": ("ffn_hidden", int, None),
    "attention.head_count": ("n_head", int, None),
    "attention.head_count_kv": ("n_kv_head", int, "n_head"),
    "context_length": ("seq_len", int, None),
    "attention.layer_norm_rms_epsilon": ("norm_eps", float, None),
    "rope.freq_base": ("rope_theta", float, DEFAULT_ROPE_THETA),
}
# keys that only restate what the config and the tensors say: checked, then dropped
_DERIVED_KEYS = ("vocab_size", "rope.dimension_count", "attention.key_length", "attention.value_length")
REFUSED = {  # a metadata key's prefix -> why xt refuses it (the file format's refusals)
    "rope.scaling": "xt's RoPE has no scaling (its angle is pos * theta^(-2i/hd))",
    "expert": "xt's feed-forward is one SwiGLU, not a mixture of experts",
    "attention.layer_norm_epsilon": "a llama GGUF normalizes with RMSNorm; LayerNorm models are xt's GPT-2 family (architecture gpt2)",
}


def scalar(fields, key: str, kind):
    field = fields[key]
    from gguf import GGUFValueType

    if field.types[0] == GGUFValueType.ARRAY:
        raise CheckpointError(f"metadata {key} is an array (per-layer values); xt needs one value for every layer")
    value = field.contents()
    numeric = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not numeric or (kind is int and value != int(value)):
        raise CheckpointError(f"metadata {key} = {value!r} is not {'an integer' if kind is int else 'a number'}")
    if field.types[0] == GGUFValueType.FLOAT32:
        # the shortest decimal that is this float32 (1e-05, not 9.999999747378752e-06): what the
        # model's author wrote before the file rounded it
        return kind(str(np.float32(value)))
    return kind(value)


def _refuse_unknown_keys(fields, arch: str) -> None:
    for key in fields:
        if key == "general.architecture" or not key.startswith(f"{arch}."):
            continue  # general.* is descriptive, tokenizer.* is read by xt_core.text.bpe
        short = key[len(arch) + 1 :]
        if short in _CONFIG_KEYS or short in _DERIVED_KEYS:
            continue
        if short == "rope.scaling.type" and fields[key].contents() == "none":
            continue
        why = next((reason for prefix, reason in REFUSED.items() if short.startswith(prefix)), None)
        raise CheckpointError(
            f"metadata {key} = {_shown(fields[key].contents())} is not supported: "
            + (why or "xt's Llama has no such setting")
        )


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def architecture(fields) -> str:
    if "general.architecture" not in fields:
        raise CheckpointError("metadata general.architecture is missing: not a model GGUF")
    arch = fields["general.architecture"].contents()
    if arch not in ARCHITECTURES:
        known = ", ".join(map(repr, ARCHITECTURES))
        raise CheckpointError(f"metadata general.architecture = {arch!r}: only {known} are supported")
    return arch


def config_from_metadata(fields, vocab_size: int, tied: bool = True) -> Config:
    """The Config a llama, qwen2 or qwen3 GGUF header describes; any other architecture, a missing key or a
    setting xt's model does not have raises CheckpointError naming the key."""
    arch = architecture(fields)
    if "split.count" in fields and scalar(fields, "split.count", int) > 1:
        raise CheckpointError("metadata split.count > 1: a model split over several files is not supported")
    _refuse_unknown_keys(fields, arch)
    values: dict = dict(ARCHITECTURES[arch].parts)
    if f"{arch}.attention.key_length" in fields:  # a head width of its own (Qwen3's)
        values["head_dim"] = scalar(fields, f"{arch}.attention.key_length", int)
    for short, (name, kind, default) in _CONFIG_KEYS.items():
        key = f"{arch}.{short}"
        if key in fields:
            values[name] = scalar(fields, key, kind)
        elif default is None:
            raise CheckpointError(f"metadata {key} is missing (xt needs it for {name})")
        else:
            values[name] = values[default] if isinstance(default, str) else default
    try:
        cfg = Config(vocab_size=vocab_size, tie_embeddings=tied, **values)
    except ValueError as exc:
        raise CheckpointError(f"metadata describes no valid config: {exc}") from None
    expected = {"vocab_size": vocab_size, "rope.dimension_count": cfg.head_dim}
    expected |= {"attention.key_length": cfg.head_dim, "attention.value_length": cfg.head_dim}
    for short, want in expected.items():
        key = f"{arch}.{short}"
        if key in fields and scalar(fields, key, int) != want:
            raise CheckpointError(
                f"metadata {key} = {fields[key].contents()} but xt needs {want} "
                f"({'rows of token_embd.weight' if short == 'vocab_size' else 'head_dim'})"
            )
    return cfg


# ---------------------------------------------------------------------- tensors -> params

_LAYER_TENSORS, _GLOBAL_TENSORS = LAYER_TENSORS, GLOBAL_TENSORS  # the names tests/helpers/gguf_files.py writes


def inventory(reader, name_of=xt_name, model: str = "xt's Llama") -> dict:
    """xt name -> (reader tensor, transpose?); refuses tensors xt's model has no place for.
    `name_of`: a GGUF tensor's name -> (the name it is read under, transpose?) or None."""
    found = {}
    for tensor in reader.tensors:
        mapped = name_of(tensor.name)
        if mapped is None:
            raise CheckpointError(f"tensor {tensor.name} ({tensor.tensor_type.name}) has no place in {model}")
        if mapped[0] in found:
            raise CheckpointError(f"tensors {found[mapped[0]][0].name} and {tensor.name} are both {mapped[0]}")
        found[mapped[0]] = (tensor, mapped[1])
    return found


@cache
def can_dequantize(qtype) -> bool:
    """Whether the installed gguf package dequantizes this tensor type (tried on one zero block)."""
    from gguf import GGML_QUANT_SIZES
    from gguf.quants import dequantize

    try:
        dequantize(np.zeros(GGML_QUANT_SIZES[qtype][1], dtype=np.uint8), qtype)
    except NotImplementedError:
        return False
    return True


def _check_tensors(cfg: Config, found: dict, arch: str) -> None:
    if cfg.n_layer > len(found):  # before listing what n_layer layers need: the file bounds the work
        raise CheckpointError(f"metadata {arch}.block_count = {cfg.n_layer}, but the file holds {len(found)} tensors")
    expected = param_shapes(cfg)
    missing = sorted(set(expected) - set(found))
    if missing:
        raise CheckpointError(f"tensors missing for the config: {', '.join(missing[:8])}")
    extra = sorted(found[name][0].name for name in set(found) - set(expected))
    if extra:
        raise CheckpointError(f"tensors beyond the config ({arch}, {cfg.n_layer} layers): {', '.join(extra[:8])}")
    for name, shape in expected.items():
        check_tensor(*found[name], shape)


def check_tensor(tensor, transpose: bool, shape: tuple, needed: tuple | None = None) -> None:
    """A tensor that reads as `shape` (once transposed if `transpose`), in a type the gguf package
    dequantizes; else a CheckpointError naming the stored shape it should have (or `needed`)."""
    stored = tuple(int(d) for d in reversed(tensor.shape.tolist()))  # ne [in, out] -> (out, in)
    if (stored[::-1] if transpose else stored) != shape:
        need = needed if needed is not None else (shape[::-1] if transpose else shape)
        raise CheckpointError(f"tensor {tensor.name} has shape {stored}; the config needs {need}")
    if not can_dequantize(tensor.tensor_type):
        raise CheckpointError(
            f"tensor {tensor.name} has type {tensor.tensor_type.name}, which the gguf package cannot dequantize"
        )


def dequantized(tensor, transpose: bool, heads: int | None = None) -> np.ndarray:
    """float32 in xt's layout: rows of `heads` heads from rotate-half order to pairs, then transposed."""
    from gguf.quants import dequantize

    shape = tuple(int(d) for d in reversed(tensor.shape.tolist()))
    values = unrotated(np.asarray(dequantize(tensor.data, tensor.tensor_type), dtype=np.float32).reshape(shape), heads)
    if not np.all(np.isfinite(values)):
        raise CheckpointError(f"tensor {tensor.name} holds NaN or inf")
    # a copy in every case: an F32 tensor dequantizes to a read-only view of the file's mapping
    return np.array(values.T if transpose else values, dtype=np.float32, order="C")


# ---------------------------------------------------------------------- the entry point


@cache
def plain_array_reader() -> type:
    """GGUFReader over a plain ndarray view of the file's memory map: np.memmap's bookkeeping on
    every slice makes parsing SmolLM2's ~98k vocabulary strings ~2.5x slower (6 s, 2.4 s without)."""
    from gguf import GGUFReader

    class PlainArrayReader(GGUFReader):
        @property
        def data(self):
            return self._array

        @data.setter
        def data(self, memmap):
            self._memmap = memmap  # keeps the mapping alive under the views
            self._array = memmap.view(np.ndarray)

    return PlainArrayReader


def open_reader(path):
    """The file's GGUFReader (plain_array_reader's)."""
    return plain_array_reader()(path)


def open_checked(path: Path, limits: GGUFLimits):
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise CheckpointError(f"cannot read ({exc.strerror})") from None
    if limits.max_file_bytes is not None and size > limits.max_file_bytes:
        raise CheckpointError(f"{size} bytes, more than the limit of {limits.max_file_bytes}")
    check_gguf_header(path)  # every declared count against the file's size, before GGUFReader allocates
    try:
        return open_reader(path)
    except (ValueError, KeyError, IndexError, OSError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"not a readable GGUF file ({type(exc).__name__}: {exc})") from None


@dataclass(frozen=True)
class GGUFHeader:
    """A GGUF file's header, every check made: its config, tokenizer and meta, and where each xt
    parameter's tensor lies in the file's memory map (read by weights(), not before)."""

    cfg: Config
    tokenizer: object  # xt_core.text.bpe.BPETokenizer, or None: the file has no tokenizer
    meta: dict
    source: str  # the file's name, for messages
    tensors: dict  # xt name -> (the gguf package's ReaderTensor, transpose?, heads stored rotate-half or None)

    def weights(self) -> dict[str, np.ndarray]:
        """Every parameter dequantized to float32, in xt's layout."""
        try:
            return {name: dequantized(*self.tensors[name]) for name in param_shapes(self.cfg)}
        except CheckpointError as exc:
            raise CheckpointError(f"{self.source}: {exc}") from None

    def checkpoint(self) -> Checkpoint:
        return Checkpoint(self.cfg, self.weights(), self.tokenizer, self.meta)


def import_gguf(path, limits: GGUFLimits | None = None) -> Checkpoint:
    """A llama GGUF file -> Checkpoint(cfg, float32 params, BPE tokenizer from its metadata, meta).
    A file xt cannot take raises CheckpointError naming the file and the key or tensor at fault."""
    return read_gguf_header(path, limits).checkpoint()


def read_gguf_header(path, limits: GGUFLimits | None = None, check: Limits | None = None, reader=None) -> GGUFHeader:
    """A GGUF file's header, with every check import_gguf makes before it reads a weight (a
    model listing reads this much, in about a second, and no weight; its weights() follow).
    `check(cfg)`, a caller's limits, runs once the config is read, before the tokenizer is;
    `reader`: the file's, already opened (gguf_row.py's)."""
    path = Path(path)
    limits = limits or GGUFLimits()
    try:
        cfg, tokenizer, found, meta = _header(reader or open_checked(path, limits), limits, path.name, check)
    except CheckpointError as exc:
        raise CheckpointError(f"{path.name}: {exc}") from None
    return GGUFHeader(cfg, tokenizer, meta, path.name, found)


def checkpoint_header(path, limits: Limits | None = None) -> GGUFHeader:
    """The GGUF row of xt_core.checkpoint.formats: read_gguf_header with a caller's limits."""
    return read_gguf_header(path, check=limits)


def _header(reader, limits: GGUFLimits, source: str, check: Limits | None = None):
    """(cfg, tokenizer, xt name -> (tensor, transpose?), meta), everything checked."""
    fields = reader.fields
    found = inventory(reader)
    embeddings = found.get("tok_embeddings", (None,))[0]
    if embeddings is None or len(embeddings.shape) != 2:
        raise CheckpointError("tensor token_embd.weight is missing or not 2-D")
    vocab_size = int(embeddings.shape[1])  # ne [n_embd, vocab]
    cfg = config_from_metadata(fields, vocab_size, tied="output" not in found)
    if limits.max_params is not None and cfg.n_params() > limits.max_params:
        raise CheckpointError(f"{cfg.n_params():,} parameters, more than the limit of {limits.max_params:,}")
    if check is not None:
        check(cfg)
    arch = ARCHITECTURES[fields["general.architecture"].contents()]
    _check_tensors(cfg, found, arch.name)
    found = {name: (*at, rotated_heads(arch, cfg, name)) for name, at in found.items()}
    tokenizer = tokenizer_of(fields, cfg)
    meta = {
        "imported_from": f"gguf {source}",
        "gguf_name": fields["general.name"].contents() if "general.name" in fields else None,
        "gguf_tensor_types": dict(Counter(t.tensor_type.name for t, *_ in found.values())),
    }
    return cfg, tokenizer, found, meta


def tokenizer_of(fields, cfg: Config):
    if "tokenizer.ggml.model" not in fields:
        return None  # weights only: a spec gives token ids
    try:
        tokenizer = BPETokenizer.from_gguf_fields(fields)
    except ValueError as exc:
        raise CheckpointError(str(exc)) from None
    if tokenizer.vocab_size > cfg.vocab_size:
        raise CheckpointError(f"the tokenizer has {tokenizer.vocab_size} tokens, vocab_size is {cfg.vocab_size}")
    return tokenizer
