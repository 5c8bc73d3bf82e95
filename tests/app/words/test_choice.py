"""Which language a page speaks: ?lang=, then the cookie, then Accept-Language, then English; a
language xt does not have is skipped at each step. ?lang= is remembered in the cookie, a /walk
permalink keeps it, and the switch links to the same page in the other language."""

from __future__ import annotations

import re

import pytest

from app.words.choice import COOKIE, from_accept_language


def page_lang(client, url: str, **headers) -> str:
    response = client.get(url, headers=headers)
    assert response.status_code == 200, response.text[:300]
    return re.search(r'<html lang="([^"]+)">', response.text).group(1)


@pytest.mark.parametrize(
    ("url", "cookie", "accept", "expected"),
    [
        ("/", None, None, "en"),  # the default
        ("/", None, "ru-RU,ru;q=0.9,en;q=0.8", "ru"),  # the browser's language
        ("/", None, "qaa-QM,qaa;q=0.9", "en"),  # one xt has not (ISO 639 qaa: reserved for local use): the default
        ("/", None, "qaa,ru;q=0.5,en;q=0.7", "en"),  # by q-value, not by order
        ("/", None, "ru;q=0,en", "en"),  # q=0: not this one
        ("/", "ru", "en", "ru"),  # the cookie before the browser
        ("/", "xx", "ru", "ru"),  # an unknown cookie is skipped
        ("/?lang=en", "ru", "ru", "en"),  # the query before everything
        ("/?lang=xx", "ru", "en", "ru"),  # an unknown query is skipped
        ("/?lang=RU", None, None, "ru"),  # tags are case-insensitive
    ],
)
def test_the_language_is_chosen_in_order(client, url, cookie, accept, expected):
    client.cookies.clear()
    if cookie:
        client.cookies.set(COOKIE, cookie)
    headers = {"accept-language": accept} if accept else {}
    try:
        assert page_lang(client, url, **headers) == expected
    finally:
        client.cookies.clear()


def test_a_query_language_is_remembered_and_an_unknown_one_is_not(client):
    client.cookies.clear()
    try:
        assert client.get("/?lang=xx").headers.get("set-cookie") is None
        assert f"{COOKIE}=ru" in client.get("/?lang=ru").headers["set-cookie"]
        assert page_lang(client, "/") == "ru"  # the cookie now
    finally:
        client.cookies.clear()


def test_a_walk_permalink_keeps_its_language_and_the_switch_keeps_the_step(client):
    response = client.get("/walk?text=abcabc&lang=ru", follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"].endswith("&step=1&lang=ru")
    client.cookies.clear()
    page = client.get(response.headers["location"]).text
    switch = re.search(r'<nav class="lang-switch"[^>]*>\s*<a href="([^"]+)" hreflang="en"', page).group(1)
    assert "step=1" in switch and "text=abcabc" in switch and switch.endswith("lang=en")
    assert 'aria-label="Язык"' in page and "Перейти к содержимому" in page
    client.cookies.clear()


def test_the_catalogue_is_served_to_the_pages(client):
    response = client.get("/words/ru.ftl")
    assert response.status_code == 200 and "home-start = Начать ▶" in response.text
    assert client.get("/words/ru.ftl", headers={"if-none-match": response.headers["etag"]}).status_code == 304
    assert client.get("/words/xx.ftl").status_code == 404
    assert client.get("/vendor/fluent/index.js").headers["content-type"].startswith("text/javascript")


def test_accept_language_parsing():
    assert from_accept_language("") is None
    assert from_accept_language("*") is None
    assert from_accept_language("en-GB;q=0.3, ru-RU;q=0.8") == "ru"
    assert from_accept_language("ru;q=bad, en") == "en"
