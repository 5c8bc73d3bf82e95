"""A class speaks its presenter's language, and each student may choose their own
(app/routes/sessions.py says why): the session keeps the language the presenter opened it in,
the shared state's words (the poll's question, the revealed fault) are in it, and a joining
student lands in it unless they chose a language before (the xt_lang cookie, or ?lang=)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from app.buglab.catalogue import description
from app.words.choice import COOKIE
from tests.app.sessions.conftest import QUIZ_SPEC, SPEC
from tests.helpers.client import make_client
from xt_core.lab.faults import CATALOGUE


@pytest.fixture(scope="module")
def client():
    with make_client(join_failures_per_minute=1000) as c:
        yield c


def _open(client, spec: dict, lang: str | None) -> dict:
    params = {"lang": lang} if lang else {}
    response = client.post("/api/sessions", json={"spec": spec}, params=params)
    assert response.status_code == 201, response.text
    return response.json()


def _joined_lang(client, code: str, **kwargs) -> str | None:
    location = client.get(f"/join/{code}", follow_redirects=False, **kwargs).headers["location"]
    return parse_qs(urlsplit(location).query).get("lang", [None])[0]


def test_the_class_keeps_its_presenters_language(client):
    english = _open(client, SPEC, None)
    russian = _open(client, SPEC, "ru")
    assert client.get(f"/api/sessions/{english['code']}").json()["lang"] == "en"
    state = client.get(f"/api/sessions/{russian['code']}").json()
    assert state["lang"] == "ru" and state["poll"]["question"] == "Какой шаг сломан?"
    assert client.get(f"/api/sessions/{english['code']}").json()["poll"]["question"] == "Which step is broken?"


def test_a_student_joins_in_the_class_language_unless_they_chose_their_own(client):
    code = _open(client, SPEC, "ru")["code"]
    client.cookies.clear()
    assert _joined_lang(client, code) == "ru"  # a phone set to English, no choice made: the room's language
    assert _joined_lang(client, code, headers={"Accept-Language": "en-US"}) == "ru"
    client.cookies.set(COOKIE, "en")
    assert _joined_lang(client, code) is None  # their own choice, kept by the cookie
    client.cookies.clear()
    assert _joined_lang(client, f"{code}?lang=en") == "en"  # a link asking for one


def test_the_reveal_speaks_the_class_language_and_names_the_fault(client):
    created = _open(client, QUIZ_SPEC, "ru")
    code, presenter = created["code"], {"X-Presenter-Key": created["presenter_key"]}
    assert client.post(f"/api/sessions/{code}/poll", json={"action": "open"}, headers=presenter).status_code == 200
    poll = client.post(f"/api/sessions/{code}/poll", json={"action": "reveal"}, headers=presenter).json()["poll"]
    assert poll["question"] == "Какой шаг сломан?"
    [fault] = poll["reveal"]["faults"]
    assert fault["description"] == description(CATALOGUE[fault["name"]], "ru") != description(CATALOGUE[fault["name"]])


def test_the_join_page_says_why_in_its_language(client):
    client.cookies.clear()
    english = client.get("/join/ZZZZZZ")
    assert english.status_code == 404
    assert "no session with code &#39;ZZZZZZ&#39;: it ended, or the code is mistyped" in english.text
    russian = client.get("/join/ZZZZZZ", headers={"Accept-Language": "ru"})
    assert "класса с кодом «ZZZZZZ» нет" in russian.text and 'lang="en"' not in russian.text.split("<main")[-1]


def test_a_lesson_link_keeps_its_language(client):
    location = client.get("/lessons/forward-in-ten", params={"lang": "ru"}, follow_redirects=False).headers["location"]
    assert parse_qs(urlsplit(location).query)["lang"] == ["ru"] and location.endswith("#lesson=forward-in-ten")
    plain = client.get("/lessons/forward-in-ten", follow_redirects=False).headers["location"]
    assert "lang" not in parse_qs(urlsplit(plain).query)
