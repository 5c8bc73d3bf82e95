"""Memory beyond the traces held within the stated bound (issue 35, finding 7): a gradient check's
float64 bytes (a first check's twin) are held in the one budget before it runs, and wait (with the
builds behind them) while the budget has no room for them; freed memory goes back to the kernel once
idle."""

from __future__ import annotations

import asyncio
from concurrent.futures import Future

from app.buglab import views as buglab_views
from app.main import create_app
from app.services import Services
from app.settings import Settings
from app.spec import ResolvedSpec, TraceSpec, resolve
from app.steps import view
from app.traces import freed, tensors
from app.traces.working import check_bytes, diff_bytes, tensor_bytes, twin_build_bytes, view_bytes
from tests.app.test_queue import costs, queue  # noqa: F401 - the fixture and the queue of fake specs
from tests.helpers.aio import run_async
from tests.helpers.client import make_client, post_trace
from tests.helpers.specs import SMALL_SPEC
from xt_core import Trace, memory
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


def test_a_hold_keeps_part_of_its_bytes_and_what_it_lets_go_starts_a_build(costs):  # noqa: F811
    async def scenario():
        q = queue()  # 100 MB
        held = await q.hold(80 * MB)
        waiting = q.admit(costs("next", 50 * MB, 1.0), "b")
        assert not waiting.started.is_set()
        kept = held.keep(30 * MB)  # the rest goes now: 30 + 50 fit
        assert waiting.started.is_set() and q.store.reserved == 80 * MB
        assert q.holding == 0  # kept bytes (a download streaming) are no running work
        held()  # let go already: nothing more
        assert q.store.reserved == 80 * MB
        q.release(waiting)
        huge = await q.hold(500 * MB)  # past the budget, it still runs alone beside the kept bytes
        assert q.store.reserved == 530 * MB
        huge()
        kept()
        kept()
        assert q.holding == 0 and q.store.reserved == 0

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
        assert q.holding == 1 and q.store.reserved == 500 * MB  # counted: nothing else fits beside it
        let_go()
        assert q.holding == 0 and q.store.reserved == 0 and not q.working

    run_async(scenario())


async def services_with_a_small_trace() -> tuple[Services, ResolvedSpec, Trace]:
    """New services (default settings) and SMALL_SPEC's trace, built through them."""
    services = Services(Settings())
    spec = resolve(TraceSpec.model_validate(SMALL_SPEC), services.settings)
    return services, spec, await services.build(spec)


def test_a_check_holds_the_float64_bytes_it_replays_in_until_let_go():
    """A float32 trace's first check builds its twin (twin_build_bytes); every later one replays float64
    segments as large (SmolLM2: up to 376 MiB after the twin, docs/performance.md), and so do a float64
    trace's: each holds check_bytes while it runs."""

    async def scenario():
        services, spec, trace = await services_with_a_small_trace()
        settings = services.settings
        n_seq, T = trace.tokens.shape
        ctx = await services.context(spec)
        async with services.twin_room(ctx, 1):
            assert services.store.reserved == check_bytes(trace, 1) == twin_build_bytes(trace.cfg, n_seq, T) > 0
            assert ctx.trace is trace  # let go while it waited, taken again from the cache
        assert services.store.reserved == 0
        twin = twin_of(trace)
        twin.grad(trace.nodes[0].name)  # its backward run whole: the later checks replay as much
        async with services.twin_room(ctx, 1):
            assert services.store.reserved == check_bytes(trace, 1)
        f64 = await services.context(resolve(TraceSpec.model_validate({**SMALL_SPEC, "dtype": "float64"}), settings))
        async with services.twin_room(f64, 1):
            assert services.store.reserved == check_bytes(f64.trace, 1) > 0
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
        assert seen == [(1, check_bytes(trace, 1), True)]  # held while it built the twin
        assert services.admission.holding == 0 and services.store.reserved == 0 and trace.float64_twin is not None


def test_a_check_job_holds_its_twins_bytes_until_it_ends_then_its_memory_is_given_back(monkeypatch):
    """While it runs its freed memory is offered back every CHECKS_TRIM_S; once it ends, once more
    (its last steps' memory: no request's job may end after it to trim it)."""
    events = []
    monkeypatch.setattr(freed, "_watched", [1 << 62])  # the process's watch trims nothing meanwhile
    monkeypatch.setattr(freed, "give_back", lambda: events.append("trim"))

    async def scenario():
        services = Services(Settings())
        job = Future()
        services.hold_while_checking(job, lambda: events.append("gone"))
        for _ in range(500):
            if events:
                break
            await asyncio.sleep(0.01)
        assert events == ["trim"]  # the job runs: its bytes stay held, its freed memory offered back
        job.set_result(None)
        for _ in range(500):  # the light pool's thread runs the trim
            if "gone" in events and events[-1] == "trim":
                break
            await asyncio.sleep(0.01)
        services.shutdown()

    run_async(scenario())
    assert "trim" in events[events.index("gone") :], events


def test_a_views_jobs_working_bytes_are_held_one_large_job_at_a_time_and_a_build_waits_for_them(costs):  # noqa: F811
    """A job of the views pool holds its bytes in the one budget (app.traces.working.Room): a build that
    would pass cache_bytes beside them waits; a second large job waits for its turn before it holds
    anything (the pool's one thread runs one at a time); a small one holds its bytes at once."""

    async def scenario():
        services = Services(Settings(cache_bytes=100 * MB, recompute_bytes=0, small_build_bytes=4 * MB))
        admission, events, finish = services.admission, [], asyncio.Event()

        async def job(name: str, nbytes: int) -> None:
            async with services.room.held(nbytes):
                events.append((name, admission.holding, services.store.reserved // MB))
                if name == "first":
                    await finish.wait()

        first = asyncio.ensure_future(job("first", 60 * MB))
        second = asyncio.ensure_future(job("second", 60 * MB))
        for _ in range(3):
            await asyncio.sleep(0)
        assert events == [("first", 1, 60)]  # the second holds nothing yet
        await job("small", 4 * MB)  # a tiny spec's view: at once, beside the first
        build = admission.admit(costs("smollm2", 60 * MB), "b")
        assert not build.started.is_set()  # 60 + 60 MB > 100: it waits for the view's bytes
        finish.set()
        await first
        assert build.started.is_set() and not second.done()  # the view's bytes let go: the build, then the next view
        admission.release(build)
        await second
        assert events[1:] == [("small", 2, 64), ("second", 1, 60)]
        assert admission.holding == 0 and services.store.reserved == 0
        services.shutdown()

    run_async(scenario())


def test_a_hold_that_fits_never_waits_behind_one_that_does_not(costs):  # noqa: F811
    """A view waiting behind a check that does not fit may hold the very trace in use that keeps the
    check from fitting: a hold that fits goes first (a SmolLM2 mix ran the update step's check alone,
    750 MB past the budget, while the float64 view that would have fitted waited behind it). A tiny
    spec's view (within small_build_bytes) may take the small lane's room, as a small build does."""

    async def scenario():
        q = queue()  # 100 MB, the small lane's 2 MB
        running = q.admit(costs("a", 60 * MB), "a")
        large = asyncio.ensure_future(q.hold(50 * MB))
        await asyncio.sleep(0)
        fits, small = asyncio.ensure_future(q.hold(30 * MB)), asyncio.ensure_future(q.hold(2 * MB))
        await asyncio.sleep(0)
        assert fits.done() and small.done() and not large.done() and q.holding == 2
        assert q.store.reserved == 92 * MB  # the small one in the lane's room: 60 + 30 + 2 of 100
        (await fits)()
        (await small)()
        q.release(running)
        (await large)()
        assert q.holding == 0 and q.store.reserved == 0

    run_async(scenario())


def test_a_step_view_and_a_download_hold_their_working_bytes_while_they_run(monkeypatch):
    with make_client() as client:
        services = client.app.state.services
        summary = post_trace(client, SMALL_SPEC)
        trace = services.store.get(services.store.spec(summary["id"]))
        seen, step_view, tensor_array = [], view.step_view_json, tensors.tensor_array

        def seeing(made):
            def job(*args, **kwargs):
                seen.append((services.admission.holding, services.store.reserved))
                return made(*args, **kwargs)

            return job

        monkeypatch.setattr(view, "step_view_json", seeing(step_view))
        monkeypatch.setattr(tensors, "tensor_array", seeing(tensor_array))
        assert client.get(f"/api/traces/{summary['id']}/steps/1").status_code == 200
        name = trace.param_names[0]
        assert client.get(f"/api/traces/{summary['id']}/tensors/{name}", params={"grad": "true"}).status_code == 200
        in_view = view_bytes(trace, 1) + check_bytes(trace, 1)  # a small model's view computes its check
        assert trace.records[1].layer is not None and view_bytes(trace, 1) <= view_bytes(trace)  # a layer's step
        assert seen == [(1, in_view), (1, tensor_bytes(trace, name, True))]
        assert services.admission.holding == 0 and services.store.reserved == 0


def test_the_server_caps_the_freed_memory_its_budget_does_not_count(monkeypatch):
    caps = []
    monkeypatch.setattr(memory, "limit_freed_memory", caps.append)
    create_app(Settings(kept_freed_bytes=123 << 20), warm_up=False)
    assert caps == [123 << 20]


def test_the_server_shares_one_malloc_arena_between_its_threads(monkeypatch):
    """create_app sets it before any worker thread starts (xt_core.memory.share_arenas: its effect is
    tests/core/test_memory.py's)."""
    calls = []
    monkeypatch.setattr(memory, "share_arenas", lambda: calls.append("shared") or True)
    create_app(Settings(), warm_up=False)
    assert calls == ["shared"]


def test_a_downloads_array_stays_counted_until_its_last_piece_is_sent(monkeypatch):
    """The .npy's array (recomputed: it may leave the recompute cache meanwhile) is held while it
    streams: the rest of the download's working bytes go once it is made, the array's after the
    last piece; a JSON answer keeps none."""
    with make_client() as client:
        services = client.app.state.services
        summary = post_trace(client, SMALL_SPEC)
        trace = services.store.get(services.store.spec(summary["id"]))
        name, sending, npy_stream = trace.param_names[0], [], tensors.npy_stream

        def watched(array, owner=None):
            length, pieces = npy_stream(array, owner)

            def sent():
                for piece in pieces:
                    sending.append((services.admission.holding, services.store.reserved, array.nbytes))
                    yield piece

            return length, sent()

        monkeypatch.setattr(tensors, "npy_stream", watched)
        url = f"/api/traces/{summary['id']}/tensors/{name}"
        assert client.get(url, params={"grad": "true"}).status_code == 200
        assert len(sending) >= 2 and all(held == 0 and reserved == size for held, reserved, size in sending), sending
        assert services.admission.holding == 0 and services.store.reserved == 0
        assert client.get(url, params={"format": "json"}).status_code == 200
        assert len(sending) >= 2 and services.admission.holding == 0 and services.store.reserved == 0


def test_a_diff_holds_its_own_steps_segment_not_the_heads(monkeypatch):
    """A diff of a layer's step holds that layer's segment on both traces; one of the loss's step,
    the head's (issue 35: the head's for every step held 344 MiB where 55 were used, SmolLM2)."""
    with make_client() as client:
        services = client.app.state.services
        spec = {
            **SMALL_SPEC,
            "config": {**SMALL_SPEC["config"], "vocab_size": 4096, "n_embd": 64},
            "faults": ["softmax_missing_sum_term"],
        }
        summary = post_trace(client, spec)
        trace = services.store.get(services.store.spec(summary["id"]))
        backward = [s for s in summary["steps"] if s["phase"] == "backward"]
        in_layer = next(s["index"] for s in backward if s["name"].startswith("layers."))
        loss = next(s["index"] for s in backward if not s["name"].startswith("layers."))
        seen, diff_view = [], buglab_views.diff_view
        monkeypatch.setattr(
            buglab_views, "diff_view", lambda *a, **k: seen.append(services.store.reserved) or diff_view(*a, **k)
        )
        for index in (in_layer, loss):
            assert client.get(f"/api/traces/{summary['id']}/steps/{index}/diff").status_code == 200
        assert seen == [diff_bytes(trace, in_layer), diff_bytes(trace, loss)]
        assert seen[0] < seen[1]


def test_a_downloads_bytes_go_when_its_client_left_before_the_first_piece():
    """Starlette cancels the stream of a client already gone: a body iterator never started runs no
    `finally`, so the response itself lets the bytes go (tensors.HeldWhileSent)."""
    let_go = []
    pieces = iter([b"header", b"data"])
    response = tensors.HeldWhileSent(pieces, lambda: let_go.append("gone"), media_type="application/octet-stream")

    async def gone():
        return {"type": "http.disconnect"}

    async def send(message):
        await asyncio.sleep(0.05)  # the client's socket is slow to take the headers: the disconnect wins

    scope = {"type": "http", "asgi": {"spec_version": "2.4"}, "method": "GET", "path": "/", "headers": []}
    run_async(response(scope, gone, send))
    assert let_go == ["gone"]
