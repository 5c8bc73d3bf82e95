"""Memory beyond the traces held within the stated bound (issue 35, finding 7): a first gradient
check's float64 twin is held in the one budget before it is built, and waits (with the builds
behind it) while the budget has no room for it; freed memory goes back to the kernel once idle."""

from __future__ import annotations

import asyncio
from concurrent.futures import Future

from app.services import Services
from app.settings import Settings
from app.spec import ResolvedSpec, TraceSpec, resolve
from app.traces import freed
from app.traces.admission import twin_build_bytes
from tests.app.test_queue import costs, queue  # noqa: F401 - the fixture and the queue of fake specs
from tests.helpers.aio import run_async
from tests.helpers.client import make_client, post_trace
from tests.helpers.specs import SMALL_SPEC
from xt_core import Trace
from xt_core.checks.twin import twin_of

MB = 1 << 20


def test_working_memory_waits_for_room_and_the_builds_wait_behind_it(costs):  # noqa: F811
    async def scenario():
        q = queue()  # 100 MB
        running = q.admit(costs("smollm2", 70 * MB, 10.0), "a")
        twin = asyncio.ensure_future(q.hold(50 * MB))  # 70 + 50 > 100: it waits
        await asyncio.sleep(0)
        assert not twin.done() and q.store.reserved == 70 * MB
        behind = q.admit(costs("next", 10 * MB, 1.0), "b")  # it would fit, but the twin goes first
        assert not behind.started.is_set()
        q.release(running)
        let_go = await twin
        assert q.holding == 1 and q.store.reserved == 60 * MB and behind.started.is_set()
        let_go()
        let_go()  # idempotent
        assert q.holding == 0 and q.store.reserved == 10 * MB

    run_async(scenario())


def test_a_hold_past_the_budget_runs_once_alone_and_a_cancelled_one_holds_nothing(costs):  # noqa: F811
    async def scenario():
        q = queue()
        running = q.admit(costs("a", 90 * MB), "a")
        huge, gone = (asyncio.ensure_future(q.hold(n * MB)) for n in (500, 50))
        await asyncio.sleep(0)
        assert not huge.done() and not gone.done()
        gone.cancel()  # its request left while it waited
        await asyncio.gather(gone, return_exceptions=True)
        assert len(q.working) == 1 and q.holding == 0
        q.release(running)
        let_go = await huge  # alone, it runs: refusing it would refuse the check for good
        assert q.holding == 1
        let_go()
        assert q.holding == 0 and q.store.reserved == 0 and not q.working

    run_async(scenario())


async def services_with_a_small_trace() -> tuple[Services, ResolvedSpec, Trace]:
    """New services (default settings) and SMALL_SPEC's trace, built through them."""
    services = Services(Settings())
    spec = resolve(TraceSpec.model_validate(SMALL_SPEC), services.settings)
    return services, spec, await services.build(spec)


def test_a_float32_traces_first_check_holds_its_twins_bytes_until_let_go():
    async def scenario():
        services, _, trace = await services_with_a_small_trace()
        settings = services.settings
        n_seq, T = trace.tokens.shape
        async with services.twin_room(trace):
            assert services.store.reserved == twin_build_bytes(trace.cfg, n_seq, T) > 0
        assert services.store.reserved == 0
        twin = twin_of(trace)  # built, its backward still to run (a check of an earlier step runs it)
        let_go = await services.hold_twin(trace)
        assert services.store.reserved == twin_build_bytes(trace.cfg, n_seq, T)
        let_go()
        twin.grad(trace.nodes[0].name)  # its backward run whole: nothing more to hold
        (await services.hold_twin(trace))()
        assert services.store.reserved == 0
        f64 = await services.build(resolve(TraceSpec.model_validate({**SMALL_SPEC, "dtype": "float64"}), settings))
        async with services.twin_room(f64):
            services.shutdown()

    run_async(scenario())


def test_a_quiz_probe_holds_its_twins_bytes_while_its_check_builds_it(monkeypatch):
    with make_client() as client:
        services = client.app.state.services
        quiz = post_trace(client, {**SMALL_SPEC, "quiz": 23})
        seen, check_of = [], services.answers.check_of

        def check_seeing_the_budget(ctx, index):
            seen.append((services.admission.holding, services.store.reserved, ctx.trace.float64_twin is None))
            return check_of(ctx, index)

        monkeypatch.setattr(services.answers, "check_of", check_seeing_the_budget)
        assert client.post(f"/api/traces/{quiz['id']}/quiz/probe", json={"step": 1}).status_code == 200
        trace = services.store.get(services.store.spec(quiz["id"]))
        assert seen == [(1, twin_build_bytes(trace.cfg, *trace.tokens.shape), True)]  # held while it built the twin
        assert services.admission.holding == 0 and services.store.reserved == 0 and trace.float64_twin is not None


def test_a_check_job_holds_its_twins_bytes_until_it_ends():
    async def scenario():
        services = Services(Settings())
        job, let_go = Future(), []
        services.hold_while_checking(job, lambda: let_go.append("gone"))
        for _ in range(3):
            await asyncio.sleep(0)
        assert let_go == []  # the job runs: its bytes stay held
        job.set_result(None)
        for _ in range(100):
            if let_go:
                break
            await asyncio.sleep(0)
        assert let_go == ["gone"]
        services.shutdown()

    run_async(scenario())


def test_freed_memory_is_given_back_once_grown_enough(monkeypatch):
    trims, rss = [], [0]
    monkeypatch.setattr(freed, "_malloc_trim", lambda: trims.append)
    monkeypatch.setattr(freed, "rss_bytes", lambda: rss[0])
    monkeypatch.setattr(freed, "_after_last_trim", [1000 * MB])
    rss[0] = 1010 * MB  # grown 10 MB: not worth a trim
    assert not freed.give_back() and trims == []
    rss[0] = 1100 * MB
    assert freed.give_back() and trims == [0]
    assert not freed.give_back() and trims == [0]  # nothing grew since
