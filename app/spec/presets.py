"""The random-init presets the home page offers (and GET /api/models lists), their label,
description and a preset's own text in the page's language (app/words/locales/*/models.ftl)."""

from __future__ import annotations

import xt_core
from app import words
from app.spec.schema import DEFAULT_CONFIG


def presets(lang: str = words.DEFAULT) -> list[dict]:
    """The random-init presets the home page offers. Char-tokenizer presets leave
    vocab_size null: it is then the text's alphabet size. The class preset's byte tokenizer
    takes any alphabet: its text is in the page's language (at most 128 bytes, its positions)."""
    # The family said outright: a preset chosen after a GPT-2 checkpoint resets the form's family.
    tiny = {**DEFAULT_CONFIG, "vocab_size": None, "family": "llama"}
    class_cfg = {**xt_core.PRESETS["class"].to_dict(), "family": "llama"}
    return [
        {
            "name": "tiny-1",
            "label": words.t(lang, "model-preset-tiny-1"),
            "tokenizer": "char",
            "config": {**tiny, "n_layer": 1},
            "description": words.t(lang, "model-preset-tiny-1.description"),
        },
        {
            "name": "tiny-2",
            "label": words.t(lang, "model-preset-tiny-2"),
            "tokenizer": "char",
            "config": tiny,
            "description": words.t(lang, "model-preset-tiny-2.description"),
        },
        {
            "name": "class",
            "label": words.t(lang, "model-preset-class"),
            "tokenizer": "byte",
            "config": class_cfg,
            "text": words.t(lang, "model-preset-class.text"),
            "description": words.t(lang, "model-preset-class.description"),
        },
    ]
