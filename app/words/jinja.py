"""The words layer in the Jinja templates: `t("message-id", name=value)` (escaped like any text),
`tm(...)` for a message that holds markup, `page_lang()` (base.html's lang=) and `lang_switch()`
(the header's links to the same page in the other languages).
"""

from __future__ import annotations

from urllib.parse import urlencode

from jinja2 import pass_context
from markupsafe import Markup

from app import words
from app.words.choice import QUERY_KEY, chosen_language
from app.words.numbers import format_number


def _lang(context) -> str:
    request = context.get("request")
    return chosen_language(request) if request is not None else words.DEFAULT


@pass_context
def t(context, message_id: str, **values) -> str:
    return words.t(_lang(context), message_id, **values)


@pass_context
def tm(context, message_id: str, **values):
    return words.markup(_lang(context), message_id, **values)


@pass_context
def page_lang(context) -> str:
    return _lang(context)


@pass_context
def lang_switch(context) -> list[dict[str, str]]:
    """Each other language: its own name (in itself) and this page's URL with ?lang= set, the
    rest of the query kept (the step, the spec). static/js/lib/prefs.js follows the page's URL
    as it changes (a step moved since the page loaded)."""
    request = context["request"]
    lang = _lang(context)
    query = [(key, value) for key, value in request.query_params.multi_items() if key != QUERY_KEY]
    return [
        {
            "lang": other,
            "name": words.t(other, "language-name"),
            "url": f"{request.url.path}?{urlencode([*query, (QUERY_KEY, other)])}",
        }
        for other in words.LANGUAGES
        if other != lang
    ]


@pass_context
def in_english(context, text: str) -> Markup | str:
    """A value the server has only in English so far (a model's description, a lesson's title),
    marked so on a page in another language: <span lang="en">, for screen readers and for the
    test that a page has no English word outside such marks (tests/browser/test_home.py)."""
    return text if _lang(context) == "en" else Markup('<span lang="en">{}</span>').format(text)


def name(text: str) -> Markup:
    """A name no language translates (a model's, a file format's maker): <span translate="no">."""
    return Markup('<span translate="no">{}</span>').format(text)


@pass_context
def num(context, value, places: int | None = None) -> str:
    """A number as the page's language writes it (app/words/numbers.py)."""
    return format_number(value, _lang(context), places)


def install(env) -> None:
    """Adds the globals to a Jinja environment (app.routes.pages.templates)."""
    env.globals.update(
        t=t, tm=tm, num=num, in_english=in_english, name=name, page_lang=page_lang, lang_switch=lang_switch
    )
