"""The words layer: every sentence a person reads, by language, in Project Fluent catalogues
(app/words/locales/<lang>/*.ftl) that the server (fluent.runtime, here) and the pages
(@fluent/bundle, static/js/lib/words.js, fed by GET /words/<lang>.ftl) read alike.

    t("ru", "home-train-steps-limit", most=3)   # a whole sentence, its plural picked by the catalogue

Why Fluent and not gettext: Russian needs three plural forms and the case a word takes after a
number, which a Fluent message holds itself (a select on the number), and one .ftl is read as it
is by both Python and the browser; gettext's .po would need a compile step to JSON for the page
and keeps a sentence's forms in code. Fluent's bidi isolation marks are off on both sides (no
U+2068/U+2069 around values: the pages are left to right and tests compare text), and numbers are
formatted by xt itself (app/words/numbers.py), identically on both sides.

A language is its catalogue folder and its line in LANGUAGES (docs/translating.md).
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from pathlib import Path

from fluent.runtime import FluentBundle, FluentResource
from fluent.runtime.resolver import CurrentEnvironment, ResolverEnvironment
from fluent.runtime.types import FluentType
from fluent.syntax.ast import Junk
from markupsafe import Markup, escape

from app.words.numbers import format_number, with_separator

LOCALES = Path(__file__).resolve().parent / "locales"
# The languages a person can choose, in the order the switch lists them; the first is the default.
LANGUAGES = ("en", "ru")
DEFAULT = LANGUAGES[0]


class MissingWords(LookupError):
    """A message id the catalogue lacks, or a message that could not be formatted (a missing
    value): a bug, never shown as half a sentence."""


class _Int(FluentType, int):
    """An integer inside a message: selects its plural form by value, reads as format_number says."""

    lang = DEFAULT

    def format(self, locale) -> str:
        return format_number(int(self), self.lang)


class _Float(FluentType, float):
    lang = DEFAULT

    def format(self, locale) -> str:
        return format_number(float(self), self.lang)


def format_spec(value, spec: str = "") -> str:
    """FORMAT($x, spec: ".2g") in a message: Python's format spec with the language's decimal
    separator, for the numbers a lesson's text prints as its author chose (a relative error "3.1e-08";
    the server alone formats these: the page's JavaScript reads no message that uses it)."""
    if not isinstance(value, _Int | _Float):
        return str(value)
    if not SPEC.match(spec):
        raise ValueError(f"FORMAT: spec {spec!r} is not .Ne, .Nf or .Ng (static/js/lib/format_spec.js reads those)")
    text = format(float(value), spec)
    return with_separator(text, value.lang)


FUNCTIONS = {"FORMAT": format_spec}
SPEC = re.compile(r"^\.\d{1,2}[efg]$")


class Bundle(FluentBundle):
    """A FluentBundle that takes the values as they are given: fluent.runtime would wrap every
    int and float in its own number type, formatted by Babel (app/words/numbers.py: why not)."""

    def format_pattern(self, pattern, args=None):
        errors: list[Exception] = []
        env = ResolverEnvironment(context=self, current=CurrentEnvironment(args=args or {}), errors=errors)
        return pattern(env), errors


def catalogue_text(lang: str) -> str:
    """The language's catalogue as one Fluent resource (its files in name order), as the page reads it."""
    if lang not in LANGUAGES:
        raise KeyError(lang)
    return "\n".join(path.read_text(encoding="utf-8") for path in sorted((LOCALES / lang).glob("*.ftl")))


@lru_cache(maxsize=len(LANGUAGES))
def bundle(lang: str) -> Bundle:
    words = Bundle([lang], functions=FUNCTIONS, use_isolating=False)
    resource = FluentResource(catalogue_text(lang))
    junk = [entry.content.strip()[:80] for entry in resource.body if isinstance(entry, Junk)]
    if junk:  # Fluent skips what it cannot parse: a message would be missing only when asked for
        raise ValueError(f"the {lang!r} catalogue has text Fluent cannot read: {junk}")
    # the page's @fluent/bundle refuses a catalogue that defines a message twice (and then draws
    # nothing), where fluent.runtime keeps the last: two files must never share an id
    ids = Counter(entry.id.name for entry in resource.body if hasattr(entry, "id"))
    twice = sorted(name for name, count in ids.items() if count > 1)
    if twice:
        raise ValueError(f"the {lang!r} catalogue defines these messages twice: {twice}")
    words.add_resource(resource)
    return words


def load_all() -> None:
    """Parses every language's catalogue (app.main, at startup): a malformed one fails there."""
    for lang in LANGUAGES:
        bundle(lang)


def _value(value, lang: str):
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    number = _Int(value) if isinstance(value, int) else _Float(value)
    number.lang = lang
    return number


def has(lang: str, message_id: str) -> bool:
    """Whether the catalogue of `lang` (an unknown language: the default's) holds the message."""
    return bundle(lang if lang in LANGUAGES else DEFAULT).has_message(message_id)


def t(lang: str, message_id: str, **values) -> str:
    """The message `message_id` in `lang` (an unknown language: the default's), with its named
    values: numbers are formatted by app/words/numbers.py, anything else by str()."""
    words = bundle(lang if lang in LANGUAGES else DEFAULT)
    message_id, _, attribute = message_id.partition(".")
    if not words.has_message(message_id):
        raise MissingWords(f"no message {message_id!r} in the {lang!r} catalogue")
    message = words.get_message(message_id)
    pattern = message.attributes.get(attribute) if attribute else message.value
    if pattern is None:
        raise MissingWords(f"{message_id!r} has no {'attribute ' + attribute if attribute else 'value'} in {lang!r}")
    text, errors = words.format_pattern(pattern, {name: _value(value, lang) for name, value in values.items()})
    if errors:
        raise MissingWords(f"{lang}/{message_id}: {errors[0]}")
    return text


def markup(lang: str, message_id: str, **values) -> Markup:
    """t() for a template whose message holds markup (<strong>, <code>): the values are escaped,
    the message's own text is trusted (it is ours)."""
    return Markup(
        t(
            lang,
            message_id,
            **{name: escape(value) if isinstance(value, str) else value for name, value in values.items()},
        )
    )
