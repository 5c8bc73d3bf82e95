"""Guessing made slow (issue 24, finding 5): the admin cookie carries a token of this process, never
the key; wrong admin keys, wrong presenter keys and unknown join codes are throttled per address
and from all addresses together (app.guesses.GuessLimiter), a right guess included once past the
limit; and `xt serve` believes X-Forwarded-For only from the addresses it is told."""

from __future__ import annotations

import math
import time

import pytest
from fastapi.testclient import TestClient

from app.guesses import GuessLimiter, TooManyGuesses
from app.main import create_app
from app.security import ADMIN_COOKIE
from app.settings import Settings
from tests.helpers.client import TEST_HOSTS

KEY = "teacher-key-1234"
SPEC = {"model": "text", "text": "the cat sat on the mat."}
ADDRESSES = [f"10.0.{i // 250}.{i % 250 + 1}" for i in range(30)]


def _app(**overrides):
    return create_app(Settings(allowed_hosts=TEST_HOSTS, **overrides))


def _from(app, address: str) -> TestClient:
    return TestClient(app, client=(address, 50000), follow_redirects=False)


def _within_rate(answers: list[int], refused: int, per_second: int, started: float) -> None:
    """Compared guesses (not 429) at most per_second in each second the burst lasted, the rest 429."""
    elapsed = time.perf_counter() - started
    compared = [status for status in answers if status != 429]
    assert 1 <= len(compared) <= per_second * (math.ceil(elapsed) + 1), (answers, elapsed)
    assert answers.count(429) == len(answers) - len(compared) and answers.count(429) >= refused


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
    app = _app(admin_key=KEY, key_failures_per_minute=5, key_failures_per_second=100)
    client = _from(app, "10.1.0.2")
    answers = [client.get("/", params={"key": f"guess-{i}"}).status_code for i in range(8)]
    assert answers == [403] * 5 + [429] * 3
    refused = client.get("/", params={"key": KEY})
    assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
    header = client.post("/api/traces", json=_training("waits"), headers={"X-Admin-Key": KEY})
    assert header.status_code == 429
    assert _from(app, "10.1.0.3").get("/", params={"key": KEY}).status_code == 303  # another address is not


def test_wrong_admin_keys_from_many_addresses_are_limited_overall():
    app = _app(admin_key=KEY)  # 3 a second from everyone together
    started = time.perf_counter()
    answers = [
        _from(app, address)
        .post("/api/traces", json={**SPEC, "train_steps": 1}, headers={"X-Admin-Key": "x"})
        .status_code
        for address in ADDRESSES
    ]
    _within_rate(answers, 20, app.state.settings.key_failures_per_second, started)
    assert set(answers) == {403, 429}


def test_an_address_that_gave_the_right_key_is_not_locked_out_by_others():
    app = _app(admin_key=KEY)
    teacher = _from(app, "10.2.0.1")
    assert teacher.get("/", params={"key": KEY}).status_code == 303
    for address in ADDRESSES:
        _from(app, address).get("/", params={"key": "guess"})
    assert _from(app, "10.2.0.2").get("/", params={"key": KEY}).status_code == 429  # a stranger waits
    trained = teacher.post("/api/traces", json=_training("the teacher"), headers={"X-Admin-Key": KEY})
    assert trained.status_code == 200


def test_wrong_presenter_keys_are_limited_overall():
    app = _app()
    teacher = _from(app, "10.3.0.1")
    created = teacher.post("/api/sessions", json={"spec": SPEC})
    assert created.status_code == 201, created.text
    code, key = created.json()["code"], created.json()["presenter_key"]
    assert (
        teacher.post(f"/api/sessions/{code}/state", json={"step": 2}, headers={"X-Presenter-Key": key}).status_code
        == 200
    )
    started = time.perf_counter()
    answers = [
        _from(app, address)
        .post(f"/api/sessions/{code}/state", json={"step": 3}, headers={"X-Presenter-Key": f"guess-{address}"})
        .status_code
        for address in ADDRESSES
    ]
    _within_rate(answers, 20, app.state.settings.key_failures_per_second, started)
    # the presenter, whose key was right, still moves the class
    moved = teacher.post(f"/api/sessions/{code}/state", json={"step": 4}, headers={"X-Presenter-Key": key})
    assert moved.status_code == 200 and moved.json()["step"] == 4


def test_unknown_join_codes_from_many_addresses_are_limited_overall():
    app = _app()
    teacher = _from(app, "10.4.0.1")
    code = teacher.post("/api/sessions", json={"spec": SPEC}).json()["code"]
    student = _from(app, "10.4.0.2")
    assert student.get(f"/api/sessions/{code}").status_code == 200
    started = time.perf_counter()
    answers = []
    for address in ADDRESSES:  # 20 codes from each of 30 addresses: 600 guesses
        guesser = _from(app, address)
        answers += [guesser.get(f"/api/sessions/ZZZZZ{c}").status_code for c in "ABCDEFGHJKMNPQRSTUVW"]
    _within_rate(answers, 500, app.state.settings.join_failures_per_second, started)
    # the limiter's second stands still from here: a slow machine must not open the next one
    limiter = app.state.sessions.join_guesses
    limiter.clock = (lambda now: lambda: now)(limiter.clock())
    assert _from(app, "10.4.0.3").get(f"/api/sessions/{code}").status_code == 429  # a new student waits a second
    assert student.get(f"/api/sessions/{code}").status_code == 200  # one already in the class does not
    assert student.get("/api/sessions/ZZZZZZ").status_code == 429  # ... but guesses other codes no faster


def test_the_limiter_counts_a_minute_per_address_and_a_second_overall():
    now = [0.0]
    guesses = GuessLimiter("guesses", per_address=2, overall=3, clock=lambda: now[0])
    for address in ("a", "a", "b"):
        guesses.check(address)
        guesses.failed(address)
    with pytest.raises(TooManyGuesses) as per_address:
        guesses.check("a")
    assert per_address.value.status_code == 429 and per_address.value.headers["Retry-After"] == "60"
    with pytest.raises(TooManyGuesses):
        guesses.check("c")  # 3 this second from everyone
    guesses.succeeded("d")
    guesses.check("d")  # an address that was right is not held back by the others
    now[0] = 1.5
    guesses.check("c")
    with pytest.raises(TooManyGuesses):
        guesses.check("a")
    now[0] = 60.5
    guesses.check("a")


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
