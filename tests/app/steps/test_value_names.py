"""A recorded tensor's entries on a colour bar, a value axis and in the hover (app/steps/axes.py
value_name) read in the page's language: a row's symbol that is a word ("scores") is the
catalogue's (names.ftl names-value-*), the formulas' letter in Russian (S); a letter stays."""

from __future__ import annotations

import re

import pytest

from app import words
from app.steps.axes import value_name, value_words_id
from xt_core.names import ROWS

SYMBOLS = {row.short for rows in ROWS.values() for row in rows}
WORD = re.compile(r"[A-Za-z]{3,}")


@pytest.mark.parametrize("symbol", sorted(s for s in SYMBOLS if WORD.search(s)))
def test_a_symbol_that_is_a_word_has_its_words_in_every_language(symbol):
    for lang in words.LANGUAGES:
        assert words.has(lang, value_words_id(symbol)), f"{lang}: no {value_words_id(symbol)} for the symbol {symbol!r}"
    # English as before the catalogue (the English pages are unchanged); Russian: a formula's symbol
    assert words.t("en", value_words_id(symbol)) == symbol
    assert set(WORD.findall(words.t("ru", value_words_id(symbol)))) <= {"attn", "ffn", "gelu"}


def test_value_names_in_english_and_russian():
    assert value_name("layers.0.attention.scores", False, "en") == "scores"
    assert value_name("layers.0.attention.scores", True, "ru") == "dL/dS"
    assert value_name("layers.1.feed_forward.out", True, "en") == "dL/dfeed-forward"
    assert value_name("layers.1.feed_forward.out", False, "ru") == "ffn"
    assert value_name("layers.0.attention.q_rot", True, "ru") == "dL/dq̃"
    assert value_name("layers.0.attention.probs", False, "ru") == "p"  # a letter stays
    assert value_name("layers.0.attention.wq", True, "ru") == "dL/dWq"  # a parameter's symbol
    assert value_name("layers.0.attention_norm", False, "ru") == "attention_norm"  # a parameter's name
