"""The sessions' HTTP contract in process (docs/api.md, "Sessions"): create, read, move (the
presenter only), the poll and its answers, the QR code, the join page and redirect, the limits
(unknown codes rate-limited per client, sessions capped and expiring). Streams are tested over
real servers in test_fanout.py."""

from __future__ import annotations

import pytest

from app.sessions.codes import ALPHABET, CODE_LENGTH, normalize_code
from tests.app.sessions.conftest import QUIZ_SPEC, SPEC
from tests.helpers.aio import run_async
from tests.helpers.asgi import Asgi, student
from tests.helpers.client import make_client
from xt_core.lab.faults import CATALOGUE


@pytest.fixture(scope="module")
def client():
    with make_client(join_failures_per_minute=1000) as c:
        yield c


def _open(client, spec=SPEC, **extra) -> dict:
    response = client.post("/api/sessions", json={"spec": spec, **extra})
    assert response.status_code == 201, response.text
    return response.json()


def test_create_read_and_move(client):
    created = _open(client)
    code, key = created["code"], created["presenter_key"]
    assert len(code) == CODE_LENGTH == 10 and set(code) <= set(ALPHABET)
    assert created["join_url"] == f"http://testserver/join/{code}"
    state = client.get(f"/api/sessions/{code}").json()
    assert {"code", "spec", "lesson", "step", "lesson_step", "jacobian", "head", "followers", "poll"} <= set(state)
    assert key not in str(state) and state["step"] == 0 and state["followers"] == 0
    moved = client.post(
        f"/api/sessions/{code}/state",
        json={"step": 12, "jacobian": {"layer": 1, "head": 2, "pos": 5}, "head": {"figure": "output.x", "head": 3}},
        headers={"X-Presenter-Key": key},
    )
    assert moved.status_code == 200
    state = client.get(f"/api/sessions/{code.lower()}").json()  # codes are case-insensitive
    assert (state["step"], state["jacobian"], state["head"]["head"]) == (12, {"layer": 1, "head": 2, "pos": 5}, 3)
    cleared = client.post(f"/api/sessions/{code}/state", json={"jacobian": None}, headers={"X-Presenter-Key": key})
    assert cleared.json()["jacobian"] is None and cleared.json()["step"] == 12


@pytest.mark.parametrize("headers", [{}, {"X-Presenter-Key": "not-the-key"}])
def test_only_the_presenter_moves_the_class(client, headers):
    code = _open(client)["code"]
    assert client.post(f"/api/sessions/{code}/state", json={"step": 3}, headers=headers).status_code == 403
    assert client.post(f"/api/sessions/{code}/poll", json={"action": "open"}, headers=headers).status_code == 403
    assert client.get(f"/api/sessions/{code}").json()["step"] == 0


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        ({"step": 84}, ["body", "step"]),
        ({"step": None}, ["body", "step"]),
        ({"jacobian": {"layer": 2, "head": 0, "pos": 0}}, ["body", "jacobian", "layer"]),
        ({"jacobian": {"layer": "output", "head": 0, "pos": 22}}, ["body", "jacobian", "pos"]),
        ({"lesson": "no-such-lesson"}, ["body", "lesson"]),
        ({"lesson": "forward-in-ten"}, ["body", "lesson"]),  # another spec's lesson
        ({"lesson_step": 0}, ["body", "lesson_step"]),  # no lesson playing
    ],
)
def test_a_bad_move_is_422_naming_the_field(client, body, loc):
    created = _open(client)
    response = client.post(
        f"/api/sessions/{created['code']}/state", json=body, headers={"X-Presenter-Key": created["presenter_key"]}
    )
    assert response.status_code == 422, response.text
    assert response.json()["detail"][0]["loc"] == loc


def test_a_session_with_a_lesson_starts_on_its_first_step(client):
    created = _open(client, spec={"model": "induction", "text": "xkqvbmxkqvbmxkqvbmxkqvbm"}, lesson="forward-in-ten")
    state = client.get(f"/api/sessions/{created['code']}").json()
    assert (state["lesson"], state["lesson_step"], state["step"]) == ("forward-in-ten", 0, 0)
    wrong = client.post("/api/sessions", json={"spec": SPEC, "lesson": "forward-in-ten"})
    assert wrong.status_code == 422 and wrong.json()["detail"][0]["loc"] == ["body", "lesson"]
    assert client.post("/api/sessions", json={"spec": {"model": "nope", "text": "ab"}}).status_code == 422


def test_the_bug_hunt(client):
    created = _open(client, spec=QUIZ_SPEC)
    code, presenter = created["code"], {"X-Presenter-Key": created["presenter_key"]}
    assert client.post(f"/api/sessions/{code}/answers", json={"step": 50}).status_code == 409  # not open yet
    assert client.post(f"/api/sessions/{code}/poll", json={"action": "open"}, headers=presenter).status_code == 200
    not_backward = client.post(f"/api/sessions/{code}/answers", json={"step": 3})
    assert not_backward.status_code == 422 and not_backward.json()["detail"][0]["loc"] == ["body", "step"]
    assert client.post(f"/api/sessions/{code}/answers", json={"step": 50}).status_code == 409  # not following

    async def two_students() -> list[int]:
        asgi = Asgi(client.app)
        try:
            first = await student(asgi, code, "10.30.0.1", 50)
            seat = {"X-Seat": asgi.seats[-1]}
            again = await asgi.call("POST", f"/api/sessions/{code}/answers", "10.30.0.1", seat, {"step": 49})
            return [first, again[0], await student(asgi, code, "10.30.0.2", 49)]  # changed; another browser
        finally:
            await asgi.close()

    assert run_async(two_students()) == [200, 200, 200]
    seen_by_presenter = client.get(f"/api/sessions/{code}", headers=presenter).json()["poll"]
    assert seen_by_presenter["counts"] == {"49": 2} and seen_by_presenter["answers"] == 2
    assert "counts" not in client.get(f"/api/sessions/{code}").json()["poll"]  # students: not before the reveal
    revealed = client.post(f"/api/sessions/{code}/poll", json={"action": "reveal"}, headers=presenter).json()["poll"]
    assert revealed["status"] == "revealed"
    reveal = revealed["reveal"]
    assert reveal["faults"][0]["step"] == reveal["broken_step"] == reveal["first_failing"]
    assert reveal["faults"][0]["name"] in CATALOGUE and reveal["broken_step"] in created_backward(client, code)
    assert client.get(f"/api/sessions/{code}").json()["poll"]["counts"] == {"49": 2}
    plain = _open(client)
    refused = client.post(
        f"/api/sessions/{plain['code']}/poll",
        json={"action": "open"},
        headers={"X-Presenter-Key": plain["presenter_key"]},
    )
    assert refused.status_code == 409


def created_backward(client, code: str) -> list[int]:
    summary = client.post("/api/traces", json=client.get(f"/api/sessions/{code}").json()["spec"]).json()
    return [s["index"] for s in summary["steps"] if s["phase"] == "backward"]


def test_qr_code_and_join_pages(client):
    code = _open(client)["code"]
    qr = client.get(f"/api/sessions/{code}/qr.svg")
    assert qr.status_code == 200 and qr.headers["content-type"] == "image/svg+xml" and qr.text.startswith("<svg")
    joined = client.get(f"/join/{code.lower()}", follow_redirects=False)
    assert joined.status_code == 303
    assert joined.headers["location"].startswith("/walk?model=text&") and joined.headers["location"].endswith(
        f"#follow={code}"
    )
    assert client.get("/join?code=abc123", follow_redirects=False).headers["location"] == "/join/abc123"
    unknown = client.get("/join/ZZZZZZ")
    assert unknown.status_code == 404 and "Cannot join" in unknown.text
    assert client.get("/join").status_code == 200


def test_unknown_codes_are_rate_limited_per_client():
    with make_client(join_failures_per_minute=3) as c:
        code = c.post("/api/sessions", json={"spec": SPEC}).json()["code"]
        assert [c.get(f"/api/sessions/{bad}").status_code for bad in ("AAAAAA", "BBBBBB", "not-a-code")] == [404] * 3
        limited = c.get(f"/api/sessions/{code}")  # now even a right code waits out the minute
        assert limited.status_code == 429 and limited.headers["retry-after"] == "60"


def test_sessions_are_capped_and_expire():
    with make_client(max_sessions=2, session_idle_seconds=0) as c:
        codes = [c.post("/api/sessions", json={"spec": SPEC}).json()["code"] for _ in range(2)]
        assert c.get(f"/api/sessions/{codes[0]}").status_code == 404  # idle for 0 s: gone
    with make_client(max_sessions=2) as c:
        for _ in range(2):
            assert c.post("/api/sessions", json={"spec": SPEC}).status_code == 201
        full = c.post("/api/sessions", json={"spec": SPEC})
        assert full.status_code == 503 and "max_sessions" in full.json()["detail"]


def test_codes_read_as_typed():
    assert normalize_code(" abc23-defgh ") == "ABC23DEFGH"
    assert normalize_code("ABC0O1ABCD") is None  # look-alikes are not in the alphabet
    assert normalize_code("ABCDEFGHJKM") is None
