"""The app's services, built once with the app (main.create_app) and shut down when its lifespan
ends: the worker pools (`run`), the trace store behind admission (`build`, `trace`: the only way
a request gets a trace), the background gradient checks, the quiz ledger, and the answers built
from traces (app.answers, handed what they work with), which every trace route asks.

Building them with the app, not in the lifespan, keeps an app driven without its lifespan
(schemathesis over ASGI, a TestClient outside `with`) working: the pools start again on use.

A job whose client has gone is not run: `Services.run(..., request=request)` watches the
connection while the job waits, and cancels it if the client disconnects before it starts
(a running numpy step cannot be interrupted; its result then only lands in the cache).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future
from functools import partial

from fastapi import HTTPException, Request

from app import security
from app.answers import Answers
from app.buglab.probes import make_probe_counts
from app.buglab.quiz import QuizLedger
from app.sessions.voters import Voters
from app.settings import Settings
from app.spec import ResolvedSpec
from app.steps.context import TraceContext
from app.traces import freed
from app.traces.admission import Admission
from app.traces.busy import Overloaded
from app.traces.cache import LRU
from app.traces.check_room import CheckRoom
from app.traces.checks import ChecksBusy, ChecksJob, ChecksRunner
from app.traces.pool import BUILDS, LIGHT, SMALL, VIEWS, DaemonPool
from app.traces.room import Room
from app.traces.store import NotBuilt, TraceStore
from app.traces.working import check_bytes
from app.words.said import Said
from xt_core import Trace
from xt_core.checks.directional import StepCheck

JOIN_TRIES = 3  # admissions of one request whose joined build keeps being evicted before it runs
CHECKS_TRIM_S = 1.0  # a running check job's freed memory is offered back to the kernel this often


class ClientGone(HTTPException):
    """The client disconnected while its job waited: the job was cancelled, nobody reads this."""

    def __init__(self):
        super().__init__(499, detail=Said("error-client-gone"))


class Services:
    """The app's worker pools, its trace store behind admission, and its caches of finished work."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.store = TraceStore(settings)
        self.start()
        self.gradchecks: LRU[StepCheck] = LRU(settings.gradcheck_cache_entries)
        # running checks hold their traces: together at most what the trace cache may hold
        self.checks = ChecksRunner(
            self.executor, self.gradchecks, max_running_bytes=settings.cache_bytes, ensure_running=self.ensure_running
        )
        # a quiz's probes and answer, per trace and learner (and address), counted with every worker's
        counts = make_probe_counts(settings.redis_url)
        self.quiz = QuizLedger(settings.quiz_probes, per_address=settings.quiz_probes_per_address, counts=counts)
        self.voters = Voters(settings)  # the learner identities the quiz and the polls count by
        self.pending = 0  # jobs run() has queued or running; only the event loop thread touches it
        self._watchers: set[asyncio.Task] = set()  # hold_while_checking's, kept from the collector
        self.admission = Admission(settings, self.store)  # trace builds by estimated seconds and bytes
        # a job's working bytes, its traces let go while it waits for them (app.traces.room)
        self.room = Room(self.admission.hold, settings.small_build_bytes, self.store.cached, self.build)
        self.answers = Answers(  # every answer built from a trace, encoded once and cached
            settings.step_cache_bytes,
            store=self.store,
            trace=self.trace,
            context=self.context,
            run=self.run,
            gradchecks=self.gradchecks,
            quiz_ledger=self.quiz,
            voters=self.voters,
            twin_room=self.twin_room,
            room=self.room,
        )

    def start(self) -> None:
        """The worker pools, new (a lifespan may end and start again: schemathesis runs one per call)."""
        self.executor = DaemonPool(max(1, self.settings.worker_threads), "xt-worker")
        self.pools = {
            BUILDS: self.executor,
            VIEWS: DaemonPool(1, "xt-worker-views"),
            LIGHT: DaemonPool(1, "xt-worker-light"),
            SMALL: DaemonPool(1, "xt-worker-small"),  # the small builds' lane (app.traces.admission)
        }
        self.store.progress.stop.clear()
        if hasattr(self, "checks"):
            self.checks.executor = self.executor

    def ensure_running(self) -> None:
        if not self.running:  # served after its lifespan ended (an app driven without one)
            self.start()

    async def run(self, fn, *args, pool: str = BUILDS, request: Request | None = None, on_done=None, **kwargs):
        """fn(*args) in one of the worker pools (BUILDS, VIEWS, LIGHT: app.traces.pool). At most
        settings.max_pending_jobs jobs wait or run at once, in all of them: one more is refused
        with a 503 instead of queueing behind minutes of work.
        With `request`, a client that disconnects cancels the job if it has not started (ClientGone).
        `on_done()` runs on the event loop once the job has finished or been cancelled."""
        if self.pending >= self.settings.max_pending_jobs:
            raise Overloaded(Said("error-busy-jobs-queued", jobs=self.pending))
        self.ensure_running()
        job = self.pools[pool].submit(fn, *args, **kwargs)
        if on_done is not None:
            _call_on_loop_when_done(job, on_done)
        self.pending += 1
        try:
            waiting = asyncio.wrap_future(job)  # cancelling it cancels the job if it has not started
            return await (waiting if request is None else _unless_client_gone(waiting, request))
        finally:
            self.pending -= 1
            job.cancel()  # no-op once it ran; a queued job whose request was cancelled never runs
            if pool != LIGHT:  # idle now: freed memory back to the kernel
                self._give_back_if_idle()

    async def build(self, spec: ResolvedSpec, request: Request | None = None) -> Trace:
        """The spec's trace, from the cache or built in its turn (app.traces.admission: a fair queue;
        503 only when the queue is full, 429 past a client's share): the one place a trace is built
        for a request. A client that disconnects while its build waits leaves the queue. A spec
        that trains is built only for a request that may write (the admin key beyond loopback),
        whichever route asks."""
        hit = self.store.cached(spec)
        if hit is not None:
            return hit
        if spec.train_steps and request is not None:
            security.check_writer(request, self.settings)
        for _ in range(JOIN_TRIES):
            ticket = self.admission.admit(spec, self.client_key(request))
            try:
                turn = asyncio.ensure_future(self.admission.wait(ticket))
                await (turn if request is None else _unless_client_gone(turn, request))
                return await self.run(
                    self.store.get,
                    spec,
                    ticket.reservation,
                    ticket.joined,
                    pool=ticket.pool,
                    request=request,
                    on_done=partial(self.admission.release, ticket),
                )
            except (Overloaded, ClientGone, asyncio.CancelledError):
                self.admission.release(ticket)  # refused, or its client left: its place (or budget) is free
                raise
            except NotBuilt:
                self.admission.release(ticket)
                continue  # the build it joined finished and was evicted, or left the queue: admit its own
        raise Overloaded(Said("error-busy-evicted", trace=spec.id, times=JOIN_TRIES))

    @contextlib.asynccontextmanager
    async def twin_room(
        self, ctx: TraceContext, index: int | None = None, request: Request | None = None
    ) -> AsyncIterator[None]:
        """Holds the bytes a gradient check of step `index` replays in (a float32 trace's float64 twin
        while its first check builds it, the float64 segments of every later one: app.traces.working.
        check_bytes) in the one budget for the block, waiting its turn with its trace let go
        (app.traces.room: ctx.trace is taken again once they are held)."""
        let_go = await self.hold_checking(ctx, index, request)
        try:
            yield
        finally:
            let_go()

    async def checks_job(self, trace_id: str, request: Request | None = None) -> ChecksJob:
        """The trace's job of every step's check (app.traces.checks): running or done, or started now
        (its trace rebuilt if evicted; 404 if unknown) holding the bytes its checks replay in, in the one
        budget, until it ends (hold_while_checking); 503 while running jobs hold what they may."""
        job = self.checks.get(trace_id)
        if job is not None:
            return job
        ctx = await self.trace(trace_id, request)
        self.ensure_running()  # a cached trace skipped the pool: it may have ended with a lifespan
        let_go = await self.hold_checking(ctx, request=request)
        if (job := self.checks.get(trace_id)) is not None:  # a request started it while this one waited
            let_go()
            return job
        room = CheckRoom(lambda: self.admission.wants_room, self.trace, self._hold_after_builds, let_go)
        try:
            job = self.checks.start(trace_id, ctx.trace, room)
        except ChecksBusy as exc:
            let_go()
            raise Overloaded(exc.running) from None
        self.hold_while_checking(job.finished, room.end)
        return job

    async def hold_checking(
        self, ctx: TraceContext, index: int | None = None, request: Request | None = None, after_builds: bool = False
    ) -> Callable[[], None]:
        """The bytes a check of step `index` (None: a check job, every step) replays in, held until
        the returned callable lets them go (Admission.hold; app.traces.working.check_bytes), the
        trace let go while they are waited for (Room.hold_for)."""
        nbytes = check_bytes(ctx.trace, index)
        return await self.room.hold_for(nbytes, ctx, request=request, after_builds=after_builds)

    async def _hold_after_builds(self, ctx: TraceContext) -> Callable[[], None]:
        return await self.hold_checking(ctx, after_builds=True)

    def hold_while_checking(self, job: Future, let_go: Callable[[], None]) -> None:
        """A check job (app.traces.checks) holds its room until it ends (app.traces.check_room: let go
        and taken again while it makes way). Its steps run outside `run`, so the job's freed memory is
        given back from here while it runs (app.traces.freed)."""

        async def watch() -> None:
            ended = asyncio.wrap_future(job)
            ended.add_done_callback(lambda f: f.cancelled() or f.exception())  # the job's error is its own
            try:
                while not ended.done():
                    self._give_back_if_idle()
                    await asyncio.wait({ended}, timeout=CHECKS_TRIM_S)  # waits, cancels nothing
            finally:
                let_go()
                self._give_back_if_idle()  # its last steps' memory too: nothing else may end to trim it

        self._watchers.add(task := asyncio.ensure_future(watch()))
        task.add_done_callback(self._watchers.discard)

    def _give_back_if_idle(self) -> None:
        if not self.pending and self.running:  # beside a request's job, a trim would slow it (app.traces.freed)
            self.pools[LIGHT].submit(freed.give_back)

    def client_key(self, request: Request | None) -> str:
        """Whose build a request asks for, for the queue's fairness: the learner identity the server
        issued (app.sessions.voters: X-Voter or its cookie; bounded per address, so not made up), else
        the client's address."""
        if request is None or not hasattr(request, "headers"):
            return ""
        voter = self.voters.of(request)
        return f"voter:{voter}" if voter else f"address:{request.client.host if request.client else ''}"

    async def context(self, spec: ResolvedSpec, request: Request | None = None) -> TraceContext:
        """The spec's trace (through `build`) with the spec and the settings every view reads."""
        return TraceContext(spec, await self.build(spec, request), self.settings)

    async def trace(self, trace_id: str, request: Request | None = None) -> TraceContext:
        """The trace of a known id, rebuilt from its spec if it was evicted; 404 for an unknown id."""
        spec = self.store.spec(trace_id)
        if spec is None:
            raise HTTPException(404, detail=Said("error-unknown-trace", trace=repr(trace_id)))
        return await self.context(spec, request)  # a cache hit skips the pool

    def shutdown(self) -> None:
        """Queued jobs are cancelled, a running training stops at its next step, and no worker
        thread holds the process (daemon threads: app.traces.pool)."""
        self.store.progress.stop.set()
        for executor in self.pools.values():
            executor.shutdown(wait=False, cancel_futures=True)

    @property
    def running(self) -> bool:
        return not any(executor.is_shutdown for executor in self.pools.values())


def _call_on_loop_when_done(job: Future, callback: Callable[[], None]) -> None:
    loop = asyncio.get_running_loop()

    def done(_: Future) -> None:
        with contextlib.suppress(RuntimeError):  # the loop has closed (the server stopped): nothing to account
            loop.call_soon_threadsafe(callback)

    job.add_done_callback(done)


async def _disconnected(request: Request) -> None:
    """Returns when the client disconnects (the body has been read by then: only
    http.disconnect, or nothing until the response is sent, comes from receive)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def _unless_client_gone(waiting: asyncio.Future, request: Request):
    watcher = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait({waiting, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watcher.cancel()
    if waiting.done():
        return waiting.result()
    waiting.cancel()
    raise ClientGone()
