"""The spec's model, optimizer and train_steps: which checkpoint (it fixes the config and
the tokenizer), which optimizer makes the trace a training step, and how many training
steps run before it. app.spec.resolve calls these; every mistake is a SpecError naming
its field and the rule.
"""

from __future__ import annotations

from app.checkpoints.registry import ModelInfo, check_limits, registry
from app.errors import SpecError
from app.settings import Settings
from app.spec.core_words import core_said
from app.spec.schema import DEFAULT_TEXT
from app.words.said import Grouped, Said, said_of
from xt_core.checkpoint import CheckpointError
from xt_core.config import Config

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
        listing = Said("error-models-available", names=shown) if names else Said("error-no-models")
        raise SpecError(("body", "model"), Said("error-unknown-model", model=repr(model), listing=listing))
    try:
        cfg = models.summary(info).cfg  # its metadata, checked strictly
        if info.origin not in ("real", "served"):  # a real or served model: its own limits (model_settings)
            check_limits(cfg, settings)  # a file put there by hand, or limits lowered since it was stored
    except (CheckpointError, OSError) as exc:
        raise SpecError(
            ("body", "model"), Said("error-model-unusable", model=repr(model), reason=said_of(exc))
        ) from None
    config = cfg.to_dict()
    for field in config:
        if field in given_config:
            raise SpecError(
                ("body", "config", field),
                Said("error-model-fixes-config", model=repr(model), field=field, value=str(config[field])),
            )
    return info, cfg


def own_example(checkpoint: tuple[ModelInfo, Config] | None, settings: Settings) -> str:
    """The text of a spec that gives neither text nor tokens: a checkpoint's own first example
    (a char model knows only its alphabet: a text of another would be refused), else DEFAULT_TEXT."""
    if checkpoint is None:
        return DEFAULT_TEXT
    examples = registry(settings).summary(checkpoint[0]).meta.get("examples") or []
    return examples[0] if examples else DEFAULT_TEXT


def check_text_length(text: str, most_positions: int, max_token_chars: int, whose: Said) -> None:
    """Refuses, before it is tokenized, a text that cannot fit: a token covers at most
    `max_token_chars` characters, so n characters give at least n / max_token_chars tokens. The
    work before this check is bounded by the request's own size (max_body_bytes, max_query_bytes);
    the person meets the model's positions, never a count of characters."""
    if len(text) > (most_positions + 1) * max_token_chars:
        at_least = -(-len(text) // max_token_chars) - 1
        raise SpecError(
            ("body", "text"),
            Said("error-text-too-long", at_least=Grouped(at_least), most=Grouped(most_positions), whose=whose),
        )


def checkpoint_tokenizer(
    checkpoint: tuple[ModelInfo, Config], settings: Settings, requested: str | None, text: str | None
):
    """The checkpoint's tokenizer (None for imported weights, which need token ids). A
    requested tokenizer must be the checkpoint's own; the text must be in its alphabet and give
    no more positions than the model has (a text too long for them refused before it is tokenized)."""
    info, cfg = checkpoint
    try:
        tokenizer = registry(settings).tokenizer(info)
    except (CheckpointError, OSError) as exc:
        raise SpecError(
            ("body", "model"), Said("error-model-unreadable", model=repr(info.name), reason=said_of(exc))
        ) from None
    own = tokenizer.name if tokenizer is not None else None
    if requested is not None and requested != own:
        model, asked = repr(info.name), repr(requested)
        refusal = (
            Said("error-model-tokenizer", model=model, own=own, requested=asked)
            if own
            else Said("error-model-no-tokenizer-asked", model=model, requested=asked)
        )
        raise SpecError(("body", "tokenizer"), refusal)
    if text is not None:
        if tokenizer is None:
            raise SpecError(("body", "text"), Said("error-model-no-tokenizer", model=repr(info.name)))
        check_text_length(
            text, cfg.seq_len, tokenizer.max_token_chars,
            Said("error-whose-model", model=repr(info.name), seq_len=str(cfg.seq_len)),
        )  # fmt: skip
        try:
            tokenizer.encode(text)
        except ValueError as exc:
            reason, model = core_said(str(exc)), repr(info.name)
            refusal = (
                Said("error-text-outside-alphabet", reason=reason, model=model, chars=repr("".join(tokenizer.chars)))
                if own == "char"
                else Said("error-text-unencodable", reason=reason, model=model)
            )
            raise SpecError(("body", "text"), refusal) from None
    return tokenizer


# ---------------------------------------------------------------------- query strings
