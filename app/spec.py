"""The trace spec: what a user asks for (JSON body or /walk query string), validated
against the limits in Settings and resolved into a config, token ids and a stable id.

A trace is a pure function of its canonical spec; the id is a hash of it, so an evicted
trace can be rebuilt and a URL carrying the spec is a permalink.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from app.buglab import default_fault_layer, quiz_fault
from app.errors import SpecError, not_a_boolean, only_a_boolean
from app.models import ModelInfo
from app.settings import Settings
from app.spec_models import (
    OPTIMIZER_FIELDS,
    checkpoint_tokenizer,
    optimizer_from_query,
    optimizer_to_query,
    resolve_checkpoint,
    resolve_training,
)
from xt_core import Config
from xt_core.faults import CATALOGUE, fault_override
from xt_core.names import estimate_trace_bytes
from xt_core.tokenizers import ByteTokenizer, CharTokenizer, make_tokenizer

CONFIG_FIELDS = [f.name for f in fields(Config)]
# A random-init model when the spec names no sizes: the tiny preset, with room for a sentence.
DEFAULT_CONFIG = dict(
    n_layer=2,
    n_head=4,
    n_kv_head=2,
    n_embd=64,
    ffn_hidden=172,
    seq_len=64,
    tie_embeddings=True,
    rope_theta=10000.0,
    norm_eps=1e-5,
)
DEFAULT_TEXT = "the cat sat on the mat. the cat sat on the hat."


class ConfigSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    vocab_size: int | None = None
    n_layer: int | None = None
    n_head: int | None = None
    n_kv_head: int | None = None
    n_embd: int | None = None
    ffn_hidden: int | None = None
    seq_len: int | None = None
    tie_embeddings: bool | None = None
    rope_theta: float | None = None
    norm_eps: float | None = None

    _numbers = field_validator(*(f for f in CONFIG_FIELDS if f != "tie_embeddings"), mode="before")(not_a_boolean)
    _booleans = field_validator("tie_embeddings", mode="before")(only_a_boolean)


class TraceSpec(BaseModel):
    """The JSON body of POST /api/traces."""

    model_config = ConfigDict(extra="forbid")
    model: str | None = Field(None, description="a checkpoint name from /api/models, or null for a random init")
    config: ConfigSpec | None = Field(None, description="random-init sizes; omitted fields take defaults")
    tokenizer: Literal["byte", "char"] | None = Field(None, description='"char" (default) or "byte"')
    seed: int = Field(0, ge=0, description="random-init seed")
    text: str | None = Field(None, description="encoded with the tokenizer; inputs = ids[:-1], targets = ids[1:]")
    tokens: list[int] | list[list[int]] | None = Field(
        None, description="token ids instead of text (one or several rows)"
    )
    dtype: Literal["float32", "float64"] = "float32"
    faults: list[str] = Field(
        default_factory=list, description="bug-lab faults by name (GET /api/faults): each swaps one op's backward"
    )
    fault_layer: int | None = Field(None, description="the layer layer-specific faults hit (default: the last)")
    quiz: int | None = Field(None, description="bug-lab quiz: the server hides a fault chosen by this seed")
    optimizer: dict[str, Any] | None = Field(
        None, description='{"name": "adamw"|"sgd", "lr": ..., ...}: the trace ends with this update step'
    )
    train_steps: int = Field(
        0, ge=0, description="optimizer steps on this batch before the shown one (AdamW lr 3e-3 unless optimizer given)"
    )

    _numbers = field_validator("seed", "fault_layer", "quiz", "train_steps", mode="before")(not_a_boolean)


@dataclass(frozen=True)
class ResolvedSpec:
    id: str
    canonical: dict
    cfg: Config
    tokenizer: ByteTokenizer | CharTokenizer | None
    inputs: np.ndarray  # (n_seq, T)
    targets: np.ndarray  # (n_seq, T)
    seed: int
    dtype: str
    # The bug lab: the faults the trace's backward runs with (a quiz's hidden one included,
    # which the canonical spec never names) and the layer they hit.
    faults: tuple[str, ...] = ()
    fault_layer: int | None = None
    quiz: int | None = None
    # Checkpoints and training (app.spec_models): the checkpoint the weights come from (None:
    # a random init from the seed), the optimizer of the update step and the steps before it.
    checkpoint: ModelInfo | None = None
    optimizer: dict | None = None
    train_steps: int = 0

    def token_labels(self, ids) -> list[str]:
        if self.tokenizer is None:
            return [str(int(i)) for i in ids]
        return [self.tokenizer.token_label(int(i)) for i in ids]


def _limit(loc, value, low, high, what=""):
    if value is not None and not low <= value <= high:
        raise SpecError(loc, f"{loc[-1]} must be between {low} and {high}{what}, got {value}")


def _resolve_config(spec: TraceSpec, settings: Settings, alphabet_size: int | None) -> Config:
    given = spec.config.model_dump(exclude_none=True) if spec.config else {}
    values = {**DEFAULT_CONFIG, **given}
    tokenizer = spec.tokenizer or "char"
    if "vocab_size" not in given:
        values["vocab_size"] = 256 if tokenizer == "byte" else (alphabet_size or 96)
    loc = ("body", "config")
    _limit(loc + ("n_layer",), values["n_layer"], 1, settings.max_n_layer)
    _limit(loc + ("n_head",), values["n_head"], 1, settings.max_n_head)
    _limit(loc + ("n_kv_head",), values["n_kv_head"], 1, settings.max_n_head)
    _limit(loc + ("n_embd",), values["n_embd"], 2, settings.max_n_embd)
    _limit(loc + ("ffn_hidden",), values["ffn_hidden"], 1, settings.max_ffn_hidden)
    _limit(loc + ("seq_len",), values["seq_len"], 1, settings.max_seq_len)
    _limit(loc + ("vocab_size",), values["vocab_size"], 1, settings.max_vocab_size)
    _limit(loc + ("rope_theta",), values["rope_theta"], 1.0, 1e7)
    _limit(loc + ("norm_eps",), values["norm_eps"], 1e-12, 1.0)
    try:
        cfg = Config(**values)
    except ValueError as exc:
        field = str(exc).split(" ", 1)[0]
        raise SpecError(loc + ((field,) if field in CONFIG_FIELDS else ()), str(exc)) from None
    if cfg.n_params() > settings.max_params:
        raise SpecError(
            loc, f"this config has {cfg.n_params():,} parameters, more than the limit of {settings.max_params:,}"
        )
    if tokenizer == "byte" and cfg.vocab_size < 256 and spec.tokens is None:
        raise SpecError(loc + ("vocab_size",), f"the byte tokenizer needs vocab_size >= 256, got {cfg.vocab_size}")
    if alphabet_size and cfg.vocab_size < alphabet_size:
        raise SpecError(
            loc + ("vocab_size",),
            f"the text has {alphabet_size} distinct characters, more than vocab_size = {cfg.vocab_size}",
        )
    return cfg


def _token_rows(spec: TraceSpec, tokenizer, settings: Settings) -> list[list[int]]:
    if spec.tokens is not None:
        rows = spec.tokens if spec.tokens and isinstance(spec.tokens[0], list) else [spec.tokens]
        if len(rows) > settings.max_n_seq:
            raise SpecError(("body", "tokens"), f"at most {settings.max_n_seq} sequences, got {len(rows)}")
        if len({len(r) for r in rows}) > 1:
            raise SpecError(("body", "tokens"), "every row of tokens must have the same length")
        return rows
    ids = tokenizer.encode(spec.text)
    return [ids]


def _check_trace_bytes(cfg: Config, n_seq: int, T: int, dtype: str, settings: Settings) -> None:
    """Refuses, before building it, a trace larger than settings.max_trace_bytes: each limit
    alone allows a config whose attention maps alone would take gigabytes."""
    itemsize = np.dtype(dtype).itemsize
    estimate = estimate_trace_bytes(cfg, n_seq, T, itemsize)
    if estimate > settings.max_trace_bytes:
        mb = 1 << 20
        raise SpecError(
            ("body", "config"),
            f"this trace would hold about {estimate / mb:,.0f} MB ({n_seq} sequence(s) × {T} positions, "
            f"{cfg.n_layer} layers × {cfg.n_head} heads, {dtype}), more than the limit of "
            f"{settings.max_trace_bytes / mb:,.0f} MB (max_trace_bytes): use fewer positions, sequences, "
            "layers or heads",
        )


def resolve(spec: TraceSpec, settings: Settings) -> ResolvedSpec:
    """Validates a spec against the limits and resolves it; raises SpecError."""
    given_config = spec.config.model_dump(exclude_none=True) if spec.config else {}
    checkpoint = resolve_checkpoint(spec.model, given_config, settings)  # (info, cfg) or None
    _limit(("body", "seed"), spec.seed, 0, settings.max_seed)
    if spec.text is not None and spec.tokens is not None:
        raise SpecError(("body", "tokens"), "give text or tokens, not both")
    text = spec.text if spec.text is not None or spec.tokens is not None else DEFAULT_TEXT
    if spec.tokens is None and len(text) > settings.max_text_chars:
        raise SpecError(
            ("body", "text"), f"text has {len(text)} characters, more than the limit of {settings.max_text_chars}"
        )
    tokenizer_name = spec.tokenizer or "char"
    tokenizer = None
    if checkpoint is not None:
        tokenizer = checkpoint_tokenizer(
            checkpoint[0], settings, spec.tokenizer, None if spec.tokens is not None else text
        )
        tokenizer_name = tokenizer.name if tokenizer is not None else None
    elif spec.tokens is None:
        if len(text) == 0:
            raise SpecError(("body", "text"), "text is empty: type at least two characters")
        tokenizer = make_tokenizer(tokenizer_name, text)
    elif spec.tokenizer == "byte":
        tokenizer = ByteTokenizer()
    spec = spec.model_copy(update={"text": text if spec.tokens is None else None})
    alphabet = tokenizer.vocab_size if isinstance(tokenizer, CharTokenizer) else None
    cfg = checkpoint[1] if checkpoint is not None else _resolve_config(spec, settings, alphabet)
    rows = _token_rows(spec, tokenizer, settings)
    ids = np.asarray(rows, dtype=np.int64)
    field = ("body", "tokens") if spec.tokens is not None else ("body", "text")
    if ids.shape[1] < 2:
        raise SpecError(field, f"need at least 2 tokens (inputs are ids[:-1], targets ids[1:]), got {ids.shape[1]}")
    if ids.shape[1] - 1 > cfg.seq_len:
        raise SpecError(
            field, f"{ids.shape[1]} tokens give T = {ids.shape[1] - 1} positions, more than seq_len = {cfg.seq_len}"
        )
    if ids.min() < 0 or ids.max() >= cfg.vocab_size:
        raise SpecError(
            field, f"token ids must lie in [0, vocab_size = {cfg.vocab_size}), got {int(ids.min())}..{int(ids.max())}"
        )
    _check_trace_bytes(cfg, ids.shape[0], ids.shape[1] - 1, spec.dtype, settings)
    faults, fault_layer = _resolve_faults(spec, cfg, settings)
    optimizer = resolve_training(spec.optimizer, spec.train_steps, cfg, ids.shape[0] * (ids.shape[1] - 1), settings)
    canonical = {
        "model": checkpoint[0].name if checkpoint is not None else None,
        "config": None if checkpoint is not None else cfg.to_dict(),  # a checkpoint fixes it
        "tokenizer": tokenizer_name if tokenizer is not None else None,
        "seed": 0 if checkpoint is not None else spec.seed,  # no random init: the seed plays no part
        "text": spec.text,
        "tokens": None if spec.tokens is None else ids.tolist(),
        "dtype": spec.dtype,
        "faults": [] if spec.quiz is not None else list(faults),
        "fault_layer": fault_layer,
        "quiz": spec.quiz,
        "optimizer": optimizer,
        "train_steps": spec.train_steps,
    }
    return ResolvedSpec(
        spec_id(canonical), canonical, cfg, tokenizer, ids[:, :-1], ids[:, 1:], spec.seed, spec.dtype,
        faults=faults, fault_layer=fault_layer, quiz=spec.quiz,
        checkpoint=checkpoint[0] if checkpoint is not None else None, optimizer=optimizer, train_steps=spec.train_steps,
    )  # fmt: skip


def spec_id(canonical: dict) -> str:
    """A trace's id: the hash of its canonical spec."""
    return hashlib.sha256(json.dumps(canonical, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:20]


def without_faults(spec: ResolvedSpec) -> ResolvedSpec:
    """The same spec with the correct backward: the bug lab's reference trace."""
    canonical = {**spec.canonical, "faults": [], "fault_layer": None, "quiz": None}
    return replace(spec, id=spec_id(canonical), canonical=canonical, faults=(), fault_layer=None, quiz=None)


def _resolve_faults(spec: TraceSpec, cfg: Config, settings: Settings) -> tuple[tuple[str, ...], int | None]:
    """(the faults the backward runs with, sorted; their layer), or ((), None) without any.
    A quiz's fault is chosen here, from its seed, and stays out of the canonical spec."""
    if spec.quiz is not None:
        if spec.faults:
            raise SpecError(("body", "quiz"), "a quiz hides its own fault: send faults = [] with quiz, or drop quiz")
        _limit(("body", "quiz"), spec.quiz, 0, settings.max_seed)
    elif not spec.faults:
        return (), None  # fault_layer alone changes nothing: the canonical spec drops it
    layer = default_fault_layer(cfg) if spec.fault_layer is None else spec.fault_layer
    if not 0 <= layer < cfg.n_layer:
        raise SpecError(
            ("body", "fault_layer"),
            f"fault_layer must be between 0 and {cfg.n_layer - 1} (the model has {cfg.n_layer} layer(s)), got {layer}",
        )
    if spec.quiz is not None:
        return (quiz_fault(spec.quiz, cfg),), layer
    names = tuple(sorted(set(spec.faults)))
    for name in names:
        fault = CATALOGUE.get(name)
        if fault is None:
            raise SpecError(
                ("body", "faults"), f"unknown fault {name!r}; GET /api/faults lists them: {', '.join(CATALOGUE)}"
            )
        reason = fault.requires(cfg)
        if reason:
            raise SpecError(("body", "faults"), f"fault {name!r} does not apply to this config: it {reason}")
    try:
        fault_override(cfg, names, layer)  # two faults on one step
    except ValueError as exc:
        raise SpecError(("body", "faults"), str(exc)) from None
    return names, layer


# ---------------------------------------------------------------------- query strings (/walk permalinks)

_QUERY_SCALARS = ("model", "tokenizer", "seed", "text", "dtype", "train_steps", "fault_layer", "quiz")


def spec_from_query(params: Mapping[str, str]) -> TraceSpec:
    """/walk?text=...&n_layer=1&seed=3 -> TraceSpec. Config fields are flat; tokens are
    '1,2,3' (rows separated by ';'); faults comma-separated. `step` is not part of the spec."""
    data: dict[str, Any] = {}
    config: dict[str, Any] = {}
    for key, value in params.items():
        if key == "step":
            continue
        if key in CONFIG_FIELDS:
            config[key] = value
        elif key in _QUERY_SCALARS:
            data[key] = value if value != "" or key == "text" else None
        elif key == "tokens":
            try:
                rows = [[int(t) for t in row.split(",") if t.strip()] for row in value.split(";")]
            except ValueError:
                raise SpecError(("query", "tokens"), "tokens must be integers separated by commas") from None
            data["tokens"] = rows[0] if len(rows) == 1 else rows
        elif key == "faults":
            data["faults"] = [f for f in value.split(",") if f]
        elif key == "optimizer" or key in OPTIMIZER_FIELDS:
            continue  # gathered below, into one optimizer object
        else:
            raise SpecError(("query", key), f"unknown parameter {key!r}")
    if config:
        data["config"] = config
    optimizer = optimizer_from_query(params)
    if optimizer is not None:
        data["optimizer"] = optimizer
    try:
        return TraceSpec.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ("query",) + tuple(str(p) for p in err["loc"] if not isinstance(p, int))
        raise SpecError(loc, f"{'.'.join(loc[1:])}: {err['msg']}") from None


def spec_to_query(canonical: dict) -> dict[str, str]:
    """The inverse of spec_from_query for a canonical spec: a flat, complete permalink."""
    query: dict[str, str] = {}
    for key in ("model", "tokenizer", "text"):
        if canonical.get(key) is not None:
            query[key] = canonical[key]
    query["seed"] = str(canonical["seed"])
    query["dtype"] = canonical["dtype"]
    if canonical.get("tokens") is not None:
        query["tokens"] = ";".join(",".join(map(str, row)) for row in canonical["tokens"])
    for key, value in (canonical["config"] or {}).items():  # None: the model's checkpoint fixes it
        query[key] = str(value).lower() if isinstance(value, bool) else str(value)
    if canonical.get("faults"):
        query["faults"] = ",".join(canonical["faults"])
    query.update(optimizer_to_query(canonical.get("optimizer")))
    if canonical.get("train_steps"):
        query["train_steps"] = str(canonical["train_steps"])
    if canonical.get("quiz") is not None:
        query["quiz"] = str(canonical["quiz"])
    if canonical.get("fault_layer") is not None:
        query["fault_layer"] = str(canonical["fault_layer"])
    return query
