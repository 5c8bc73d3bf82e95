"""The models' words in the page's language: a listing entry (GET /api/models, the home form)
with its description, its tokenizer's name and its example texts from the catalogue
(app/words/locales/*/models.ftl). English is the entry as the file or xt_core's zoo gives it
(models.ftl's English is that same text, tests/app/test_errors_words.py checks it); a model the
catalogue does not know (an upload, a served file) keeps its own words, marked `lang="en"` by the page.

A real model whose tokenizer takes Cyrillic (byte-level BPE) gets examples in the language; a char
demo model knows only its alphabet, so its examples stay as they are and its description says so.
"""

from __future__ import annotations

from app import words

# A model's message in models.ftl by its name: its value is the description; a real model's
# .tokenizer and .example-1, .example-2 attributes are its tokenizer's name and example texts.
MODEL_MESSAGES = {
    "induction": "model-induction",
    "text": "model-text",
    "gpt2-text": "model-gpt2-text",
    "smollm2-135m": "model-smollm2-135m",
}
EXAMPLE_ATTRIBUTES = ("example-1", "example-2")


def examples(name: str, lang: str) -> list[str]:
    """A real model's example texts in `lang` (the catalogue's attributes .example-1, .example-2)."""
    return [words.t(lang, f"{MODEL_MESSAGES[name]}.{attribute}") for attribute in EXAMPLE_ATTRIBUTES]


def tokenizer_label(name: str, lang: str) -> str:
    return words.t(lang, f"{MODEL_MESSAGES[name]}.tokenizer")


def model_in(entry: dict, lang: str) -> dict:
    """A listing entry with its words in `lang` (the entry itself in English or for an unknown model)."""
    message = MODEL_MESSAGES.get(entry["name"])
    if lang == words.DEFAULT or message is None or entry.get("kind") not in ("demo", "real"):
        return entry
    shown = {**entry, "description": words.t(lang, message)}
    if entry["kind"] == "real":
        shown["examples"] = examples(entry["name"], lang)
        if entry.get("tokenizer_label") is not None:
            shown["tokenizer_label"] = tokenizer_label(entry["name"], lang)
    return shown


def fetchable_in(entry: dict, lang: str) -> dict:
    """A real model not fetched here (real_models.absent) with its description and command in `lang`."""
    shown = {**entry, "command": words.t(lang, "model-fetch-command", model=entry["name"])}
    if lang != words.DEFAULT and entry["name"] in MODEL_MESSAGES:
        shown["description"] = words.t(lang, MODEL_MESSAGES[entry["name"]])
    return shown
