"""Issue 24, findings 1 and 2, as a hostile student would try them: the class's bug hunt is
sealed per learner by the server (a classmate's probe or answer unseals nothing for anyone
else, the diff costs a probe, each session hides its own fault, no URL/spec/answer names it),
and the poll counts learners, not requests (300 cookie-less answers from one address, one
client filling the poll, 2,000 streams from one client)."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from app import words
from app.buglab.catalogue import description
from app.main import create_app
from app.sessions.service import Sessions
from app.settings import Settings
from app.spec import TraceSpec, resolve
from app.spec.faults import is_class_quiz, quiz_fault
from tests.app.sessions.conftest import QUIZ_SPEC
from tests.helpers.aio import run_async
from tests.helpers.asgi import Asgi, open_poll, poll_of, student
from tests.helpers.client import TEST_HOSTS, make_client
from xt_core.lab.faults import CATALOGUE

SECRETS = [*CATALOGUE, *(description(fault, lang) for fault in CATALOGUE.values() for lang in words.LANGUAGES)]


@pytest.fixture(scope="module")
def app_client():
    with make_client(join_failures_per_minute=1000) as c:
        yield c


def classmate(app_client, address: str) -> TestClient:
    """Another browser, from another address, on the same app (no cookies of its own yet)."""
    return TestClient(app_client.app, client=(address, 50000))


def open_class(app_client, lesson: str | None = None) -> dict:
    body = {"spec": QUIZ_SPEC} | ({"lesson": lesson} if lesson else {})
    created = app_client.post("/api/sessions", json=body)
    assert created.status_code == 201, created.text
    return created.json()


def hidden(app_client, spec: dict) -> tuple[str, int]:
    """What only the server knows: the fault a class's spec hides, and its layer."""
    settings = app_client.app.state.settings
    resolved = resolve(TraceSpec.model_validate(spec), settings)
    return quiz_fault(resolved.quiz, resolved.cfg, settings)


def broken_step(app_client, summary: dict) -> int:
    name, layer = hidden(app_client, summary["spec"])
    op = CATALOGUE[name].step_name(layer)
    return next(s["index"] for s in summary["steps"] if s["name"] == op and s["phase"] == "backward")


def assert_names_nothing(text: str, what: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{what} gives the fault away: {secret!r}"
    assert "fault_layer=" not in text, what


def test_a_follower_learns_nothing_a_classmate_probed_or_answered(app_client):
    created = open_class(app_client, "find-the-bug")
    code = created["code"]
    alice, bob = classmate(app_client, "10.0.0.2"), classmate(app_client, "10.0.0.3")
    state = alice.get(f"/api/sessions/{code}").json()
    join = alice.get(f"/join/{code}", follow_redirects=False)
    # the class's own quiz number, not the lesson's; no URL, spec or state names the fault or its layer
    assert is_class_quiz(state["spec"]["quiz"]) and state["spec"]["quiz"] != QUIZ_SPEC["quiz"]
    assert state["spec"]["fault_layer"] is None and state["spec"]["faults"] == []
    for what, text in (("the state", str(state)), ("the join URL", join.headers["location"])):
        assert_names_nothing(text, what)
    summary = alice.post("/api/traces", json=state["spec"]).json()
    assert summary["id"] == state["trace_id"]
    assert_names_nothing(str(summary), "the trace summary")
    broken = broken_step(app_client, summary)
    base = f"/api/traces/{summary['id']}"

    # Alice spends her probes (one on the broken step) and tries to answer the class's quiz
    others = [s["index"] for s in summary["steps"] if s["phase"] == "backward" and s["index"] != broken]
    for index in (broken, *others[:2]):
        probe = alice.post(f"{base}/quiz/probe", json={"step": index})
        assert probe.status_code == 200 and probe.json()["voter"], probe.text
    assert alice.post(f"{base}/quiz/probe", json={"step": others[2]}).status_code == 409  # her 3 are spent
    assert alice.post(f"{base}/quiz/answer", json={"step": broken}).status_code == 409  # a class's: the poll
    assert alice.get(f"{base}/steps/{broken}").json()["gradcheck"]["passed"] is False
    assert alice.get(f"{base}/steps/{broken}/diff").status_code == 200  # her probe bought the comparison
    assert alice.get(f"{base}/checks").status_code == 403

    # Bob: everything still sealed (from the cache too), and his first probe is his own
    view = bob.get(f"{base}/steps/{broken}").json()
    assert view["gradcheck"] == {"sealed": True} and view["warnings"] == []
    assert bob.get(f"{base}/steps/{broken}/check").json()["gradcheck"] == {"sealed": True}
    assert bob.get(f"{base}/checks").status_code == 403
    diff = bob.get(f"{base}/steps/{others[3]}/diff")
    assert diff.status_code == 403 and "costs a probe" in diff.json()["detail"]
    sealed_jacobian = bob.get(f"{base}/jacobian", params={"layer": 0, "head": 0, "pos": 2}).json()
    assert sealed_jacobian["sealed"] and not {"ok", "recorded", "max_abs_error"} & set(sealed_jacobian)
    first = bob.post(f"{base}/quiz/probe", json={"step": others[3]})
    assert first.status_code == 200 and first.json()["probes"] == {"used": [others[3]], "max": 3, "left": 3 - 1}
    assert bob.get(f"{base}/steps/{others[3]}/diff").status_code == 200
    for index in range(len(summary["steps"])):
        assert_names_nothing(bob.get(f"{base}/steps/{index}").text, f"step {index}")

    # the presenter reveals: every learner sees every verdict
    presenter = {"X-Presenter-Key": created["presenter_key"]}
    revealed = app_client.post(f"/api/sessions/{code}/poll", json={"action": "reveal"}, headers=presenter)
    assert revealed.json()["poll"]["reveal"]["broken_step"] == broken
    assert bob.get(f"{base}/checks", params={"wait": "true"}).json()["first_failing"] == broken
    assert bob.get(f"{base}/steps/{broken}").json()["gradcheck"]["passed"] is False


def test_each_class_of_one_lesson_hides_its_own_fault(app_client):
    specs = [
        app_client.get(f"/api/sessions/{open_class(app_client, 'find-the-bug')['code']}").json()["spec"]
        for _ in range(6)
    ]
    assert len({spec["quiz"] for spec in specs}) == 6
    assert len({hidden(app_client, spec) for spec in specs}) > 1  # 6 the same: (1/11)^5 by chance


def test_a_solo_quiz_belongs_to_its_learner(app_client):
    quiz = app_client.post("/api/traces", json={**QUIZ_SPEC, "quiz": 41}).json()
    base = f"/api/traces/{quiz['id']}"
    alice, bob = classmate(app_client, "10.0.1.2"), classmate(app_client, "10.0.1.3")
    answered = alice.post(f"{base}/quiz/answer", json={"step": broken_step(app_client, quiz)}).json()
    assert answered["correct"] is True and answered["voter"]
    assert alice.get(f"{base}/checks").status_code == 200
    assert bob.get(f"{base}/checks").status_code == 403  # Alice's answer is hers
    # without cookies, the identity the answer gave goes back as X-Voter
    cookieless = classmate(app_client, "10.0.1.2")
    assert cookieless.get(f"{base}/checks").status_code == 403
    assert cookieless.get(f"{base}/checks", headers={"X-Voter": answered["voter"]}).status_code == 200
    forged = answered["voter"][:-2] + ("AA" if not answered["voter"].endswith("AA") else "BB")
    assert cookieless.get(f"{base}/checks", headers={"X-Voter": forged}).status_code == 403


def _open_poll(app_client) -> str:
    created = open_class(app_client)
    headers = {"X-Presenter-Key": created["presenter_key"]}
    assert app_client.post(f"/api/sessions/{created['code']}/poll", json={"action": "open"}, headers=headers).is_success
    return created["code"], headers


def test_300_cookieless_answers_without_a_stream_count_for_nothing(app_client):
    """A vote counts while its seat follows the class (issue 35, finding 6): a script answering
    300 times without cookies and without a stream casts none (each a 409, or a 429 once the
    address's learner identities are spent)."""
    code, presenter = _open_poll(app_client)
    stuffer = classmate(app_client, "10.0.2.9")
    statuses = []
    for _ in range(300):
        stuffer.cookies.clear()
        statuses.append(stuffer.post(f"/api/sessions/{code}/answers", json={"step": 49}).status_code)
    poll = app_client.get(f"/api/sessions/{code}", headers=presenter).json()["poll"]
    assert poll["answers"] == 0 and poll["counts"] == {} and poll["by_address"] == {}
    assert set(statuses) == {409, 429}


def test_a_real_student_still_votes_after_one_client_tried_to_fill_the_poll():
    """One client following with 100 streams (the stream cap raised for it) votes with each, up to
    session_answers_per_address; a student from another address still votes."""
    settings = Settings(
        allowed_hosts=TEST_HOSTS, max_session_answers=60, session_answers_per_address=10, max_client_streams=100
    )
    app = create_app(settings, warm_up=False)

    async def run() -> tuple[list[int], int, dict]:
        asgi = Asgi(app)
        try:
            code, presenter = await open_poll(asgi, QUIZ_SPEC)
            stuffed = [await student(asgi, code, "10.0.3.9", 49) for _ in range(100)]
            return stuffed, await student(asgi, code, "10.0.3.10", 50), await poll_of(asgi, code, presenter)
        finally:
            await asgi.close()

    stuffed, real, poll = run_async(run())
    assert stuffed == [200] * 10 + [409] * 90 and real == 200
    assert poll["counts"] == {"49": 10, "50": 1} and poll["by_address"] == {"10.0.3.9": 10, "10.0.3.10": 1}


def test_2000_streams_from_one_client_are_one_follower():
    async def run() -> tuple[int, int]:
        sessions = Sessions(Settings())
        spec = resolve(TraceSpec.model_validate(QUIZ_SPEC), Settings())
        code, _ = await sessions.create(spec, [], None, 0)
        fields = await sessions.store.load(code)
        streams = [sessions.events(fields, "address 10.0.4.1") for _ in range(2000)]
        streams.append(sessions.events(fields, "a learner"))
        for stream in streams:
            await anext(stream)  # each stream has joined and sent its first state
        shown = (await sessions.compose(fields))["followers"]
        for stream in streams:
            await stream.aclose()
        after = (await sessions.compose(fields))["followers"]
        await sessions.close()
        return shown, after

    assert run_async(run()) == (2, 0)


def test_the_voter_token_is_unguessable_and_bounded_per_address():
    with make_client(voters_per_address=3) as c:
        quiz = c.post("/api/traces", json={**QUIZ_SPEC, "quiz": 42}).json()
        client = classmate(c, "10.0.5.1")
        tokens = []
        for _ in range(4):
            client.cookies.clear()
            answer = client.post(f"/api/traces/{quiz['id']}/quiz/probe", json={"step": 40})
            tokens.append(answer.json().get("voter") if answer.status_code == 200 else answer.status_code)
        assert tokens[3] == 429 and len(set(tokens[:3])) == 3
        assert all(re.fullmatch(r"[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{16}", t) for t in tokens[:3])
