"""The small builds' lane (issue 35, finding 8): a tiny spec is started ahead of a queued heavy
build and finishes while a heavy one still runs; the queue's recheck hands a waiting build its turn
without a timeout of the waiter's own. By event order: a fake heavy build waits on an event."""

from __future__ import annotations

import asyncio
import threading

import pytest

from app.services import Services
from app.settings import Settings
from app.spec import TraceSpec, resolve
from app.spec.cost import Cost
from app.traces import admission as admission_module
from app.traces import store as store_module
from app.traces.pool import BUILDS, SMALL
from tests.app.test_queue import costs, queue  # noqa: F401 - the fixture and the queue of fake specs
from tests.helpers.aio import run_async
from tests.helpers.specs import SMALL_SPEC

MB = 1 << 20


def test_a_tiny_build_takes_the_small_lane_ahead_of_a_queued_heavy_one(costs):  # noqa: F811
    q = queue(small_build_seconds=0.5, small_build_bytes=8 * MB)
    running = q.admit(costs("smollm2-a", 40 * MB, 10.0), "a")
    queued = q.admit(costs("smollm2-b", 40 * MB, 10.0), "b")
    tiny = q.admit(costs("tiny", MB // 8, 0.004), "c")
    assert running.started.is_set() and running.pool == BUILDS and not queued.started.is_set()
    assert tiny.started.is_set() and tiny.pool == SMALL and q.small_builds == 1 and q.builds == 1
    assert q.where("tiny")["state"] == "building" and q.where("smollm2-b")["position"] == 1
    large = q.admit(costs("class-too-big", 16 * MB, 0.2), "d")  # quick, but past the lane's bytes
    assert not large.started.is_set()
    q.release(tiny)
    assert q.small_builds == 0 and not large.started.is_set() and not queued.started.is_set()
    q.release(running)
    assert queued.started.is_set() and q.builds == 1  # the heavy one keeps its turn in the builds lane


def test_a_heavy_build_leaves_the_idle_lanes_bytes_free_so_a_tiny_one_never_waits_for_its_bytes(costs):  # noqa: F811
    q = queue(worker_threads=2, small_build_bytes=8 * MB)  # 100 MB
    first = q.admit(costs("smollm2", 40 * MB, 10.0), "a")
    float64 = q.admit(costs("float64", 55 * MB, 10.0), "b")  # 40 + 55 fits, but not with the lane's 8
    assert first.started.is_set() and not float64.started.is_set() and q.wants_room
    tiny = q.admit(costs("tiny", MB // 8, 0.004), "c")
    assert tiny.started.is_set() and tiny.pool == SMALL  # its bytes were there
    q.release(tiny)
    q.release(first)
    assert float64.started.is_set()
    whole = q.admit(costs("as-large-as-the-budget", 96 * MB, 10.0), "d")  # keeps nothing: it could never start
    q.release(float64)
    assert whole.started.is_set()


def test_a_second_tiny_build_waits_for_the_lanes_slot_not_for_the_heavy_build(costs):  # noqa: F811
    q = queue()
    q.admit(costs("smollm2", 40 * MB, 10.0), "a")
    first, second = (q.admit(costs(f"tiny{k}", MB // 8, 0.004), f"c{k}") for k in range(2))
    assert first.started.is_set() and not second.started.is_set()
    q.release(first)
    assert second.started.is_set() and second.pool == SMALL


def test_the_recheck_hands_a_build_its_turn_once_room_is_freed_unannounced(costs):  # noqa: F811
    async def scenario():
        q = queue()
        room = {"free": False}
        reserve = q.store.reserve
        q.store.reserve = lambda nbytes, kept=0: (
            reserve(nbytes, kept) if room["free"] else None
        )  # a trace in use holds it
        ticket = q.admit(costs("big", 90 * MB, 5.0), "a")
        assert q._recheck_due is asyncio.get_running_loop()  # a recheck is due while it waits
        waiter = asyncio.ensure_future(q.wait(ticket))
        await asyncio.sleep(0)
        assert not waiter.done()
        room["free"] = True  # the trace in use was collected: no release announces it
        q.recheck()  # what the due recheck runs
        await waiter
        assert ticket.started.is_set() and q.builds == 1 and q.waiting == 0

    run_async(scenario())


def test_a_turn_granted_as_its_waiter_is_cancelled_is_given_back(costs):  # noqa: F811
    async def scenario():
        q = queue()
        blocker = q.admit(costs("a", 10 * MB), "a")
        ticket = q.admit(costs("b", 10 * MB), "b")
        waiter = asyncio.ensure_future(q.wait(ticket))
        await asyncio.sleep(0)
        q.release(blocker)  # its turn is granted...
        waiter.cancel()  # ...in the very step its client leaves
        with pytest.raises(asyncio.CancelledError):
            await waiter
        q.release(ticket)  # as Services.build does on CancelledError
        assert q.builds == 0 and q.store.reserved == 0 and not q.running and q.waiting == 0

    run_async(scenario())


def test_a_tiny_spec_is_built_while_a_heavy_build_runs_and_another_waits(monkeypatch):
    """Real services: two heavy builds (faked: each waits on `gate`) and a tiny one asked after
    them; the tiny one and a second request for it are answered while the gate is still closed."""
    settings = Settings()
    heavy = [resolve(TraceSpec.model_validate({**SMALL_SPEC, "seed": seed}), settings) for seed in (11, 12)]
    tiny = resolve(TraceSpec.model_validate({**SMALL_SPEC, "seed": 13}), settings)
    heavy_ids, gate, built = {spec.id for spec in heavy}, threading.Event(), []
    real_cost, real_build = admission_module.spec_cost, store_module.build_trace
    monkeypatch.setattr(admission_module, "spec_cost", lambda s: Cost(MB, 10.0) if s.id in heavy_ids else real_cost(s))

    def build(spec, progress=None):
        if spec.id in heavy_ids:
            gate.wait()  # a SmolLM2 build: it runs until the test opens the gate
        built.append(spec.id)
        return real_build(spec, progress)

    monkeypatch.setattr(store_module, "build_trace", build)

    async def scenario():
        services = Services(settings)
        try:
            running = asyncio.ensure_future(services.build(heavy[0]))
            while services.admission.builds == 0:
                await asyncio.sleep(0)
            queued = asyncio.ensure_future(services.build(heavy[1]))
            await asyncio.sleep(0)
            assert services.admission.where(heavy[1].id)["state"] == "queued"
            both = asyncio.gather(services.build(tiny), services.build(tiny))
            await asyncio.wait({both}, timeout=60)  # a guard: behind the heavy builds it would never finish
            assert both.done(), "the tiny build waited behind the heavy ones"
            answers = both.result()
            assert answers[0] is answers[1] and built == [tiny.id]  # one build, while both heavy wait
            assert not running.done() and not queued.done()
        finally:
            gate.set()
        await asyncio.gather(running, queued)
        assert built == [tiny.id, heavy[0].id, heavy[1].id]
        services.shutdown()

    run_async(scenario())
