"""The glossary in both languages (app/words/locales/<lang>/glossary.ftl): English reads as before
its words moved (glossary_en.json: main's table before the move), the walk page carries the
page's language's table, and the Russian one is complete, its spellings unique, with no English
word outside the names and code it quotes."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from app import words
from app.steps import glossary
from tests.app.words.test_catalogues import messages
from tests.helpers.specs import SMALL_SPEC

ENGLISH = json.loads((Path(__file__).parent / "glossary_en.json").read_text(encoding="utf-8"))


def test_english_reads_as_before():
    assert glossary.table("en") == ENGLISH


@pytest.mark.parametrize("lang", words.LANGUAGES)
def test_the_catalogue_holds_every_term_and_no_other(lang):
    held = {key.removeprefix("glossary-") for key in messages(lang) if key.startswith("glossary-")}
    assert held == set(glossary.KEYS)
    forms = [form for term in glossary.terms(lang) for form in term.forms]
    assert len(forms) == len(set(forms)) and all(forms)


# names and code no language translates, as the definitions quote them
ALLOWED = {"xt", "RoPE", "SwiGLU", "GQA", "LM", "RMSNorm", "NumPy", "Adam", "AdamW", "onehot", "silu", "softmax"}
ALLOWED |= {"up", "head"}
ALLOWED |= {"gemm_tn", "np.add.at", "table", "ids", "rows", "id", "inv", "dres", "max", "mean", "diag", "rms", "kv"}
ALLOWED |= {"float64", "float32", "docs/notation.md", "out", "in", "din", "dout", "dL", "dY", "dx", "dxb", "dx2b"}
ALLOWED |= {"x_in", "xb", "att", "attout", "proj", "x_mid", "x2", "x2b", "h1", "h3", "ha", "fo", "x_out", "xf"}
ALLOWED |= {"wte", "tok_embeddings", "dh1", "dh3", "dn", "da", "du", "dp", "L2", "z_w"}
LATIN = re.compile(r"[A-Za-z][A-Za-z0-9_./]*[A-Za-z0-9_]|[A-Za-z]")


def test_the_russian_glossary_is_russian():
    russian, english = glossary.terms("ru"), glossary.terms("en")
    for ru, en in zip(russian, english, strict=True):
        assert ru.definition != en.definition
        assert [w for w in LATIN.findall(ru.definition) if len(w) > 1 and w not in ALLOWED and "/" not in w] == [], (
            ru.term
        )
    assert next(t for t in russian if t.term == "якобиан").forms[:2] == ("якобиан", "якобиана")


def test_the_walk_page_carries_its_languages_glossary(client):
    query = {**SMALL_SPEC["config"], "text": SMALL_SPEC["text"], "seed": 1, "lang": "ru"}
    page = client.get("/walk", params=query)
    body = re.search(r'<script type="application/json" id="xt-glossary">(.*?)</script>', page.text, re.S)
    assert json.loads(html.unescape(body.group(1))) == glossary.table("ru")
