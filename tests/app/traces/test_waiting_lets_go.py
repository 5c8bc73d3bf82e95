"""A request waiting for its working bytes lets its traces go (app.traces.working Room): work that
runs alone past the budget evicts them instead of running beside them (issue 35, finding 7: a mix's
peak had 1.1 GB of traces pinned by requests waiting their turn beside an AdamW check run alone).
Its own bytes never evict them; once held, it takes them again, rebuilt if something else evicted
them. Bookkeeping and event order only."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from app.services import Services
from app.settings import Settings
from app.spec import TraceSpec, resolve
from app.spec.cost import spec_cost
from app.steps.context import TraceContext
from app.traces.room import Room
from tests.helpers.aio import run_async
from tests.helpers.specs import SMALL_SPEC

SPECS = [resolve(TraceSpec.model_validate({**SMALL_SPEC, "seed": seed}), Settings()) for seed in (1, 2)]


def trace_size() -> int:
    """What the store counts for one SMALL_SPEC trace."""

    async def built() -> int:
        services = Services(Settings(recompute_bytes=0))
        await services.build(SPECS[0])
        services.shutdown()
        return services.store.live_bytes

    return run_async(built())


def contexts(services: Services) -> list[TraceContext]:
    """SPECS' traces, built on this thread: no worker thread still holds a result as the test goes on."""
    return [TraceContext(spec, services.store.get(spec), services.settings) for spec in SPECS]


def services_for(size: int) -> Services:
    """A budget of one build and one trace beside it; no recomputed segments, no room kept for the
    small lane."""
    budget = spec_cost(SPECS[0]).nbytes + size
    return Services(Settings(cache_bytes=budget, recompute_bytes=0, small_build_bytes=0))


def test_a_waiting_request_lets_its_trace_go_and_a_hold_run_alone_evicts_it():
    size = trace_size()

    async def scenario():
        services = services_for(size)
        store, admission, budget = services.store, services.admission, services.settings.cache_bytes
        spec_a, spec_b = SPECS
        ctx_a, ctx_b = contexts(services)
        assert store.live_bytes == 2 * size
        running = await admission.hold(size // 5)  # something runs: the two below wait
        work = budget - size  # fits beside its own trace, not beside the other's too
        waiting_a = asyncio.ensure_future(services.room.hold_for(work, ctx_a))
        waiting_b = asyncio.ensure_future(services.room.hold_for(work, ctx_b))
        await asyncio.sleep(0)
        assert not waiting_a.done() and not waiting_b.done()
        assert ctx_a.trace is None and ctx_b.trace is None  # let go while they wait: cached, evictable
        running()
        let_go_a = await waiting_a
        assert ctx_a.trace is store.cached(spec_a)  # taken again: its own bytes did not evict it
        assert store.cached(spec_b) is None  # the waiting request's trace went instead of staying pinned
        assert store.live_bytes + store.reserved == budget  # before: past it by b's trace, run alone
        assert not waiting_b.done()
        let_go_a()  # b's turn: its trace is rebuilt (its bytes let go meanwhile), then they are held again
        let_go_b = await waiting_b
        assert ctx_b.trace is not None and ctx_b.trace is store.cached(spec_b)
        assert admission.holding == 1 and store.reserved == work
        let_go_b()
        assert admission.holding == 0 and store.reserved == 0
        services.shutdown()

    run_async(scenario())


def test_a_views_job_waiting_for_the_large_turn_lets_its_trace_go_and_reads_it_once_held():
    size = trace_size()

    async def scenario():
        services = services_for(size)
        spec_a, spec_b = SPECS
        ctx_a, ctx_b = contexts(services)
        first_in = asyncio.Event()
        let_first_go = asyncio.Event()

        async def view(ctx, seen: list):
            async with services.room.held(size, ctx):  # large: one views job at a time
                seen.append(ctx.trace)
                first_in.set()
                await let_first_go.wait()

        seen_a, seen_b = [], []
        first = asyncio.ensure_future(view(ctx_a, seen_a))
        await first_in.wait()
        second = asyncio.ensure_future(view(ctx_b, seen_b))
        await asyncio.sleep(0)
        assert ctx_b.trace is None and not seen_b  # its turn not come: its trace let go
        let_first_go.set()
        await asyncio.gather(first, second)
        assert seen_a == [services.store.cached(spec_a)] and seen_b == [services.store.cached(spec_b)]
        assert services.store.reserved == 0
        services.shutdown()

    run_async(scenario())


def test_a_large_job_whose_trace_was_evicted_rebuilds_it_without_its_turn():
    """While its trace is rebuilt (a build behind the class's queue), the other large views run."""

    async def scenario():
        events, rebuilt = [], asyncio.Event()
        spec_a, spec_b = (SimpleNamespace(id=name) for name in ("a", "b"))
        cache = {"b": "trace b"}  # a's was evicted while it waited

        async def hold(nbytes, after_builds=False, spare=frozenset()):
            events.append(("hold", sorted(spare)))
            return lambda: events.append("let go")

        async def rebuild(spec, request):
            events.append(("rebuild", spec.id))
            await rebuilt.wait()
            cache[spec.id] = f"trace {spec.id}"
            return cache[spec.id]

        room = Room(hold, small_bytes=0, cached=lambda spec: cache.get(spec.id), rebuild=rebuild)
        a, b = SimpleNamespace(spec=spec_a, trace="old a"), SimpleNamespace(spec=spec_b, trace="trace b")

        async def view(job):
            async with room.held(1, job):
                events.append(("view", job.trace))

        first = asyncio.ensure_future(view(a))
        await asyncio.sleep(0)
        await asyncio.wait_for(view(b), 30)  # its turn comes while a's trace is rebuilt (before: never)
        rebuilt.set()
        await first
        assert events == [
            ("hold", ["a"]),
            "let go",  # a's bytes and turn let go before its build
            ("rebuild", "a"),
            ("hold", ["b"]),
            ("view", "trace b"),
            "let go",
            ("hold", []),  # a's second round: its trace kept
            ("view", "trace a"),
            "let go",
        ]

    run_async(scenario())
