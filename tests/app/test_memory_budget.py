"""One byte budget for every trace alive (issue 24, finding 4): a trace evicted from the cache
while a request or a check job still holds it keeps counting until it is collected, so a build
that would pass cache_bytes beside it is refused (503, naming what holds the bytes); a trace
larger than the whole budget is refused when its spec is resolved (422), never admitted as
"the first build"; and rebuilding an evicted trace that trains needs the admin key whichever
route asks."""

from __future__ import annotations

import threading

import pytest

from app.settings import Settings
from app.spec import TraceSpec, resolve
from app.traces.admission import Admission, Overloaded, spec_cost
from app.traces.store import TraceStore
from tests.helpers.client import make_client, post_trace
from tests.helpers.specs import SMALL_SPEC

SECOND = {**SMALL_SPEC, "seed": 2}


def resolved(body: dict, settings: Settings):
    return resolve(TraceSpec.model_validate(body), settings)


def one_trace_bytes() -> int:
    return spec_cost(resolved(SMALL_SPEC, Settings())).nbytes


def test_a_trace_in_use_counts_against_the_budget_until_it_is_collected():
    settings = Settings(cache_bytes=one_trace_bytes() * 3 // 2)  # room for one trace, not two
    store = TraceStore(settings)
    admission = Admission(settings, store)
    held = store.get(resolved(SMALL_SPEC, settings))  # in use, as by a request drawing a view
    assert store.live_bytes == store.nbytes > 0
    with pytest.raises(Overloaded) as busy:
        admission.admit(resolved(SECOND, settings))
    assert len(store) == 0  # evicted to make room, but still alive: it still counts
    assert store.live_bytes > 0 and "in use by requests and checks" in busy.value.detail
    del held  # the request is done with it
    assert store.live_bytes == 0
    ticket = admission.admit(resolved(SECOND, settings))
    store.get(resolved(SECOND, settings), ticket.reservation)
    admission.release(ticket)
    assert store.live_bytes == store.nbytes > 0 and store.reserved == 0


def test_a_check_job_holding_an_evicted_trace_blocks_a_build_past_the_budget():
    with make_client(cache_bytes=one_trace_bytes() * 3 // 2) as client:
        services = client.app.state.services
        first = post_trace(client, SMALL_SPEC)
        gate = threading.Event()
        blocker = services.executor.submit(gate.wait, 30)  # the one worker: the job's checks wait behind it
        try:
            job = services.checks.start(first["id"], services.store.cached(services.store.spec(first["id"])))
            refused = client.post("/api/traces", json=SECOND)
            assert refused.status_code == 503, refused.text
            assert "in use by requests and checks" in refused.json()["detail"]
        finally:
            gate.set()
        blocker.result(timeout=30)
        job.finished.result(timeout=30)  # done: the job drops its trace
        assert client.post("/api/traces", json=SECOND).status_code == 200


def test_a_trace_larger_than_the_whole_budget_is_refused_when_resolved():
    budget = one_trace_bytes() // 2
    with make_client(cache_bytes=budget, max_trace_bytes=10 * budget) as client:
        response = client.post("/api/traces", json=SMALL_SPEC)
        assert response.status_code == 422, response.text
        assert "cache_bytes" in response.text and len(client.app.state.services.store) == 0


def test_rebuilding_an_evicted_trace_that_trains_needs_the_admin_key():
    key = {"X-Admin-Key": "k" * 32}
    trained = {**SMALL_SPEC, "optimizer": {"name": "sgd", "lr": 0.1}, "train_steps": 2}
    with make_client(admin_key="k" * 32) as client:
        services = client.app.state.services
        summary = client.post("/api/traces", json=trained, headers=key).json()
        fresh = TraceStore(services.settings)  # the trace evicted, its id still known
        fresh.remember(services.store.spec(summary["id"]))
        services.store = services.admission.store = fresh
        url = f"/api/traces/{summary['id']}/steps/3"
        assert client.get(url).status_code == 403  # a follower may view it, not train it again
        assert len(fresh) == 0
        assert client.get(url, headers=key).status_code == 200
