"""Every trace a request needs comes through admission (app.services.Services.build): with
admission refusing everything and no trace cached, every route that needs a trace answers 503
and none is built. Every route with a trace id in its path is listed here, so a new one that
is not fails this test until it says what it needs."""

from __future__ import annotations

import pytest

import app.traces.store
from app.spec import TraceSpec, resolve
from app.traces.busy import Overloaded
from app.traces.cache import LRU
from app.traces.store import TraceStore
from tests.helpers.client import make_client, post_trace
from tests.helpers.specs import SMALL_SPEC

FAULTY = {**SMALL_SPEC, "faults": ["softmax_missing_sum_term"]}
QUIZ = {**SMALL_SPEC, "quiz": 7}
TRAINED = {**SMALL_SPEC, "optimizer": {"name": "sgd", "lr": 0.1}, "train_steps": 1}


class RefuseEverything:
    """Admission that admits nothing (and records what it was asked)."""

    def __init__(self):
        self.asked: list[str] = []

    def admit(self, spec, client=""):
        self.asked.append(spec.id)
        raise Overloaded("refused by the test")

    def release(self, ticket):
        raise AssertionError("nothing was admitted, so nothing is released")


def _requests(ids: dict[str, str], grid_step: int, backward_step: int) -> dict[tuple[str, str], dict]:
    """(method, route path) -> the request that asks it of a known trace."""
    plain, faulty, quiz, trained = ids["plain"], ids["faulty"], ids["quiz"], ids["trained"]
    t = "/api/traces"
    return {
        ("POST", "/api/traces"): {"url": t, "json": SMALL_SPEC},
        ("GET", "/api/traces/{trace_id}/steps/{index}"): {"url": f"{t}/{plain}/steps/0"},
        ("GET", "/api/traces/{trace_id}/steps/{index}/check"): {"url": f"{t}/{plain}/steps/1/check"},
        ("GET", "/api/traces/{trace_id}/steps/{index}/head"): {"url": f"{t}/{plain}/steps/{grid_step}/head?head=0"},
        ("GET", "/api/traces/{trace_id}/jacobian"): {"url": f"{t}/{plain}/jacobian?layer=output"},
        ("GET", "/api/traces/{trace_id}/tensors/{name}"): {"url": f"{t}/{plain}/tensors/logits?format=json"},
        ("GET", "/api/traces/{trace_id}/update"): {"url": f"{t}/{trained}/update?param=norm"},
        ("GET", "/api/traces/{trace_id}/checks"): {"url": f"{t}/{plain}/checks"},
        ("GET", "/api/traces/{trace_id}/steps/{index}/diff"): {"url": f"{t}/{faulty}/steps/{backward_step}/diff"},
        ("GET", "/api/traces/{trace_id}/quiz"): {"url": f"{t}/{quiz}/quiz"},
        ("POST", "/api/traces/{trace_id}/quiz/answer"): {"url": f"{t}/{quiz}/quiz/answer", "json": {"step": 1}},
        ("POST", "/api/traces/{trace_id}/quiz/probe"): {"url": f"{t}/{quiz}/quiz/probe", "json": {"step": 1}},
        ("POST", "/api/sessions"): {"url": "/api/sessions", "json": {"spec": SMALL_SPEC}},
    }


# Routes with a trace id that need no trace: what they answer is kept beside it.
NEEDS_NO_TRACE = {("GET", "/api/traces/{trace_id}/progress")}


def test_with_admission_refusing_every_route_that_needs_a_trace_answers_503(monkeypatch):
    built: list[str] = []
    with make_client() as client:
        services = client.app.state.services
        ids = {name: post_trace(client, spec)["id"] for name, spec in _specs().items()}
        summary = post_trace(client, SMALL_SPEC)
        grid_step = next(s["index"] for s in summary["steps"] if s["name"].endswith("attention.probs"))
        backward_step = next(s["index"] for s in summary["steps"] if s["phase"] == "backward")
        # the specs stay known, their traces and every finished answer are gone
        fresh = TraceStore(services.settings)
        for trace_id in ids.values():
            fresh.remember(services.store.spec(trace_id))
        services.store, services.admission = fresh, RefuseEverything()
        services.answers.cache = LRU(100)
        monkeypatch.setattr(app.traces.store, "build_trace", lambda spec, *a: built.append(spec.id))
        requests = _requests(ids, grid_step, backward_step)
        _every_trace_route_is_listed(client.app, requests)
        for (method, path), request in requests.items():
            response = client.request(method, request["url"], json=request.get("json"))
            assert response.status_code == 503, (method, path, response.status_code, response.text[:200])
            assert "refused by the test" in response.json()["detail"], (method, path)
        assert len(services.admission.asked) == len(requests)
    assert built == []


def _specs() -> dict[str, dict]:
    return {"plain": SMALL_SPEC, "faulty": FAULTY, "quiz": QUIZ, "trained": TRAINED}


def _every_trace_route_is_listed(application, requests: dict) -> None:
    routes = {
        (method, route.path)
        for route in application.routes
        if "{trace_id}" in getattr(route, "path", "")
        for method in getattr(route, "methods", ())
    }
    missing = routes - set(requests) - NEEDS_NO_TRACE
    assert not missing, f"routes with a trace id this test does not ask: {sorted(missing)}"
    assert ("POST", "/api/traces") in requests and ("POST", "/api/sessions") in requests


@pytest.mark.parametrize("refused", [True, False])
def test_a_session_reveal_builds_its_trace_through_admission(monkeypatch, refused):
    """The presenter's reveal needs the session's trace: evicted, it is rebuilt only if admitted."""
    with make_client() as client:
        services = client.app.state.services
        session = client.post("/api/sessions", json={"spec": FAULTY})
        assert session.status_code == 201, session.text
        code, key = session.json()["code"], session.json()["presenter_key"]
        headers = {"X-Presenter-Key": key}
        assert client.post(f"/api/sessions/{code}/poll", json={"action": "open"}, headers=headers).status_code == 200
        trace_id = resolve(TraceSpec.model_validate(FAULTY), services.settings).id
        fresh = TraceStore(services.settings)
        fresh.remember(services.store.spec(trace_id))
        services.store = fresh
        if refused:
            services.admission = RefuseEverything()
        else:
            services.admission.store = fresh
        response = client.post(f"/api/sessions/{code}/poll", json={"action": "reveal"}, headers=headers)
        assert response.status_code == (503 if refused else 200), response.text
        assert len(fresh) == (0 if refused else 1)
