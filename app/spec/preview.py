"""What a spec naming a checkpoint would be, before it is started: the checkpoint's own
tokenizer's pieces of the text and their count, the most positions and training steps the
server would take (GET /api/tokenize; the home form shows them as the text is typed), and the
most positions each checkpoint of GET /api/models takes."""

from __future__ import annotations

from app.checkpoints import real_models
from app.checkpoints.registry import ModelInfo, model_settings, registry
from app.errors import SpecError
from app.settings import Settings
from app.spec.checkpoint import checkpoint_tokenizer, resolve_checkpoint
from app.spec.resolve import check_build_bytes, check_trace_bytes
from app.spec.training import OPTIMIZER_LABELS, canonical_optimizer, train_steps_limit
from app.words.said import Grouped, Said
from xt_core import Config
from xt_core.checkpoint import CheckpointError

DTYPES = ("float32", "float64")


def max_positions(cfg: Config, dtype: str, settings: Settings, optimizer: str | None = None) -> int:
    """The most positions (T) of one sequence a spec naming this checkpoint may have at `dtype`:
    its seq_len, or fewer where the trace would pass max_trace_bytes, found by asking the very
    check POST /api/traces makes (app.spec.resolve) by bisection (the estimate grows with T).
    `optimizer`: the one training steps first use (its state counts; the trace then holds weights
    of its own instead of borrowing the checkpoint's, as resolve decides), and one step of them
    must fit max_train_seconds; None: no training first. 0: not one fits."""
    training = optimizer is not None
    shared = not training  # check_trace_bytes lends them to a float32 trace only
    canonical = canonical_optimizer({"name": optimizer}, 1) if training else None

    def fits(T: int) -> bool:
        try:
            check_trace_bytes(cfg, 1, T, dtype, settings, shared, fixed_sizes=True)
            check_build_bytes(cfg, 1, T, dtype, int(training), canonical, shared, settings)
        except SpecError:
            return False
        return not training or train_steps_limit(cfg, 1, T, dtype, settings) >= 1

    if fits(cfg.seq_len):
        return cfg.seq_len
    low, high = 0, cfg.seq_len  # fits(high) is false; low is 0 or fits
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if fits(mid) else (low, mid)
    return low


def position_limits(info: ModelInfo, cfg: Config, settings: Settings) -> dict:
    """{dtype: {"step": T, "training": {optimizer: T}}}: the most positions of one sequence (the home
    form's text) with no training before the step, and with train_steps > 0 by each optimizer."""
    settings = model_settings(info, settings)
    return {
        dtype: {"step": max_positions(cfg, dtype, settings), "training": training_positions(cfg, dtype, settings)}
        for dtype in DTYPES
    }


def training_positions(cfg: Config, dtype: str, settings: Settings) -> dict[str, int]:
    """{optimizer: the most positions with training steps first by it} (the home form's optimizers)."""
    return {name: max_positions(cfg, dtype, settings, name) for name in OPTIMIZER_LABELS}


def listing(settings: Settings) -> list[dict]:
    """GET /api/models' `models` (the registry's listing), each with its `max_positions`."""
    models = registry(settings)
    infos = {info.name: info for info in models.available()}
    out = []
    for entry in models.listing():
        info = infos.get(entry["name"])
        try:  # an upload that came or went between the two scans is listed without its limits
            summary = models.summary(info) if info is not None else None
        except (CheckpointError, OSError):
            summary = None
        if summary is not None:
            entry["max_positions"] = position_limits(info, summary.cfg, settings)
        out.append(entry)
    return out


def tokenize_preview(model: str, text: str, dtype: str, settings: Settings) -> dict:
    """{model, tokenizer, tokenizer_label, count, positions, pieces, seq_len, max_positions,
    max_positions_training, max_train_steps} for `text` as the checkpoint `model` encodes it.
    Raises SpecError (loc in the query) as POST /api/traces would for the same model, text and
    dtype without training steps: unknown model, too long a text, characters a char model
    lacks, a model without a tokenizer, more positions than the model takes (seq_len or
    max_trace_bytes)."""
    try:
        info, cfg = resolve_checkpoint(model, {}, settings)
        settings = model_settings(info, settings)  # a real model's own limits
        tokenizer = checkpoint_tokenizer((info, cfg), settings, None, text)
        ids = tokenizer.encode(text)
        positions = max(0, len(ids) - 1)
        most = max_positions(cfg, dtype, settings)
        if positions > most:
            raise _too_many(info.name, cfg, positions, most, dtype, settings)
    except SpecError as exc:
        raise SpecError(("query", exc.loc[-1]), exc.msg) from None
    label = real_models.listing_extras(info.name)["tokenizer_label"] if info.origin == "real" else None
    return {
        "model": info.name,
        "tokenizer": tokenizer.name,
        "tokenizer_label": label,
        "count": len(ids),
        "positions": positions,
        "pieces": [tokenizer.token_label(i) for i in ids],
        "seq_len": cfg.seq_len,
        # one sequence of this text (the home form's) at this dtype: the most positions without
        # and with training steps first by each optimizer, and the most training steps (the seconds they take)
        "max_positions": most,
        "max_positions_training": training_positions(cfg, dtype, settings),
        "max_train_steps": train_steps_limit(cfg, 1, max(1, positions), dtype, settings),
    }


def _too_many(name: str, cfg: Config, positions: int, most: int, dtype: str, settings: Settings) -> SpecError:
    """The refusal of a text longer than the model takes, at the field POST /api/traces names
    (its own check decides: `dtype` when float32 would take it, else `text`), the message naming
    the most positions and the limit they come from."""
    if positions > cfg.seq_len:  # POST checks the model's own length first
        return SpecError(
            ("body", "text"),
            Said("error-preview-past-seq-len", positions=str(positions), seq_len=str(cfg.seq_len), model=repr(name)),
        )
    try:
        check_trace_bytes(cfg, 1, positions, dtype, settings, shared=True, fixed_sizes=True)
        field = "text"
    except SpecError as exc:
        field = exc.loc[-1]
    values = {
        "positions": str(positions), "model": repr(name), "dtype": dtype,
        "limit": Grouped(round(settings.max_trace_bytes / (1 << 20))),
    }  # fmt: skip
    message = (
        Said("error-preview-takes", most=str(most), **values) if most else Said("error-preview-takes-none", **values)
    )
    if field == "dtype":
        in_float32 = max_positions(cfg, "float32", settings)
        return SpecError(("body", "dtype"), Said("error-preview-use-float32", message=message, most=str(in_float32)))
    return SpecError(("body", "text"), Said("error-preview-shorter-text", message=message))
