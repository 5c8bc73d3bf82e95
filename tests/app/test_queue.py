"""Admission as a fair queue (issue 26): a build waits its turn instead of a 503; clients take turns;
a big build is not starved by a stream of small ones; a client that leaves loses its place; 429
past a client's share, 503 only when the queue is full."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from app.services import ClientGone, Services
from app.settings import Settings
from app.spec.cost import Cost
from app.traces import admission as admission_module
from app.traces.admission import Admission
from app.traces.busy import Overloaded, TooManyQueued
from app.traces.store import TraceStore
from tests.helpers.aio import run_async

MB = 1 << 20


@pytest.fixture
def costs(monkeypatch):
    """Specs that are only an id and an estimate (what admission reads of them)."""
    monkeypatch.setattr(admission_module, "spec_cost", lambda spec: spec.cost)

    def spec(name: str, nbytes: int = MB, seconds: float = 1.0):
        return SimpleNamespace(id=name, cost=Cost(nbytes, seconds))

    return spec


def queue(**settings) -> Admission:
    # the small lane's bytes (kept free for it) in proportion to the 100 MB budget
    defaults = {"cache_bytes": 100 * MB, "recompute_bytes": 0, "max_queued_seconds": 1e6, "small_build_bytes": 2 * MB}
    chosen = Settings(**{**defaults, **settings})
    return Admission(chosen, TraceStore(chosen))


def test_clients_take_turns_and_each_clients_builds_keep_their_order(costs):
    q = queue()
    running = q.admit(costs("a0"), "a")  # the one worker's build
    mine = [q.admit(costs(f"a{k}"), "a") for k in (1, 2)]
    theirs = q.admit(costs("b1"), "b")
    assert running.started.is_set() and not any(t.started.is_set() for t in (*mine, theirs))
    assert [t.spec_id for t in q.order()] == ["a1", "b1", "a2"]  # b's first before a's second
    assert q.where("b1") | {"waiting": 3} == {
        "state": "queued",
        "position": 2,
        "ahead": 1,
        "ahead_seconds": 2.0,
        "seconds": 1.0,
        "waiting": 3,
    }
    started = []
    for ticket in (running, mine[0], theirs, mine[1]):
        q.release(ticket)
        started += [t.spec_id for t in (*mine, theirs) if t.started.is_set() and t.spec_id not in started]
    assert started == ["a1", "b1", "a2"] and q.builds == 0 and q.store.reserved == 0


def test_a_big_build_is_started_while_small_ones_keep_arriving(costs):
    q = queue(worker_threads=2)
    small = [q.admit(costs(f"s{k}", 30 * MB), f"c{k}") for k in range(2)]  # two running: 60 MB of 100
    big = q.admit(costs("big", 90 * MB, 5.0), "teacher")
    assert not big.started.is_set()  # it needs 90 MB: it waits for room
    arrived = []
    for k in range(2, 8):  # a stream of small builds, each of which would fit on its own
        arrived.append(q.admit(costs(f"s{k}", 30 * MB), f"c{k}"))
        assert not arrived[-1].started.is_set()  # none overtakes the big one at the head
    q.release(small[0])
    assert not big.started.is_set()  # 30 MB still held: not yet
    q.release(small[1])
    assert big.started.is_set() and not any(t.started.is_set() for t in arrived)
    q.release(big)
    assert [t.started.is_set() for t in arrived] == [True, True, False, False, False, False]  # then in turn


def test_a_client_that_leaves_loses_its_place(costs):
    q = queue()
    running = q.admit(costs("r"), "a")
    gone, next_ = q.admit(costs("gone"), "b"), q.admit(costs("next"), "c")
    assert q.where("next")["position"] == 2
    q.release(gone)  # its request was cancelled while it waited
    assert q.where("gone")["state"] == "idle" and q.where("next")["position"] == 1
    q.release(running)
    assert next_.started.is_set() and not gone.started.is_set() and q.builds == 1


def test_a_request_whose_client_disconnects_while_queued_leaves_the_queue():
    class LeavesSoon:
        async def receive(self):
            await asyncio.sleep(0.3)  # the client leaves while its build waits behind the running one
            return {"type": "http.disconnect"}

    async def scenario():
        from app.spec import TraceSpec, resolve
        from tests.helpers.specs import SMALL_SPEC

        settings = Settings(small_build_seconds=0.0)  # no small lane: the tiny spec waits behind the blocker
        services = Services(settings)
        blocker = services.admission.admit(SimpleNamespace(id="x", cost=Cost(0, 1.0)), "someone")
        assert blocker.started.is_set()  # stands for a build running on the one worker
        spec = resolve(TraceSpec.model_validate(SMALL_SPEC), settings)
        waiting = asyncio.ensure_future(services.build(spec, LeavesSoon()))
        await asyncio.sleep(0.1)
        assert services.admission.where(spec.id)["state"] == "queued"
        with pytest.raises(ClientGone):
            await waiting
        assert services.admission.where(spec.id)["state"] == "idle" and services.admission.waiting == 0
        services.admission.release(blocker)
        services.shutdown()

    admission_module.spec_cost, original = (
        lambda spec: spec.cost if isinstance(spec, SimpleNamespace) else original(spec),
        admission_module.spec_cost,
    )
    try:
        run_async(scenario())
    finally:
        admission_module.spec_cost = original


def test_429_past_a_clients_share_and_503_only_when_the_queue_is_full(costs):
    q = queue(max_queued_per_client=2, max_queued_builds=4)
    q.admit(costs("r"), "a")
    q.admit(costs("a1"), "a"), q.admit(costs("a2"), "a")
    with pytest.raises(TooManyQueued) as mine:
        q.admit(costs("a3"), "a")
    assert mine.value.status_code == 429 and "max_queued_per_client" in mine.value.detail
    q.admit(costs("b1"), "b"), q.admit(costs("c1"), "c")
    with pytest.raises(Overloaded) as full:
        q.admit(costs("d1"), "d")
    assert full.value.status_code == 503 and "max_queued_builds" in full.value.detail
    assert int(full.value.headers["Retry-After"]) >= 1
    same = q.admit(costs("b1"), "e")  # a spec already waiting: its request waits for that build, at no cost
    assert same.joined and same.behind is not None and q.waiting == 4
