"""A quiz's probes are counted per learner across workers, and bounded per client address
(issue 35, finding 4; app/buglab/probes.py). Before, each worker counted its own (one identity
got 6 probes on 2 workers) and identities, 60 an hour an address, multiplied them: 42 probes from
one address, the whole backward pass, the first failing check the answer. Two apps share one Redis
(the test's own redis-server), as two workers of one class do; the identity window's clock is
moved on by an hour, so the address gets a fresh allowance of identities, and still no new probe."""

from __future__ import annotations

import time
from contextlib import ExitStack
from types import SimpleNamespace

import pytest
from fastapi.testclient import TestClient

from app.sessions import voters
from tests.helpers.client import make_client, post_trace
from tests.helpers.specs import SMALL_SPEC

QUIZ = {**SMALL_SPEC, "quiz": 12}
PROBES = 3


def _learner(app, address: str = "10.0.0.7") -> TestClient:
    """A learner without an identity yet, at `address` (its cookie jar is its own)."""
    return TestClient(app, client=(address, 50000))


def _probe(learner: TestClient, trace_id: str, step: int) -> int:
    return learner.post(f"/api/traces/{trace_id}/quiz/probe", json={"step": step}).status_code


@pytest.fixture
def workers(redis_url, tmp_path):
    """Two apps of one class: one Redis, one quiz secret, each its own process state (no lessons to check)."""
    settings = {"redis_url": redis_url, "quiz_secret": "probes", "lessons_dir": tmp_path}
    with ExitStack() as stack:
        apps = [stack.enter_context(make_client(**settings)) for _ in range(2)]
        trace = post_trace(apps[0], QUIZ)
        assert post_trace(apps[1], QUIZ)["id"] == trace["id"]
        yield apps, trace


def test_one_learners_probes_are_counted_across_workers(workers):
    (a, b), trace = workers
    learner = _learner(a.app)
    assert _probe(learner, trace["id"], 1) == 200
    voter = learner.cookies["xt_voter"]
    on_b = _learner(b.app)
    on_b.cookies.set("xt_voter", voter)
    assert [_probe(on_b, trace["id"], step) for step in (1, 2, 3, 4)] == [200, 200, 200, 409]
    assert _probe(learner, trace["id"], 5) == 409  # worker a knows the probes b counted
    assert learner.get(f"/api/traces/{trace['id']}/quiz").json()["probes"] == {"used": [1, 2, 3], "max": 3, "left": 0}


def test_an_address_spends_one_learners_probes_however_many_identities(workers, monkeypatch):
    (a, b), trace = workers
    home = "10.0.2.1"  # one address of this test's own (the Redis lives for the whole run)
    spent = []
    for i in range(14):  # the review's 14 identities, on either worker
        learner = _learner((a, b)[i % 2].app, home)
        spent += [step for step in (3 * i, 3 * i + 1, 3 * i + 2) if _probe(learner, trace["id"], step) == 200]
    assert spent == [0, 1, 2]
    refused = _learner(a.app, home).post(f"/api/traces/{trace['id']}/quiz/probe", json={"step": 40})
    assert refused.status_code == 409 and "address" in refused.json()["detail"]
    # an hour on: the address may be issued identities again, and still probes no new step
    later = time.time() + 3600
    monkeypatch.setattr(voters, "time", SimpleNamespace(time=lambda: later))
    assert _probe(_learner(b.app, home), trace["id"], 41) == 409
    # a step the address probed already is free for its other learners; another address has its own
    assert _probe(_learner(b.app, home), trace["id"], 2) == 200
    assert _probe(_learner(b.app, "10.0.2.2"), trace["id"], 41) == 200


def test_without_redis_one_process_bounds_the_address_too():
    client = make_client(quiz_secret="probes")
    trace = post_trace(client, QUIZ)
    codes = [_probe(_learner(client.app), trace["id"], step) for step in range(6)]
    assert codes == [200, 200, 200, 409, 409, 409]


def test_a_store_that_does_not_answer_is_a_503(tmp_path):
    with make_client(redis_url="redis://127.0.0.1:1/0", quiz_secret="probes", lessons_dir=tmp_path) as client:
        trace = post_trace(client, QUIZ)
        refused = _learner(client.app).post(f"/api/traces/{trace['id']}/quiz/probe", json={"step": 1})
        assert refused.status_code == 503 and "Redis" in refused.json()["detail"], refused.text
        assert refused.headers["Retry-After"] == "5"
