"""What routes share, declared once: the settings, the trace store, the worker pools and caches
(`Services`), and the trace of a URL's id. Routes take them as `Annotated[..., Depends]`
parameters; nothing CPU-heavy runs on the event loop, it goes through `Services.run`.

The services are built with the app (create_app) and their pools shut down when its lifespan
ends: building them with the app, not in the lifespan, keeps an app driven without its
lifespan (schemathesis over ASGI, a TestClient outside `with`) working.
"""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.responses import Response

from app.buglab.quiz import QuizLedger
from app.encoding import GZIP_MIN_BYTES, compact_json, encoded_response, json_safe
from app.settings import Settings
from app.traces.cache import LRU
from app.traces.checks import ChecksRunner
from app.traces.context import TraceContext
from app.traces.store import TraceStore
from xt_core.gradcheck import StepCheck

RETRY_AFTER_S = 2  # an overloaded server's hint: a queue of cheap jobs drains within seconds


class Overloaded(HTTPException):
    """503 + Retry-After: too much work queued. The client may retry; nothing failed."""

    def __init__(self, pending: int):
        detail = f"the server is busy ({pending} jobs queued); retry in a few seconds"
        super().__init__(503, detail=detail, headers={"Retry-After": str(RETRY_AFTER_S)})


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
        self.checks = ChecksRunner(self.executor, self.gradchecks, max_running_bytes=settings.cache_bytes)
        self.quiz = QuizLedger(settings.quiz_probes)  # a quiz's probes and answer, per trace id
        self.pending = 0  # jobs run() has queued or running; only the event loop thread touches it

    def start(self) -> None:
        """The worker pools, new (a lifespan may end and start again: schemathesis runs one per call)."""
        self.executor = ThreadPoolExecutor(
            max_workers=max(1, self.settings.worker_threads), thread_name_prefix="xt-worker"
        )
        # one thread for jobs known to take milliseconds (a cached trace's tensor as .npy or
        # JSON, the model listing): they would otherwise wait behind seconds of trace builds
        self.light = ThreadPoolExecutor(max_workers=1, thread_name_prefix="xt-worker-light")
        if hasattr(self, "checks"):
            self.checks.executor = self.executor

    async def run(self, fn, *args, light: bool = False, **kwargs):
        """fn(*args) in the worker pool (settings.worker_threads threads), or with light=True in
        the one thread kept for millisecond jobs. At most settings.max_pending_jobs jobs wait or
        run at once: one more is refused with a 503 instead of queueing behind minutes of work."""
        if self.pending >= self.settings.max_pending_jobs:
            raise Overloaded(self.pending)
        self.ensure_running()
        self.pending += 1
        executor = self.light if light else self.executor
        try:
            return await asyncio.get_running_loop().run_in_executor(executor, partial(fn, *args, **kwargs))
        finally:
            self.pending -= 1

    async def json(self, request: Request, fn, *args, light: bool = False) -> Response:
        """A JSON answer built, encoded and compressed in the worker pool (see encode)."""
        gzip_ok = "gzip" in request.headers.get("accept-encoding", "")
        body, zipped = await self.run(encode, partial(fn, *args), gzip_ok, light=light)
        return encoded_response(request, body, gzipped=zipped)

    async def trace(self, trace_id: str) -> TraceContext:
        """The trace of a known id, rebuilt from its spec if it was evicted; 404 otherwise."""
        spec = self.store.spec(trace_id)
        if spec is None:
            raise HTTPException(404, detail=f"unknown trace id {trace_id!r}; POST its spec to /api/traces again")
        trace = self.store.cached(spec) or await self.run(self.store.get, spec)  # a hit skips the pool
        return TraceContext(spec, trace, self.settings)

    def shutdown(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
        self.light.shutdown(wait=False, cancel_futures=True)

    def ensure_running(self) -> None:
        """Pools again if a lifespan ended them (an app driven without one serves on)."""
        if not self.running:
            self.start()

    @property
    def running(self) -> bool:
        return not (self.executor._shutdown or self.light._shutdown)


def get_services(request: Request) -> Services:
    return request.app.state.services


def get_settings(request: Request) -> Settings:
    return request.app.state.settings


async def get_trace(trace_id: str, services: Annotated[Services, Depends(get_services)]) -> TraceContext:
    return await services.trace(trace_id)


ServicesDep = Annotated[Services, Depends(get_services)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
TraceDep = Annotated[TraceContext, Depends(get_trace)]  # the route's {trace_id}, 404 if unknown
