"""A check job does not hold the memory budget for its whole run (issue 35, finding 7: a float64
build waited >900 s behind a SmolLM2 /checks job): between two steps, while something waits for
bytes, it lets its room and its trace go, and its next step's room waits behind the builds admitted
before it (app.traces.check_room, Admission.hold after_builds). Event order and bookkeeping only."""

from __future__ import annotations

import asyncio
from concurrent.futures import Executor, Future
from types import SimpleNamespace

from app.settings import Settings
from app.spec import TraceSpec, resolve
from app.traces import checks as checks_module
from app.traces.cache import LRU
from app.traces.check_room import CheckRoom
from app.traces.checks import ChecksRunner
from app.traces.store import build_trace
from app.traces.working import check_bytes
from tests.app.test_queue import costs, queue  # noqa: F401 - the fixture and the queue of fake specs
from tests.app.test_working_memory import services_with_a_small_trace
from tests.helpers.aio import run_async
from tests.helpers.specs import SMALL_SPEC
from xt_core.checks.twin import twin_of

MB = 1 << 20


def test_a_held_room_made_way_for_waits_behind_the_builds_admitted_before_it(costs):  # noqa: F811
    async def scenario():
        q = queue(worker_threads=2)  # 100 MB: a slot is free, only bytes are waited for
        step = await q.hold(40 * MB)  # a check job's room
        running = q.admit(costs("other", 50 * MB), "b")
        float64 = q.admit(costs("float64", 58 * MB), "c")  # 40 + 50 + 58 > 100
        assert running.started.is_set() and not float64.started.is_set() and q.wants_room
        step()  # the job makes way: 50 + 58 still too many
        assert not float64.started.is_set() and q.wants_room
        next_step = asyncio.ensure_future(q.hold(40 * MB, after_builds=True))  # 50 + 40 would fit ...
        await asyncio.sleep(0)
        assert not next_step.done() and q.holding == 0  # ... but the float64 build was admitted first
        q.release(running)
        assert float64.started.is_set() and not q.wants_room
        (await next_step)()  # 58 + 40 (+ the small lane's 2): its turn, it fits
        assert q.holding == 0 and q.store.reserved == 58 * MB

    run_async(scenario())


def test_a_room_waiting_behind_a_build_nothing_running_can_start_goes_alone(costs):  # noqa: F811
    async def scenario():
        q = queue()
        in_use = q.store.reserve(70 * MB)  # bytes no admitted work holds (traces in use)
        stuck = q.admit(costs("float64", 60 * MB), "c")
        assert not stuck.started.is_set() and q.wants_room
        let_go = await q.hold(20 * MB, after_builds=True)  # nothing else runs: a check job never stalls
        assert q.holding == 1 and not stuck.started.is_set()
        let_go()
        q.store.release(in_use)
        q.recheck()
        assert stuck.started.is_set()

    run_async(scenario())


class Inline(Executor):
    """Runs a submitted step at once, on the caller's thread."""

    def submit(self, fn, /, *args, **kwargs) -> Future:
        done: Future = Future()
        done.set_result(fn(*args, **kwargs))
        return done


def test_a_check_job_makes_way_between_steps_and_goes_on_where_it_stopped(monkeypatch):
    trace = build_trace(resolve(TraceSpec.model_validate(SMALL_SPEC), Settings()))
    order = checks_module.check_order(trace)
    events, wanted = [], [False]

    def check(held_trace, index):
        events.append(("check", index, held_trace is trace))
        wanted[0] = index == order[1]  # after the second step a build waits for bytes
        return SimpleNamespace(max_rel_error=0.0, passed=True)

    async def retake(trace_id):
        events.append(("retake", job.trace))
        return SimpleNamespace(trace=trace)

    async def hold(reads):
        events.append(("hold again", reads.trace is trace))
        return lambda: events.append("let go")

    async def scenario():
        nonlocal job
        room = CheckRoom(lambda: wanted[0], retake, hold, lambda: events.append("let go"))
        job = ChecksRunner(Inline(), LRU(1000)).start("t", trace, room)
        await asyncio.wrap_future(job.finished)
        room.end()

    job = None
    monkeypatch.setattr(checks_module, "check_record", check)
    run_async(scenario())
    assert events[:6] == [
        ("check", order[0], True),
        ("check", order[1], True),
        "let go",  # its room first, then its trace: unreferenced, cached, evictable
        ("retake", None),
        ("hold again", True),
        ("check", order[2], True),  # where it stopped, with its trace and room again
    ]
    assert events[6:] == [("check", i, True) for i in order[3:]] + ["let go"]  # once let go, never twice


def test_a_started_check_job_holds_its_room_once_until_it_ends():
    async def scenario():
        services, spec, trace = await services_with_a_small_trace()
        twin_of(trace)  # built already: its steps still replay in float64
        job = await services.checks_job(spec.id)
        assert await services.checks_job(spec.id) is job  # a second request: the same job, nothing more held
        assert services.admission.holding == 1
        assert services.store.reserved == check_bytes(trace)
        await asyncio.gather(*services._watchers)  # the job's end lets its room go
        assert job.finished.done() and services.admission.holding == 0 and services.store.reserved == 0
        services.shutdown()

    run_async(scenario())
