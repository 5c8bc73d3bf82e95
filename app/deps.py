"""What routes share, declared once: the settings, the trace store, the worker pools and caches
(`Services`), the trace of a URL's id, and who may write. Routes take them as
`Annotated[..., Depends]` parameters; nothing CPU-heavy runs on the event loop, it goes through
`Services.run`.

The services are built with the app (create_app) and their pools shut down when its lifespan
ends: building them with the app, not in the lifespan, keeps an app driven without its
lifespan (schemathesis over ASGI, a TestClient outside `with`) working.

A job whose client has gone is not run: `Services.run(..., request=request)` watches the
connection while the job waits, and cancels it if the client disconnects before it starts
(a running numpy step cannot be interrupted; its result then only lands in the cache).
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
from collections.abc import Callable
from concurrent.futures import Future
from functools import partial
from typing import Annotated

import anyio
from fastapi import Depends, HTTPException, Request, Security
from fastapi.responses import Response
from fastapi.routing import APIRoute
from fastapi.security import APIKeyHeader

from app import security
from app.buglab.quiz import QuizLedger
from app.encoding import GZIP_MIN_BYTES, compact_json, encoded_response, json_safe
from app.settings import Settings
from app.spec import ResolvedSpec
from app.traces.admission import RETRY_AFTER_S, Admission, Overloaded
from app.traces.cache import LRU
from app.traces.checks import ChecksRunner
from app.traces.context import TraceContext
from app.traces.pool import DaemonPool
from app.traces.store import TraceStore
from xt_core import Trace
from xt_core.checks.directional import StepCheck

__all__ = ["RETRY_AFTER_S", "Overloaded", "ServicesDep", "SettingsDep", "TraceDep", "WriterDep"]

# A JSON body up to this size is parsed on the event loop (well under a millisecond); a larger
# one (up to settings.max_body_bytes) in a thread, so /healthz never waits for it.
OFF_LOOP_JSON_BYTES = 64 << 10


class ClientGone(HTTPException):
    """The client disconnected while its job waited: the job was cancelled, nobody reads this."""

    def __init__(self):
        super().__init__(499, detail="the client closed the connection; its job was cancelled")


def encode(fn: Callable[[], object], gzip_ok: bool) -> tuple[bytes, bytes | None]:
    """fn()'s payload as compact JSON, and gzipped when the client takes it: done in the worker
    pool, since dumping and compressing a large answer on the event loop would hold up every
    other request, /healthz included."""
    body = compact_json(json_safe(fn()))
    zipped = gzip.compress(body, compresslevel=5) if gzip_ok and len(body) >= GZIP_MIN_BYTES else None
    return body, zipped


def with_gzip(body: bytes) -> tuple[bytes, bytes]:
    """A cached answer: its JSON and the same gzipped (most clients take gzip)."""
    return body, gzip.compress(body, compresslevel=5)


class Services:
    """The app's worker pools and caches of finished work."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.store = TraceStore(settings)
        self.start()
        self.gradchecks: LRU[StepCheck] = LRU(settings.gradcheck_cache_entries)
        # finished answers by key: (JSON, gzipped JSON)
        self.answers: LRU[tuple[bytes, bytes | None]] = LRU(
            100_000, settings.step_cache_bytes, sizeof=lambda v: len(v[0]) + len(v[1] or b"")
        )
        # running checks hold their traces: together at most what the trace cache may hold
        self.checks = ChecksRunner(
            self.executor, self.gradchecks, max_running_bytes=settings.cache_bytes, ensure_running=self.ensure_running
        )
        self.quiz = QuizLedger(settings.quiz_probes)  # a quiz's probes and answer, per trace id
        self.pending = 0  # jobs run() has queued or running; only the event loop thread touches it
        self.admission = Admission(settings, self.store)  # trace builds by estimated seconds and bytes

    def start(self) -> None:
        """The worker pools, new (a lifespan may end and start again: schemathesis runs one per call)."""
        self.executor = DaemonPool(max(1, self.settings.worker_threads), "xt-worker")
        # one thread for jobs known to take milliseconds (a cached trace's tensor as .npy or
        # JSON, the model listing): they would otherwise wait behind seconds of trace builds
        self.light = DaemonPool(1, "xt-worker-light")
        self.store.progress.stop.clear()
        if hasattr(self, "checks"):
            self.checks.executor = self.executor

    def ensure_running(self) -> None:
        if not self.running:  # served after its lifespan ended (an app driven without one)
            self.start()

    async def run(self, fn, *args, light: bool = False, request: Request | None = None, on_done=None, **kwargs):
        """fn(*args) in the worker pool (settings.worker_threads threads), or with light=True in
        the one thread kept for millisecond jobs. At most settings.max_pending_jobs jobs wait or
        run at once: one more is refused with a 503 instead of queueing behind minutes of work.
        With `request`, a client that disconnects cancels the job if it has not started (ClientGone).
        `on_done()` runs on the event loop once the job has finished or been cancelled."""
        if self.pending >= self.settings.max_pending_jobs:
            raise Overloaded(f"the server is busy ({self.pending} jobs queued)")
        self.ensure_running()
        executor = self.light if light else self.executor
        job = executor.submit(fn, *args, **kwargs)
        if on_done is not None:
            _call_on_loop_when_done(job, on_done)
        self.pending += 1
        try:
            waiting = asyncio.wrap_future(job)  # cancelling it cancels the job if it has not started
            return await (waiting if request is None else _unless_client_gone(waiting, request))
        finally:
            self.pending -= 1
            job.cancel()  # no-op once it ran; a queued job whose request was cancelled never runs

    async def build(self, spec: ResolvedSpec, request: Request | None = None) -> Trace:
        """The spec's trace, from the cache or built once admitted (app.traces.admission: 503 when
        the queued work's estimated seconds or bytes would pass their budgets)."""
        hit = self.store.cached(spec)
        if hit is not None:
            return hit
        ticket = self.admission.admit(spec)
        try:
            return await self.run(
                self.store.get,
                spec,
                ticket.reservation,
                request=request,
                on_done=partial(self.admission.release, ticket),
            )
        except Overloaded:
            self.admission.release(ticket)  # refused before it was queued
            raise

    async def json(self, request: Request, fn, *args, light: bool = False) -> Response:
        """A JSON answer built, encoded and compressed in the worker pool (see encode)."""
        gzip_ok = "gzip" in request.headers.get("accept-encoding", "")
        body, zipped = await self.run(encode, partial(fn, *args), gzip_ok, light=light, request=request)
        return encoded_response(request, body, gzipped=zipped)

    async def trace(self, trace_id: str, request: Request | None = None) -> TraceContext:
        """The trace of a known id, rebuilt from its spec if it was evicted; 404 otherwise."""
        spec = self.store.spec(trace_id)
        if spec is None:
            raise HTTPException(404, detail=f"unknown trace id {trace_id!r}; POST its spec to /api/traces again")
        trace = await self.build(spec, request)  # a cache hit skips the pool
        return TraceContext(spec, trace, self.settings)

    def shutdown(self) -> None:
        """Queued jobs are cancelled, a running training stops at its next step, and no worker
        thread holds the process (daemon threads: app.traces.pool)."""
        self.store.progress.stop.set()
        self.executor.shutdown(wait=False, cancel_futures=True)
        self.light.shutdown(wait=False, cancel_futures=True)

    @property
    def running(self) -> bool:
        return not (self.executor.is_shutdown or self.light.is_shutdown)


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


def get_services(request: Request) -> Services:
    return request.app.state.services


def get_settings(request: Request) -> Settings:
    return request.app.state.settings


async def get_trace(
    trace_id: str, request: Request, services: Annotated[Services, Depends(get_services)]
) -> TraceContext:
    return await services.trace(trace_id, request)


# The admin key as OpenAPI knows it (a browser sends the cookie that opening /?key=<key> set).
ADMIN_KEY_HEADER = APIKeyHeader(
    name=security.ADMIN_KEY_HEADER,
    auto_error=False,
    description="the admin key `xt serve` prints when bound beyond loopback (needed there for uploads, training, presenting)",
)


def require_writer(request: Request, _key: Annotated[str | None, Security(ADMIN_KEY_HEADER)] = None) -> None:
    """403 unless the request may write: with settings.admin_key set (a server bound beyond
    loopback), it must carry that key. Cross-origin writes never get here (security.Guard)."""
    security.check_writer(request, get_settings(request))


ServicesDep = Annotated[Services, Depends(get_services)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
TraceDep = Annotated[TraceContext, Depends(get_trace)]  # the route's {trace_id}, 404 if unknown
WriterDep = Annotated[None, Depends(require_writer)]  # uploads, training, presenting: `_: WriterDep`


class OffLoopJSONRequest(Request):
    async def json(self):
        if not hasattr(self, "_json"):
            body = await self.body()
            if len(body) > OFF_LOOP_JSON_BYTES:
                self._json = await anyio.to_thread.run_sync(json.loads, body)
            else:
                self._json = json.loads(body)
        return self._json


class OffLoopJSONRoute(APIRoute):
    """A route whose JSON body, when large, is parsed in a thread (the body's size is already
    bounded by security.Guard before a byte of it is parsed)."""

    def get_route_handler(self):
        handler = super().get_route_handler()

        async def handle(request: Request) -> Response:
            return await handler(OffLoopJSONRequest(request.scope, request.receive))

        return handle
