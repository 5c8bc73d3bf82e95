"""What a spec naming a checkpoint would be, before it is started: the checkpoint's own
tokenizer's pieces of the text and their count, and the most training steps the server would
run before the step (GET /api/tokenize; the home form shows them as the text is typed)."""

from __future__ import annotations

from app.checkpoints import real_models
from app.checkpoints.registry import model_settings
from app.errors import SpecError
from app.settings import Settings
from app.spec.checkpoint import checkpoint_tokenizer, resolve_checkpoint
from app.spec.training import train_steps_limit


def tokenize_preview(model: str, text: str, dtype: str, settings: Settings) -> dict:
    """{model, tokenizer, tokenizer_label, count, positions, pieces, seq_len, max_train_steps}
    for `text` as the checkpoint `model` encodes it. Raises SpecError (loc in the query) as
    POST /api/traces would for the same model and text: unknown model, too long a text,
    characters a char model lacks, a model without a tokenizer."""
    try:
        info, cfg = resolve_checkpoint(model, {}, settings)
        settings = model_settings(info, settings)  # a real model's own limits
        if len(text) > settings.max_text_chars:
            raise SpecError(
                ("body", "text"), f"text has {len(text)} characters, more than the limit of {settings.max_text_chars}"
            )
        tokenizer = checkpoint_tokenizer(info, settings, None, text)
    except SpecError as exc:
        raise SpecError(("query", exc.loc[-1]), exc.msg) from None
    ids = tokenizer.encode(text)
    positions = max(0, len(ids) - 1)
    label = real_models.listing_extras(info.name)["tokenizer_label"] if info.format == "gguf" else None
    return {
        "model": info.name,
        "tokenizer": tokenizer.name,
        "tokenizer_label": label,
        "count": len(ids),
        "positions": positions,
        "pieces": [tokenizer.token_label(i) for i in ids],
        "seq_len": cfg.seq_len,
        # one sequence of this text (the home form's): the count, and the seconds it would take
        "max_train_steps": train_steps_limit(cfg, 1, max(1, positions), dtype, settings),
    }
