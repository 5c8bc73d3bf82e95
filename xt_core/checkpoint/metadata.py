"""xt's checkpoint metadata, parsed strictly: four JSON strings (format, config, tokenizer,
meta), every field's type and value checked, anything else a CheckpointError naming the key.
What loads here is what the app may show (listing, home page) without checking again.
"""

from __future__ import annotations

import json
import math

from xt_core.checkpoint.common import CheckpointError, Limits, config_from_fields, short
from xt_core.config import Config
from xt_core.text.bpe import BPETokenizer
from xt_core.text.byte_char import ByteTokenizer, CharTokenizer

FORMAT = "xt-checkpoint-1"
KEYS = ("format", "config", "tokenizer", "meta")


def _is_text(v) -> bool:
    return isinstance(v, str)


def _is_count(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _is_texts(v) -> bool:
    return isinstance(v, list) and all(isinstance(e, str) for e in v)


def _is_counts(v) -> bool:
    return isinstance(v, list) and all(_is_count(e) for e in v)


def _is_numbers(v) -> bool:
    return isinstance(v, list) and all(_is_number(e) for e in v)


# meta: how a checkpoint was made. Written by `xt train` (task .. examples, the schedule, and what
# the demo tasks measured: the induction head found and its scores per period, the text model's
# held-out loss and a sample), the importers (imported_from) and the app's uploads (uploaded_as).
META_FIELDS = {
    "task": (_is_text, "a string"),
    "description": (_is_text, "a string"),
    "imported_from": (_is_text, "a string"),
    "uploaded_as": (_is_text, "a string"),
    "examples": (_is_texts, "a list of strings"),
    "steps": (_is_count, "a non-negative integer"),
    "batch": (_is_count, "a non-negative integer"),
    "seed": (_is_count, "a non-negative integer"),
    "lr": (_is_number, "a finite number"),
    "final_loss": (_is_number, "a finite number"),
    "warmup": (_is_count, "a non-negative integer"),
    "decay": (_is_text, "a string"),
    "weight_decay": (_is_number, "a finite number"),
    "induction_layer": (_is_count, "a non-negative integer"),
    "induction_head": (_is_count, "a non-negative integer"),
    "induction_score": (_is_number, "a finite number"),
    "induction_periods": (_is_counts, "a list of non-negative integers"),
    "induction_scores": (_is_numbers, "a list of finite numbers"),
    "induction_latest": (_is_numbers, "a list of finite numbers"),
    "induction_losses": (_is_numbers, "a list of finite numbers"),
    "train_loss": (_is_number, "a finite number"),
    "heldout_loss": (_is_number, "a finite number"),
    "heldout_lines": (_is_text, "a string"),
    "sample_prompt": (_is_text, "a string"),
    "sample": (_is_text, "a string"),
}


def _no_constant(name: str):
    raise ValueError(f"{name} is not a finite number")


def _json(text, key: str, source: str):
    if not isinstance(text, str):
        raise CheckpointError(f"{source}: metadata {key} must be a JSON string, got {type(text).__name__}")
    try:
        return json.loads(text, parse_constant=_no_constant)  # NaN / Infinity: no JSON answer could carry them
    except (ValueError, RecursionError) as exc:
        raise CheckpointError(f"{source}: metadata {key} is not readable JSON ({short(str(exc))})") from None


def parse_meta(meta, source: str) -> dict:
    if not isinstance(meta, dict):
        raise CheckpointError(f"{source}: meta must be an object, got {short(meta)}")
    for key, value in meta.items():
        if key not in META_FIELDS:
            raise CheckpointError(f"{source}: meta.{short(key)} is not a known key (known: {', '.join(META_FIELDS)})")
        ok, what = META_FIELDS[key]
        if not ok(value):
            raise CheckpointError(f"{source}: meta.{key} must be {what}, got {short(value)}")
    return dict(meta)


def tokenizer_from_dict(data, source: str = "checkpoint"):
    """null -> None (token ids only); {"name": "byte"}; {"name": "char", "chars": sorted distinct};
    {"name": "bpe", "tokenizer_json": the `tokenizers` library's JSON} (xt_core.text.bpe, e.g. a GGUF's)."""
    if data is None:
        return None
    if not isinstance(data, dict):
        raise CheckpointError(
            f'{source}: tokenizer must be null or an object like {{"name": "byte"}}, got {short(data)}'
        )
    name = data.get("name")
    keys = {"byte": {"name"}, "char": {"name", "chars"}, "bpe": {"name", "tokenizer_json"}}
    keys = keys.get(name) if isinstance(name, str) else None
    if keys is None:
        raise CheckpointError(f'{source}: tokenizer.name = {short(name)} is not a known kind ("byte", "char" or "bpe")')
    for key in data:
        if key not in keys:
            raise CheckpointError(f"{source}: tokenizer.{short(key)} is not a known key of a {name} tokenizer")
    if name == "byte":
        return ByteTokenizer()
    if name == "bpe":
        return _bpe_tokenizer(data.get("tokenizer_json"), source)
    return _char_tokenizer(data.get("chars"), source)


def _char_tokenizer(chars, source: str) -> CharTokenizer:
    if not isinstance(chars, str) or not chars:
        raise CheckpointError(f"{source}: tokenizer.chars must be a non-empty string, got {short(chars)}")
    if any(0xD800 <= ord(c) <= 0xDFFF for c in chars):
        raise CheckpointError(f"{source}: tokenizer.chars holds a lone surrogate, not a character")
    if len(set(chars)) != len(chars) or list(chars) != sorted(chars):
        raise CheckpointError(f"{source}: tokenizer.chars must be sorted distinct characters, got {short(chars)}")
    return CharTokenizer(chars)


def _bpe_tokenizer(text, source: str):
    if not isinstance(text, str) or not text:
        raise CheckpointError(f"{source}: tokenizer.tokenizer_json must be a non-empty string, got {short(text)}")
    try:
        return BPETokenizer.from_dict({"name": "bpe", "tokenizer_json": text})
    except Exception as exc:  # the tokenizers library raises its own exception types
        raise CheckpointError(
            f"{source}: tokenizer.tokenizer_json is not a readable tokenizer ({short(str(exc))})"
        ) from None


def parse_metadata(strings: dict, source: str, limits: Limits | None):
    """(cfg, tokenizer, meta) from the four metadata strings; the config (and `limits`) first."""
    unknown = [key for key in strings if key not in KEYS]
    if unknown:
        raise CheckpointError(f"{source}: metadata key {short(unknown[0])} is not one of {', '.join(KEYS)}")
    if strings.get("format") != FORMAT:
        raise CheckpointError(f"{source}: not an xt checkpoint (metadata format is {short(strings.get('format'))})")
    if "config" not in strings:
        raise CheckpointError(f"{source}: metadata has no config")
    fields = _json(strings["config"], "config", source)
    if not isinstance(fields, dict):
        raise CheckpointError(f"{source}: metadata config must be an object, got {short(fields)}")
    cfg = config_from_fields(fields, source, limits, part="metadata config")
    tokenizer = tokenizer_from_dict(_json(strings.get("tokenizer", "null"), "tokenizer", source), source)
    if tokenizer is not None and tokenizer.vocab_size > cfg.vocab_size:
        raise CheckpointError(f"{source}: tokenizer has {tokenizer.vocab_size} tokens, vocab_size is {cfg.vocab_size}")
    meta = parse_meta(_json(strings.get("meta", "{}"), "meta", source), source)
    return cfg, tokenizer, meta


def metadata_strings(cfg: Config, tokenizer, meta: dict) -> dict[str, str]:
    """What `save` stores; refuses a meta that `parse_meta` would refuse on load."""
    parse_meta(meta, "checkpoint")
    return {
        "format": FORMAT,
        "config": json.dumps(cfg.to_dict()),
        "tokenizer": json.dumps(tokenizer.to_dict() if tokenizer else None),
        "meta": json.dumps(meta, allow_nan=False),
    }
