"""Which language a page speaks: `?lang=` first (a link or the switch: it is also remembered in
the cookie), then the cookie, then the browser's Accept-Language (by its q-values), then the
default. A language xt does not have is skipped at every step, never an error.
"""

from __future__ import annotations

from starlette.requests import Request

from app.words import DEFAULT, LANGUAGES

COOKIE = "xt_lang"
COOKIE_MAX_AGE = 365 * 24 * 3600
QUERY_KEY = "lang"


def _known(tag: str | None) -> str | None:
    """xt's language for a tag: "ru-RU" -> "ru"; None when xt has none for it."""
    primary = (tag or "").strip().lower().replace("_", "-").split("-")[0]
    return primary if primary in LANGUAGES else None


def from_accept_language(header: str) -> str | None:
    """The first language xt has among the header's, by q-value (0 means "not this one")."""
    ranked: list[tuple[float, int, str]] = []
    for order, part in enumerate(header.split(",")):
        tag, _, params = part.strip().partition(";")
        quality = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        lang = _known(tag)
        if lang and quality > 0:
            ranked.append((-quality, order, lang))
    return min(ranked)[2] if ranked else None


def chosen_language(request: Request) -> str:
    """The page's language (kept on request.state: the templates ask more than once)."""
    cached = getattr(request.state, "lang", None)
    if cached:
        return cached
    lang = (
        _known(request.query_params.get(QUERY_KEY))
        or _known(request.cookies.get(COOKIE))
        or from_accept_language(request.headers.get("accept-language", ""))
        or DEFAULT
    )
    request.state.lang = lang
    return lang


def asked_language(request: Request) -> str | None:
    """The language the query asks for, if xt has it (the page then sets the cookie)."""
    return _known(request.query_params.get(QUERY_KEY))


def remember(request: Request, response) -> None:
    """A page reached with a known ?lang= keeps it in the cookie for the pages after it."""
    lang = asked_language(request)
    if lang and request.cookies.get(COOKIE) != lang:
        response.set_cookie(COOKIE, lang, max_age=COOKIE_MAX_AGE, samesite="lax", httponly=True)
