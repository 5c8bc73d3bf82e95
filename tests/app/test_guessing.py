"""Guessing made hopeless (issue 24, finding 5; issue 35, finding 5): the admin cookie carries a
token of this process, never the key; wrong admin keys, wrong presenter keys and unknown join codes
are throttled per address (an IPv6 /64), a right guess included once past the limit, and never
over all addresses together, so a flood from elsewhere refuses no teacher and no student; and
`xt serve` believes X-Forwarded-For only from the addresses it is told."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.guesses import GuessLimiter, TooManyGuesses, client_of
from app.main import create_app
from app.security import ADMIN_COOKIE
from app.sessions.codes import ALPHABET, CODE_LENGTH, new_code, normalize_code
from app.settings import Settings
from tests.helpers.client import TEST_HOSTS

KEY = "teacher-key-1234"
SPEC = {"model": "text", "text": "the cat sat on the mat."}
ADDRESSES = [f"10.0.{i // 250}.{i % 250 + 1}" for i in range(30)]


def _app(**overrides):
    return create_app(Settings(allowed_hosts=TEST_HOSTS, **overrides))


def _from(app, address: str) -> TestClient:
    return TestClient(app, client=(address, 50000), follow_redirects=False)


def _training(text: str) -> dict:
    """A training spec no one built yet (a built one may be viewed without the key)."""
    return {**SPEC, "text": text, "train_steps": 1}


def _with_cookie(app, value: str) -> TestClient:
    client = _from(app, "10.1.0.1")
    client.cookies.set(ADMIN_COOKIE, value)
    return client


def test_the_admin_cookie_is_a_token_not_the_key():
    app = _app(admin_key=KEY)
    signed = _from(app, "10.1.0.1").get("/", params={"key": KEY})
    assert signed.status_code == 303
    token = signed.cookies[ADMIN_COOKIE]
    assert token and KEY not in token and token == app.state.admin_token
    assert _with_cookie(app, token).post("/api/traces", json=_training("the token")).status_code == 200
    # the key itself is no cookie, nor another process's token (a restart signs every browser out)
    assert _with_cookie(app, KEY).post("/api/traces", json=_training("the key")).status_code == 403
    other = _app(admin_key=KEY)
    assert other.state.admin_token != token
    assert _with_cookie(other, token).post("/api/traces", json=_training("old token")).status_code == 403


def test_wrong_admin_keys_are_limited_per_address_then_a_right_one_waits_too():
    app = _app(admin_key=KEY, key_failures_per_minute=5)
    client = _from(app, "10.1.0.2")
    answers = [client.get("/", params={"key": f"guess-{i}"}).status_code for i in range(8)]
    assert answers == [403] * 5 + [429] * 3
    refused = client.get("/", params={"key": KEY})
    assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
    header = client.post("/api/traces", json=_training("waits"), headers={"X-Admin-Key": KEY})
    assert header.status_code == 429
    assert _from(app, "10.1.0.3").get("/", params={"key": KEY}).status_code == 303  # another address is not


def test_a_right_admin_key_is_taken_during_a_flood_of_wrong_ones():
    """Issue 35, finding 5: wrong keys from 30 addresses (each up to its own bound, then 429)
    never refuse the teacher's right key from another address, by header or by link."""
    app = _app(admin_key=KEY)
    limit = app.state.settings.key_failures_per_minute
    teachers = [_from(app, f"10.2.1.{i}") for i in range(1, 15)]
    answers = []
    for round_ in range(limit + 2):
        for address in ADDRESSES:
            answers.append(_from(app, address).get("/", params={"key": f"guess-{round_}"}).status_code)
        teacher = teachers[round_ % len(teachers)]
        assert teacher.get("/", params={"key": KEY}).status_code == 303, round_
    trained = teachers[-1].post("/api/traces", json=_training("the teacher"), headers={"X-Admin-Key": KEY})
    assert trained.status_code == 200, trained.text
    # every flooding address was compared up to its own bound, then refused
    assert answers.count(403) == limit * len(ADDRESSES) and answers.count(429) == 2 * len(ADDRESSES)


def test_the_presenter_moves_during_a_flood_of_wrong_presenter_keys():
    app = _app()
    teacher = _from(app, "10.3.0.1")
    created = teacher.post("/api/sessions", json={"spec": SPEC})
    assert created.status_code == 201, created.text
    code, key = created.json()["code"], created.json()["presenter_key"]
    limit = app.state.settings.key_failures_per_minute
    answers = []
    for round_ in range(limit + 1):
        for address in ADDRESSES:
            guess = {"X-Presenter-Key": f"guess-{address}-{round_}"}
            answers.append(_from(app, address).post(f"/api/sessions/{code}/state", json={"step": 3}, headers=guess))
        moved = teacher.post(f"/api/sessions/{code}/state", json={"step": round_}, headers={"X-Presenter-Key": key})
        assert moved.status_code == 200 and moved.json()["step"] == round_
    statuses = [answer.status_code for answer in answers]
    assert statuses.count(403) == limit * len(ADDRESSES) and statuses.count(429) == len(ADDRESSES)


def test_real_students_join_during_a_flood_of_unknown_codes():
    """Issue 35, finding 5: 8 addresses guessing codes (each to its bound and past it) while 16
    students join with the real code: every student's join is answered (before: 15 of 16 were 429)."""
    app = _app()
    code = _from(app, "10.4.0.1").post("/api/sessions", json={"spec": SPEC}).json()["code"]
    limit = app.state.settings.join_failures_per_minute
    guessers = [_from(app, f"10.4.1.{i}") for i in range(1, 9)]
    refused = 0
    for student in range(16):
        for n, guesser in enumerate(guessers):
            for guess in range(limit // 8 + 2):
                answer = guesser.get(f"/api/sessions/ZZZZZ{n}{student}{guess}ZZ")
                refused += answer.status_code == 429
        joined = _from(app, f"10.4.2.{student + 1}").get(f"/join/{code}")
        assert joined.status_code == 303, (student, joined.status_code)
    assert refused > 0  # the guessers did reach their bound


def test_the_limiter_counts_a_minute_per_address_and_nothing_overall():
    now = [0.0]
    guesses = GuessLimiter("guesses", per_address=2, clock=lambda: now[0])
    for address in ("a", "a", "b"):
        guesses.check(address)
        guesses.failed(address)
    with pytest.raises(TooManyGuesses) as per_address:
        guesses.check("a")
    assert per_address.value.status_code == 429 and per_address.value.headers["Retry-After"] == "60"
    for address in (f"10.5.{i // 250}.{i % 250}" for i in range(1000)):  # a flood from elsewhere
        guesses.failed(address)
    guesses.check("c")  # refuses nobody else
    now[0] = 60.5
    guesses.check("a")


def test_an_ipv6_machine_counts_as_its_slash_64():
    guesses = GuessLimiter("guesses", per_address=3)
    for host in range(3):
        guesses.failed(f"2001:db8:1:2::{host + 1:x}")
    with pytest.raises(TooManyGuesses):
        guesses.check("2001:db8:1:2:ffff::9")  # another address of the same /64
    guesses.check("2001:db8:1:3::1")  # the next /64 is another machine
    assert client_of("::ffff:10.0.0.1") == "10.0.0.1" and client_of("testclient") == "testclient"


def test_join_codes_are_long_enough_that_per_address_bounds_alone_leave_guessing_hopeless():
    """The trade-off docs/lessons.md states: 65,536 addresses each at its bound for a 4-hour
    class find one of max_sessions open codes with a probability under 1e-4."""
    settings = Settings()
    guesses = (1 << 16) * settings.join_failures_per_minute * 60 * 4
    assert guesses * settings.max_sessions / len(ALPHABET) ** CODE_LENGTH < 1e-4
    assert len(new_code()) == CODE_LENGTH and normalize_code(new_code()[:5] + "-" + "A" * 5) is not None


def test_xt_serve_believes_forwarded_headers_only_when_told(monkeypatch):
    from app.connections import uvicorn_options

    for name in ("XT_FORWARDED_ALLOW_IPS", "FORWARDED_ALLOW_IPS"):
        monkeypatch.delenv(name, raising=False)
    options, _ = uvicorn_options("127.0.0.1", 8123, None, 2)
    assert options["proxy_headers"] is False and options["forwarded_allow_ips"] is None
    told, _ = uvicorn_options("127.0.0.1", 8123, "10.9.0.1", 2)
    assert told["proxy_headers"] is True and told["forwarded_allow_ips"] == "10.9.0.1"
    monkeypatch.setenv("XT_FORWARDED_ALLOW_IPS", "10.9.0.2")
    from_setting, _ = uvicorn_options("127.0.0.1", 8123, None, 2)
    assert from_setting["proxy_headers"] is True and from_setting["forwarded_allow_ips"] == "10.9.0.2"


@pytest.mark.server
def test_a_rotating_x_forwarded_for_from_loopback_is_one_address():
    """Against a real `xt serve`: unknown codes sent with a new X-Forwarded-For each time count
    under the socket's address (the overall limit raised so only the per-address one decides)."""
    from tests.helpers.connections import request, xt_serve

    with xt_serve({"XT_JOIN_FAILURES_PER_SECOND": "10000"}, open_files=4096) as server:
        limit = Settings().join_failures_per_minute
        answers = [
            request(
                server.port, "GET", "/api/sessions/ZZZZZZ", headers={"X-Forwarded-For": f"10.8.{i // 250}.{i % 250}"}
            )[0]
            for i in range(limit + 5)
        ]
    assert answers == [404] * limit + [429] * 5
