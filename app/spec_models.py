"""The spec's model, optimizer and train_steps: which checkpoint (it fixes the config and
the tokenizer), which optimizer makes the trace a training step, and how many training
steps run before it. app.spec.resolve calls these; every mistake is a SpecError naming
its field and the rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.errors import SpecError
from app.models import ModelInfo, registry
from app.settings import Settings
from app.training import OPTIMIZER_FIELDS, OptimizerFieldError, canonical_optimizer, max_steps_within, train_work
from xt_core.checkpoint import CheckpointError, tokenizer_from_dict
from xt_core.config import Config
from xt_core.optim import OPTIMIZERS

_MAX_NAMES_SHOWN = 6


def resolve_checkpoint(model: str | None, given_config: dict, settings: Settings) -> tuple[ModelInfo, Config] | None:
    """The checkpoint a spec names and its config, or None for a random init. Names are
    matched against the listing only (never used as a path)."""
    if model is None:
        return None
    models = registry(settings)
    info = models.info(model)
    if info is None:
        names = models.names()
        shown = ", ".join(names[:_MAX_NAMES_SHOWN]) + (" …" if len(names) > _MAX_NAMES_SHOWN else "")
        listing = f"available: {shown}" if names else "no checkpoints are installed; use null for a random init"
        raise SpecError(("body", "model"), f"unknown model {model!r}; GET /api/models lists them ({listing})")
    try:
        config = models.summary(info).config
        cfg = Config.from_dict(config)
    except (CheckpointError, ValueError, TypeError) as exc:
        raise SpecError(("body", "model"), f"model {model!r} cannot be read: {exc}") from None
    for field in config:
        if field in given_config:
            raise SpecError(
                ("body", "config", field),
                f"model {model!r} fixes the config ({field} = {config[field]}): drop config.{field}, "
                "or pick a random init (model null) to choose sizes",
            )
    return info, cfg


def checkpoint_tokenizer(info: ModelInfo, settings: Settings, requested: str | None, text: str | None):
    """The checkpoint's tokenizer (None for imported weights, which need token ids). A
    requested tokenizer must be the checkpoint's own; the text must be in its alphabet."""
    try:
        tokenizer = tokenizer_from_dict(registry(settings).summary(info).tokenizer)
    except CheckpointError as exc:
        raise SpecError(("body", "model"), f"model {info.name!r} cannot be read: {exc}") from None
    own = tokenizer.name if tokenizer is not None else None
    if requested is not None and requested != own:
        fix = f'send "{own}" or leave it out' if own else "leave it out and give token ids"
        raise SpecError(
            ("body", "tokenizer"), f"model {info.name!r} uses the {own or 'no'} tokenizer, not {requested!r}: {fix}"
        )
    if text is not None:
        if tokenizer is None:
            raise SpecError(
                ("body", "text"), f"model {info.name!r} has no tokenizer (imported weights): give token ids instead"
            )
        try:
            tokenizer.encode(text)
        except ValueError as exc:
            alphabet = f"; its characters are {''.join(tokenizer.chars)!r}" if own == "char" else ""
            raise SpecError(("body", "text"), f"{exc} of model {info.name!r}{alphabet}") from None
    return tokenizer


def resolve_training(
    optimizer: dict | None, train_steps: int, cfg: Config, n_tokens: int, settings: Settings
) -> dict | None:
    """The canonical optimizer (None: no update step) after checking train_steps' limits."""
    if not 0 <= train_steps <= settings.max_train_steps:
        raise SpecError(
            ("body", "train_steps"), f"train_steps must be between 0 and {settings.max_train_steps}, got {train_steps}"
        )
    try:
        canonical = canonical_optimizer(optimizer, train_steps)
    except OptimizerFieldError as exc:
        raise SpecError(("body", "optimizer", exc.field), exc.msg) from None
    if train_work(cfg, n_tokens, train_steps) > settings.max_train_work:
        most = max_steps_within(cfg, n_tokens, settings.max_train_work)
        raise SpecError(
            ("body", "train_steps"),
            f"train_steps = {train_steps} is more training than this server allows for a model of "
            f"{cfg.n_params():,} parameters on {n_tokens} tokens: at most {most} steps here "
            "(a smaller model or a shorter text allows more)",
        )
    return canonical


# ---------------------------------------------------------------------- query strings


def optimizer_from_query(params: Mapping[str, str]) -> dict[str, Any] | None:
    """optimizer=adamw&lr=0.003&beta2=0.99 -> {"name": "adamw", "lr": 0.003, "beta2": 0.99}."""
    given = {k: v for k, v in params.items() if k in OPTIMIZER_FIELDS}
    name = params.get("optimizer") or None
    if name is None:
        if given:
            field = next(iter(given))
            raise SpecError(("query", field), f"{field} is an optimizer field: add optimizer=adamw or optimizer=sgd")
        return None
    out: dict[str, Any] = {"name": name}
    for field, raw in given.items():
        try:
            out[field] = float(raw)
        except ValueError:
            raise SpecError(("query", field), f"{field} must be a number, got {raw!r}") from None
    return out


def optimizer_to_query(optimizer: dict | None) -> dict[str, str]:
    """The canonical optimizer as query keys: its name and the fields that differ from the
    optimizer's defaults (the permalink stays short; the spec it parses to is the same)."""
    if optimizer is None:
        return {}
    defaults = OPTIMIZERS[optimizer["name"]]()
    query = {"optimizer": optimizer["name"]}
    for field in OPTIMIZER_FIELDS:
        if field in optimizer and optimizer[field] != getattr(defaults, field):
            query[field] = repr(optimizer[field])
    return query
