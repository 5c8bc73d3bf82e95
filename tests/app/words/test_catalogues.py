"""The catalogues (app/words/locales/*/*.ftl): every language has the same messages, each with the
same attributes and the same named values as English, and every plural form a message has is
reached (Russian: one, few, many, and other for fractions), through the server's formatter."""

from __future__ import annotations

import itertools

import pytest
from fluent.syntax import ast as FTL
from fluent.syntax import parse
from fluent.syntax.visitor import Visitor

from app import words


class _Walk(Visitor):
    """A message's named values, and its selects on a value (plural choices) by their keys."""

    def __init__(self):
        super().__init__()
        self.variables: set[str] = set()
        self.selects: list[tuple[str, list[str]]] = []

    def visit_VariableReference(self, node):
        self.variables.add(node.id.name)

    def visit_SelectExpression(self, node):
        if isinstance(node.selector, FTL.VariableReference):
            keys = [getattr(v.key, "name", None) or v.key.value for v in node.variants]
            self.selects.append((node.selector.id.name, keys))
        self.generic_visit(node)


def messages(lang: str) -> dict[str, FTL.Message]:
    resource = parse(words.catalogue_text(lang))
    junk = [entry.content for entry in resource.body if isinstance(entry, FTL.Junk)]
    assert junk == [], f"{lang}: unparsable catalogue text: {junk}"
    return {entry.id.name: entry for entry in resource.body if isinstance(entry, FTL.Message)}


def shape(message: FTL.Message) -> dict[str, set[str]]:
    """Each part of the message (its value, its .attributes) and the named values it uses."""
    parts = {"": message.value} | {f".{a.id.name}": a.value for a in message.attributes}
    found = {}
    for part, pattern in parts.items():
        walk = _Walk()
        if pattern is not None:
            walk.visit(pattern)
        found[part] = walk.variables
    return found


ENGLISH = messages(words.DEFAULT)


@pytest.mark.parametrize("lang", [lang for lang in words.LANGUAGES if lang != words.DEFAULT])
def test_every_language_has_the_same_messages_and_named_values_as_english(lang):
    other = messages(lang)
    assert sorted(set(ENGLISH) - set(other)) == [], f"{lang} lacks these messages"
    assert sorted(set(other) - set(ENGLISH)) == [], f"{lang} has messages English has not"
    differing = {
        key: (shape(ENGLISH[key]), shape(other[key])) for key in ENGLISH if shape(ENGLISH[key]) != shape(other[key])
    }
    assert differing == {}, f"{lang}: other parts or named values than English"


def _values(message: FTL.Message, plural: str, number) -> dict:
    walk = _Walk()
    walk.visit(message)
    return {name: (number if name == plural else "x") for name in walk.variables}


# A sample that reaches every CLDR plural category of the languages here: 1, 21 (one), 2, 3, 22
# (few), 0, 5, 11, 12, 25 (many; "other" in English), 1.5 (other, a fraction).
SAMPLE = (0, 1, 2, 3, 5, 11, 12, 21, 22, 25, 1.5)


@pytest.mark.parametrize("lang", words.LANGUAGES)
def test_every_plural_form_of_every_message_is_reached(lang):
    unreached = []
    for key, message in messages(lang).items():
        walk = _Walk()
        walk.visit(message)
        for plural, keys in walk.selects:
            part = "" if message.value is not None and plural in shape(message)[""] else None
            texts = {
                words.t(lang, key if part == "" else _attribute_id(message, plural), **_values(message, plural, n))
                for n in SAMPLE
            }
            if len(texts) < len(keys):
                unreached.append((key, plural, keys, sorted(texts)))
    assert unreached == []


def _attribute_id(message: FTL.Message, plural: str) -> str:
    for attribute in message.attributes:
        walk = _Walk()
        walk.visit(attribute.value)
        if plural in walk.variables:
            return f"{message.id.name}.{attribute.id.name}"
    raise AssertionError(f"{message.id.name}: ${plural} is in no part")


def test_russian_plurals_read_as_russian():
    count = {n: words.t("ru", "home-train-steps", most=n) for n in (1, 2, 5, 21, 22, 25, 11)}
    assert [count[n].split()[1] for n in (1, 2, 5, 21, 22, 25, 11)] == [
        "шаг",
        "шага",
        "шагов",
        "шаг",
        "шага",
        "шагов",
        "шагов",
    ]
    assert words.t("ru", "home-count", tokens=1.5, positions=0.5).startswith("1,5 токенов → 0,5 позиций")


def test_english_sentences_are_unchanged_by_the_layer():
    assert words.t("en", "home-train-steps", most=1) == "0–1 optimizer step on this text before the one you watch"
    assert (
        words.t("en", "home-count", tokens=1, positions=0)
        == "1 token → 0 positions (inputs = tokens[:-1], targets = tokens[1:])"
    )
    assert words.t("en", "frame-type-size.title") == "Larger text and figures for a projector"


def test_no_bidi_marks_and_no_missing_value_passes_silently():
    assert not any(c in words.t("ru", "home-upload-busy", file="a.bin") for c in "\u2068\u2069")
    with pytest.raises(words.MissingWords):
        words.t("ru", "home-upload-busy")  # its $file missing
    with pytest.raises(words.MissingWords):
        words.t("en", "home-no-such-message")


def test_an_unknown_language_reads_the_default():
    assert words.t("xx", "home-start") == words.t("en", "home-start")


def test_messages_are_used_by_the_moved_code():
    """No message is dead: each id appears in a template, the home scripts or app/routes/pages.py,
    or is a recorded tensor's (xt_core's table names it by its rows' words ids)."""
    from tests.test_code_shape import ROOT

    sources = "".join(
        path.read_text(encoding="utf-8")
        for path in itertools.chain(
            (ROOT / "templates").glob("*.html"),
            (ROOT / "static/js").rglob("*.js"),
            (ROOT / "app").rglob("*.py"),
            (ROOT / "xt_core" / "listing.py",),
        )
    )
    from app.steps.axes import value_words_id
    from xt_core.names import ROWS

    # a recorded tensor's words are asked for by its row's words id (xt_core/recorded.py); a glossary
    # term's by its key (app/steps/glossary.py KEYS); a fault's by its id
    # (tests/app/buglab/test_buglab_words.py); a lesson's stops are named by its TOML
    # (app/lessons/words.py: tests/app/lessons/test_lesson_words.py)
    worded = {
        f"{row.words_id}-{part}" for rows in ROWS.values() for row in rows for part in ("title", "label", "about")
    } | {value_words_id(row.short) for rows in ROWS.values() for row in rows}  # app/steps/axes.py value_name
    lessons = tuple(f"lesson-{path.stem}" for path in (ROOT / "lessons").glob("*.toml"))
    dead = [
        key
        for key in ENGLISH
        if key not in sources
        and key not in worded
        and not key.startswith(("home-field-", "language-name", "buglab-fault-", "glossary-", *lessons))
    ]
    assert dead == []


def test_a_message_defined_twice_is_refused_at_startup(monkeypatch):
    """The page's @fluent/bundle refuses a catalogue defining a message twice and draws nothing
    (two helpers' files once both held error-unknown-lesson); the server refuses it first."""
    text = words.catalogue_text("en")
    monkeypatch.setattr(words, "catalogue_text", lambda lang: text + "\nhome-title = twice\n")
    words.bundle.cache_clear()
    try:
        with pytest.raises(ValueError, match="defines these messages twice: \\['home-title'\\]"):
            words.bundle("en")
    finally:
        monkeypatch.undo()
        words.bundle.cache_clear()
