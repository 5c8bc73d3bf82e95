"""One byte budget for every trace alive (issue 24, finding 4): a trace evicted from the cache
while a request or a check job still holds it keeps counting until it is collected, so a build
that would pass cache_bytes beside it waits its turn in the queue (issue 26) until then; a trace
larger than the whole budget is refused when its spec is resolved (422), never admitted as
"the first build"; and rebuilding an evicted trace that trains needs the admin key whichever
route asks."""

from __future__ import annotations

import asyncio
import threading
import time

import numpy as np
import pytest

from app.settings import Settings
from app.spec import TraceSpec, resolve
from app.spec.cost import spec_cost
from app.traces.admission import Admission
from app.traces.store import NotBuilt, TraceStore, build_trace
from tests.helpers.aio import run_async
from tests.helpers.client import make_client, post_trace
from tests.helpers.specs import SMALL_SPEC
from xt_core import memory

SECOND = {**SMALL_SPEC, "seed": 2}
MB = 1 << 20


def resolved(body: dict, settings: Settings):
    return resolve(TraceSpec.model_validate(body), settings)


def one_trace_bytes() -> int:
    """What a build of SMALL_SPEC reserves: its peak (every forward value at once)."""
    return spec_cost(resolved(SMALL_SPEC, Settings())).nbytes


def held_bytes() -> int:
    """What its trace then holds (its boundaries: xt_core.recompute), far less than its build."""
    return build_trace(resolved(SMALL_SPEC, Settings())).nbytes()


def room_for_one() -> int:
    """A budget with room for one build beside no trace held, not beside one."""
    return one_trace_bytes() + held_bytes() // 2


def test_a_trace_in_use_counts_against_the_budget_until_it_is_collected():
    settings = Settings(cache_bytes=room_for_one())  # room for one build, not beside a trace in use
    store = TraceStore(settings)
    admission = Admission(settings, store)
    held = store.get(resolved(SMALL_SPEC, settings))  # in use, as by a request drawing a view
    assert store.live_bytes == store.nbytes > 0
    ticket = admission.admit(resolved(SECOND, settings))
    assert not ticket.started.is_set()  # it waits its turn: the trace in use leaves too little room
    assert len(store) == 1  # in use: evicting it would free nothing, so it stays cached
    assert admission.where(ticket.spec_id)["state"] == "queued"
    assert store.reserved == 0  # waiting, it holds nothing
    del held  # the request is done with it: evicting it frees its bytes now
    run_async(asyncio.wait_for(admission.wait(ticket), 5))  # the head re-asks for its bytes: they fit
    assert len(store) == 0 and store.live_bytes == 0
    store.get(resolved(SECOND, settings), ticket.reservation)
    admission.release(ticket)
    assert store.live_bytes == store.nbytes > 0 and store.reserved == 0


def test_a_check_job_holding_an_evicted_trace_makes_a_build_past_the_budget_wait():
    with make_client(cache_bytes=room_for_one()) as client:
        services = client.app.state.services
        first = post_trace(client, SMALL_SPEC)
        gate = threading.Event()
        blocker = services.executor.submit(gate.wait, 30)  # the one worker: the job's checks wait behind it
        second = resolved(SECOND, services.settings)
        answers = []
        try:
            job = services.checks.start(first["id"], services.store.cached(services.store.spec(first["id"])))
            posting = threading.Thread(
                target=lambda: answers.append(client.post("/api/traces", json=SECOND)), daemon=True
            )
            posting.start()
            place = {}
            for _ in range(200):
                place = client.get(f"/api/traces/{second.id}/queue").json()
                if place["state"] == "queued":
                    break
                time.sleep(0.02)
            assert place["state"] == "queued" and place["position"] == 1 and place["seconds"] is not None, place
        finally:
            gate.set()
            blocker.result(timeout=30)
            job.finished.result(timeout=30)  # done: the job drops its trace, the build's turn comes
            posting.join(timeout=30)
        assert answers and answers[0].status_code == 200, answers


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


def test_a_refused_reservation_evicts_nothing():
    settings = Settings(cache_bytes=one_trace_bytes() + held_bytes() * 5 // 2)  # two traces and a build, not three
    store = TraceStore(settings)
    held = store.get(resolved(SMALL_SPEC, settings))  # in use: evicting it frees nothing
    store.get(resolved(SECOND, settings))
    assert len(store) == 2
    assert store.reserve(one_trace_bytes() + 2 * held_bytes()) is None  # in use + needed > budget: no use evicting
    assert len(store) == 2 and store.reserved == 0
    del held


def test_a_request_that_joined_a_build_gone_from_the_cache_is_admitted_again():
    settings = Settings()
    store = TraceStore(settings)
    with pytest.raises(NotBuilt):
        store.get(resolved(SMALL_SPEC, settings), None, joined=True)  # the build it waited for was evicted
    assert len(store) == 0 and store.live_bytes == 0


def test_the_update_step_reserves_no_update_and_training_reserves_its_state():
    settings = Settings()
    plain = spec_cost(resolved(SMALL_SPEC, settings)).nbytes
    update = spec_cost(resolved({**SMALL_SPEC, "optimizer": {"name": "adamw"}}, settings)).nbytes
    weights = resolved(SMALL_SPEC, settings).cfg.n_params() * 4
    assert update == plain + weights  # its gradients, held through the update; its ΔW is recomputed, never held
    sgd = resolved({**SMALL_SPEC, "optimizer": {"name": "sgd"}, "train_steps": 2}, settings)
    adamw = resolved({**SMALL_SPEC, "optimizer": {"name": "adamw"}, "train_steps": 2}, settings)
    assert spec_cost(adamw).nbytes > spec_cost(sgd).nbytes  # m and v beside the weights


def test_a_build_past_the_trace_limit_with_its_training_is_refused_when_resolved():
    trained = {**SMALL_SPEC, "optimizer": {"name": "adamw"}, "train_steps": 2}
    needed = spec_cost(resolved(trained, Settings())).nbytes
    with make_client(cache_bytes=needed - 1, max_trace_bytes=needed - 1) as client:
        assert client.post("/api/traces", json=SMALL_SPEC).status_code == 200  # the trace alone fits
        response = client.post("/api/traces", json=trained)
        assert response.status_code == 422, response.text
        assert response.json()["detail"][0]["loc"] == ["body", "train_steps"]


def test_a_diffs_correct_twin_that_trains_needs_the_admin_key():
    key = {"X-Admin-Key": "k" * 32}
    spec = {**SMALL_SPEC, "faults": ["softmax_missing_sum_term"], "optimizer": {"name": "sgd"}, "train_steps": 1}
    with make_client(admin_key="k" * 32) as client:
        summary = client.post("/api/traces", json=spec, headers=key).json()
        backward = next(s["index"] for s in summary["steps"] if s["phase"] == "backward")
        url = f"/api/traces/{summary['id']}/steps/{backward}/diff"
        assert client.get(url).status_code == 403  # the fault-free twin would train
        assert len(client.app.state.services.store) == 1
        assert client.get(url, headers=key).status_code == 200


def test_the_large_buffers_kept_free_count_in_the_budget_and_go_first(monkeypatch):
    """xt_core.memory keeps the last large arrays' memory for the next step (SmolLM2's float64 (V, C)
    pair: 453 MB no trace counts): room for a build is made by dropping them, before any cached trace."""
    monkeypatch.setattr(memory, "_large_buffers", [])
    memory.reusable_empty((memory.LARGE_ARRAY_BYTES // 8 + 1,), np.float64)  # dropped at once: kept, free
    kept = memory.kept_bytes()
    assert kept > memory.LARGE_ARRAY_BYTES
    store = TraceStore(Settings(cache_bytes=kept + 64 * MB, recompute_bytes=0))
    assert store.reserve(32 * MB) is not None and memory.kept_bytes() == kept  # room beside it: kept
    assert store.reserve(64 * MB) is not None and memory.kept_bytes() == 0  # no room: dropped
