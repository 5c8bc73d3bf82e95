"""The trace spec: what a user asks for (JSON body or /walk query string), validated
against the limits in Settings and resolved into a config, token ids and a stable id.

A trace is a pure function of its canonical spec; the id is a hash of it, so an evicted
trace can be rebuilt and a URL carrying the spec is a permalink.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from app.checkpoints.registry import NORM_EPS_RANGE, ROPE_THETA_RANGE, ModelInfo, model_settings
from app.errors import SpecError, check_between, shown_number
from app.settings import Settings
from app.spec.checkpoint import check_text_length, checkpoint_tokenizer, own_example, resolve_checkpoint
from app.spec.core_words import core_said
from app.spec.cost import build_cost
from app.spec.faults import quiz_weights_seed, resolve_faults
from app.spec.precision import resolve_precision
from app.spec.schema import CONFIG_FIELDS, DEFAULT_CONFIG, TraceSpec
from app.spec.training import resolve_training
from app.words.said import Grouped, Said
from xt_core import Config
from xt_core.names import estimate_build_bytes
from xt_core.precision import Precision
from xt_core.text.byte_char import ByteTokenizer, CharTokenizer, make_tokenizer


@dataclass(frozen=True)
class RecordedStep:
    """A recorded run's step (app.spec.run_step): its run's folder, the step, the steps its rebuild replays."""

    folder: Path
    step: int
    replayed: int


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
    # A quiz's own weights (xt_core.lab.quiz_weights): the seed drawn from the server's secret and
    # the canonical spec (app.spec.faults.quiz_weights_seed). Part of the spec, never sent: the
    # canonical spec and the id leave it out; None for every other spec.
    hidden_weights: int | None = None
    # Checkpoints and training (app.spec.checkpoint, app.spec.training): the checkpoint the weights come from (None:
    # a random init from the seed), the optimizer of the update step and the steps before it.
    checkpoint: ModelInfo | None = None
    optimizer: dict | None = None
    train_steps: int = 0
    # a bfloat16 or float16 step's rounding model and loss scale (app.spec.precision); None: dtype's own
    precision: Precision | None = None
    # a recorded run's step (app.spec.run_step): rebuilt from the run's checkpoint, not built from the fields above
    run: RecordedStep | None = None

    @property
    def loss_scale_growth(self) -> int | None:
        """The dynamic scaler's growth interval over the training steps (None: a static scale)."""
        return self.canonical.get("loss_scale_growth")

    def token_labels(self, ids) -> list[str]:
        if self.tokenizer is None:
            return [str(int(i)) for i in ids]
        return [self.tokenizer.token_label(int(i)) for i in ids]


def _resolve_config(spec: TraceSpec, settings: Settings, alphabet_size: int | None) -> Config:
    given = spec.config.model_dump(exclude_none=True) if spec.config else {}
    values = {**DEFAULT_CONFIG, **given}
    tokenizer = spec.tokenizer or "char"
    if "vocab_size" not in given:
        values["vocab_size"] = 256 if tokenizer == "byte" else (alphabet_size or 96)
    loc = ("body", "config")
    check_between(loc + ("n_layer",), values["n_layer"], 1, settings.max_n_layer)
    check_between(loc + ("n_head",), values["n_head"], 1, settings.max_n_head)
    check_between(loc + ("n_kv_head",), values["n_kv_head"], 1, settings.max_n_head)
    check_between(loc + ("n_embd",), values["n_embd"], 2, settings.max_n_embd)
    check_between(loc + ("ffn_hidden",), values["ffn_hidden"], 1, settings.max_ffn_hidden)
    check_between(loc + ("seq_len",), values["seq_len"], 1, settings.max_seq_len)
    check_between(loc + ("vocab_size",), values["vocab_size"], 1, settings.max_vocab_size)
    check_between(loc + ("rope_theta",), values["rope_theta"], *ROPE_THETA_RANGE)
    check_between(loc + ("norm_eps",), values["norm_eps"], *NORM_EPS_RANGE)
    if "head_dim" in values:  # omitted: n_embd / n_head, within the limits above
        check_between(loc + ("head_dim",), values["head_dim"], 1, settings.max_n_embd)
    try:
        cfg = Config(**values)
    except ValueError as exc:
        field = str(exc).split(" ", 1)[0]
        raise SpecError(loc + ((field,) if field in CONFIG_FIELDS else ()), core_said(str(exc))) from None
    if cfg.n_params() > settings.max_params:
        raise SpecError(
            loc, Said("error-config-params", params=Grouped(cfg.n_params()), most=Grouped(settings.max_params))
        )
    if tokenizer == "byte" and cfg.vocab_size < 256 and spec.tokens is None:
        raise SpecError(loc + ("vocab_size",), Said("error-byte-vocab", vocab_size=str(cfg.vocab_size)))
    if alphabet_size and cfg.vocab_size < alphabet_size:
        raise SpecError(
            loc + ("vocab_size",), Said("error-text-alphabet", chars=alphabet_size, vocab_size=str(cfg.vocab_size))
        )
    return cfg


def _token_rows(spec: TraceSpec, tokenizer, settings: Settings) -> list[list[int]]:
    if spec.tokens is not None:
        rows = spec.tokens if spec.tokens and isinstance(spec.tokens[0], list) else [spec.tokens]
        if len(rows) > settings.max_n_seq:
            raise SpecError(("body", "tokens"), Said("error-token-rows", most=settings.max_n_seq, rows=len(rows)))
        if len({len(r) for r in rows}) > 1:
            raise SpecError(("body", "tokens"), Said("error-token-rows-ragged"))
        return rows
    ids = tokenizer.encode(spec.text)
    return [ids]


def check_trace_bytes(cfg: Config, n_seq: int, T: int, dtype: str, settings: Settings, shared: bool = False,
                      fixed_sizes: bool = False, tokens_given: bool = False) -> None:  # fmt: skip
    """Refuses, before building it, a trace whose build would hold more than settings.max_trace_bytes
    (xt_core.names.estimate_build_bytes: every forward value at once, before the trace keeps only its
    boundaries): each limit alone allows a config whose attention maps alone would take gigabytes. A checkpoint's sizes
    are fixed: the advice is then float32 or a shorter input, on the field that would help (the
    spec's text, or its token ids where it gave those). shared: a float32 trace would borrow the
    checkpoint's weights (no training steps replace them by its own)."""
    itemsize = np.dtype(dtype).itemsize
    estimate = estimate_build_bytes(cfg, n_seq, T, itemsize, shared_params=shared and dtype == "float32")
    limit, limit_name = trace_limit(settings)
    if estimate <= limit:
        return
    loc, advice = ("body", "config"), "error-advice-smaller"
    if fixed_sizes:
        in_float32 = estimate_build_bytes(cfg, n_seq, T, 4, shared_params=shared)
        shorter = (
            (("body", "tokens"), "error-advice-fewer-tokens")
            if tokens_given
            else (("body", "text"), "error-advice-shorter-text")
        )
        fits_float32 = dtype == "float64" and in_float32 <= limit
        loc, advice = (("body", "dtype"), "error-advice-float32") if fits_float32 else shorter
        if not (fits_float32 or shared) and estimate_build_bytes(cfg, n_seq, T, 4, shared_params=True) <= limit:
            advice = _OR_UNTRAINED[advice]
    mb = 1 << 20
    raise SpecError(
        loc,
        Said(
            "error-trace-bytes", mb=Grouped(round(estimate / mb)), n_seq=n_seq, positions=str(T),
            layers=str(cfg.n_layer), heads=str(cfg.n_head), dtype=dtype, limit=Grouped(round(limit / mb)),
            setting=limit_name, advice=Said(advice),
        ),
    )  # fmt: skip


# An advice for a checkpoint's trace, and the same with "or no training steps first".
_OR_UNTRAINED = {
    "error-advice-fewer-tokens": "error-advice-fewer-tokens-or-untrained",
    "error-advice-shorter-text": "error-advice-shorter-text-or-untrained",
    "error-advice-float32": "error-advice-float32-or-untrained",
}


def trace_limit(settings: Settings) -> tuple[int, str]:
    """The most bytes one trace may hold, and the setting that sets it: max_trace_bytes, or the
    whole trace budget (cache_bytes) where that is smaller, since a trace must fit in it."""
    if settings.cache_bytes < settings.max_trace_bytes:
        return settings.cache_bytes, Said("error-limit-cache-bytes")
    return settings.max_trace_bytes, "max_trace_bytes"


def _resolve_tokenizer(
    spec: TraceSpec, text: str, checkpoint: tuple[ModelInfo, Config] | None, settings: Settings
) -> tuple[ByteTokenizer | CharTokenizer | None, str | None]:
    """(tokenizer, its name): a checkpoint's own, else one built for the text; None when the
    spec gives token ids (a byte tokenizer still labels them if asked for)."""
    tokenizer_name = spec.tokenizer or "char"
    tokenizer = None
    if checkpoint is None and tokenizer_name == "bpe":
        raise SpecError(("body", "tokenizer"), Said("error-random-init-bpe"))
    if checkpoint is not None:
        tokenizer = checkpoint_tokenizer(
            checkpoint, settings, spec.tokenizer, None if spec.tokens is not None else text
        )
        tokenizer_name = tokenizer.name if tokenizer is not None else None
    elif spec.tokens is None:
        if len(text) == 0:
            raise SpecError(("body", "text"), Said("error-text-empty"))
        tokenizer = make_tokenizer(tokenizer_name, text)
    elif spec.tokenizer == "byte":
        tokenizer = ByteTokenizer()
    return tokenizer, tokenizer_name


def _check_token_rows(rows: list[list[int]], cfg: Config, field: tuple[str, ...]) -> None:
    """Rows of T + 1 token ids, checked before any array is made of them: at least 2 per row,
    at most seq_len positions, ids within the vocab (a JSON integer may be any size)."""
    n = len(rows[0]) if rows else 0
    if n < 2:
        raise SpecError(field, Said("error-too-few-tokens", count=str(n)))
    if n - 1 > cfg.seq_len:
        raise SpecError(field, Said("error-too-many-tokens", count=n, positions=str(n - 1), seq_len=str(cfg.seq_len)))
    low, high = min(min(row) for row in rows), max(max(row) for row in rows)
    if low < 0 or high >= cfg.vocab_size:
        raise SpecError(
            field,
            Said("error-token-ids", vocab_size=str(cfg.vocab_size), low=shown_number(low), high=shown_number(high)),
        )


def _random_init_takes(settings: Settings) -> Said:
    """Whose positions a random init's text is held to (a too long text's message names them)."""
    return Said("error-whose-random-init", seq_len=str(settings.max_seq_len))


def resolve(spec: TraceSpec, settings: Settings) -> ResolvedSpec:
    """Validates a spec against the limits and resolves it; raises SpecError."""
    from app.spec import run_step  # it builds on this module's checks

    if run_step.is_run_step(spec):
        return run_step.resolve_run_step(spec, settings)
    given_config = spec.config.model_dump(exclude_none=True) if spec.config else {}
    checkpoint = resolve_checkpoint(spec.model, given_config, settings)  # (info, cfg) or None
    settings = model_settings(checkpoint[0], settings) if checkpoint is not None else settings  # a real model's limits
    check_between(("body", "seed"), spec.seed, 0, settings.max_seed)
    if spec.text is not None and spec.tokens is not None:
        raise SpecError(("body", "tokens"), Said("error-text-and-tokens"))
    text = spec.text if spec.text is not None or spec.tokens is not None else own_example(checkpoint, settings)
    if spec.tokens is None and checkpoint is None:
        check_text_length(text, settings.max_seq_len, 1, _random_init_takes(settings))
    tokenizer, tokenizer_name = _resolve_tokenizer(spec, text, checkpoint, settings)
    spec = spec.model_copy(update={"text": text if spec.tokens is None else None})
    alphabet = tokenizer.vocab_size if isinstance(tokenizer, CharTokenizer) else None
    cfg = checkpoint[1] if checkpoint is not None else _resolve_config(spec, settings, alphabet)
    rows = _token_rows(spec, tokenizer, settings)
    field = ("body", "tokens") if spec.tokens is not None else ("body", "text")
    _check_token_rows(rows, cfg, field)
    ids = np.asarray(rows, dtype=np.int64)
    spec, precision_fields, precision = resolve_precision(spec)  # spec.dtype: what the arrays are held in
    # a float32 trace borrows a checkpoint's weights, unless training steps or a quiz's own weights replace them
    shared = checkpoint is not None and not spec.train_steps and spec.quiz is None
    given = (shared, checkpoint is not None, spec.tokens is not None)  # borrowed, a checkpoint's, token ids
    check_trace_bytes(cfg, ids.shape[0], ids.shape[1] - 1, spec.dtype, settings, *given)
    faults, fault_layer = resolve_faults(spec, cfg, settings)
    model = checkpoint[0].name if checkpoint is not None else None
    optimizer = resolve_training(
        spec.optimizer, spec.train_steps, cfg, ids.shape[0], ids.shape[1] - 1, spec.dtype, settings, model
    )
    canonical = {
        "model": checkpoint[0].name if checkpoint is not None else None,
        "config": None if checkpoint is not None else cfg.to_dict(),  # a checkpoint fixes it
        "tokenizer": tokenizer_name if tokenizer is not None else None,
        "seed": 0 if checkpoint is not None else spec.seed,  # no random init: the seed plays no part
        "text": spec.text,
        "tokens": None if spec.tokens is None else ids.tolist(),
        **precision_fields,  # dtype, and a low-precision spec's loss scale: every other spec keeps its id
        "faults": [] if spec.quiz is not None else list(faults),
        "fault_layer": None if spec.quiz is not None else fault_layer,  # a quiz's layer is hidden too
        "quiz": spec.quiz,
        "optimizer": optimizer,
        "train_steps": spec.train_steps,
    }
    resolved = ResolvedSpec(
        spec_id(canonical), canonical, cfg, tokenizer, ids[:, :-1], ids[:, 1:], spec.seed, spec.dtype,
        faults=faults, fault_layer=fault_layer, quiz=spec.quiz, precision=precision,
        hidden_weights=None if spec.quiz is None else quiz_weights_seed(canonical, settings),
        checkpoint=checkpoint[0] if checkpoint is not None else None, optimizer=optimizer, train_steps=spec.train_steps,
    )  # fmt: skip
    # a checkpoint's sizes are fixed: then its text (or tokens) is what a learner can shorten
    where = field if checkpoint is not None else ("body", "train_steps")
    check_build_bytes(cfg, *ids[:, :-1].shape, spec.dtype, spec.train_steps, optimizer, shared, settings, where)
    return resolved


def check_build_bytes(
    cfg: Config, n_seq: int, T: int, dtype: str, train_steps: int, optimizer: dict | None, borrowed: bool,
    settings: Settings, loc: tuple = ("body", "train_steps"),
) -> None:  # fmt: skip
    """Refuses a spec whose build (its training steps and the optimizer's state with the recorded
    trace: app.spec.cost.build_cost, what admission reserves) would hold more than one trace may
    (trace_limit): such a build would never be admitted."""
    needed = build_cost(cfg, n_seq, T, dtype, train_steps, optimizer, borrowed).nbytes
    limit, limit_name = trace_limit(settings)
    if needed <= limit:
        return
    mb = 1 << 20
    raise SpecError(
        loc,
        Said(
            "error-build-bytes-random-init" if loc[-1] == "train_steps" else "error-build-bytes-model",
            mb=Grouped(round(needed / mb)), limit=Grouped(round(limit / mb)), setting=limit_name,
        ),
    )  # fmt: skip


def spec_id(canonical: dict) -> str:
    """A trace's id: the hash of its canonical spec."""
    return hashlib.sha256(json.dumps(canonical, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:20]


def without_faults(spec: ResolvedSpec) -> ResolvedSpec:
    """The same spec with the correct backward: the bug lab's reference trace. A quiz's keeps the
    quiz's own weights, and its id names them by their secret seed: no client can ask for it
    (its diff does not send it: app.buglab.views.diff_view), and it is no trace of a public spec."""
    canonical = {**spec.canonical, "faults": [], "fault_layer": None, "quiz": None}
    twin_id = canonical if spec.hidden_weights is None else {**canonical, "hidden_weights": spec.hidden_weights}
    return replace(spec, id=spec_id(twin_id), canonical=canonical, faults=(), fault_layer=None, quiz=None)


# ---------------------------------------------------------------------- query strings (/walk permalinks)
