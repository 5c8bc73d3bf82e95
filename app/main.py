"""The FastAPI application: routers per area, one settings object, one trace store."""

from __future__ import annotations

import gc
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException
from starlette.routing import BaseRoute, Match
from threadpoolctl import threadpool_limits

from app import security, views
from app.panels import TraceContext
from app.routes import api, assets, buglab, docs, models, pages
from app.security import SecurityHeaders
from app.settings import Settings, get_settings
from app.spec import SpecError, TraceSpec, resolve
from app.store import TraceStore, build_trace
from xt_core.gradcheck import check_record

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
HEALTHY = b'{"status":"ok"}'
# The smallest model that still has every kind of step (warm_up).
WARM_UP_CONFIG = {"n_layer": 1, "n_head": 2, "n_embd": 8, "ffn_hidden": 8, "seq_len": 8}


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    # Compress Plotly.js (~4.8 MB, gzip -9, ~0.5 s) before the first page needs its URL: done
    # lazily, every page rendered meanwhile would compress it again, all at once, under load.
    await anyio.to_thread.run_sync(assets.plotly_bundle)
    await anyio.to_thread.run_sync(settle_heap)
    yield


_settle_lock = threading.Lock()
_settled = False


def settle_heap() -> None:
    """Once per process: creates what the first requests would create lazily (warm_up), then
    moves every object alive (modules, classes, routes, Pydantic's validators, Plotly's 10,000
    validator entries: ~100,000 objects) out of the garbage collector's sight for good.

    Why: a full collection walks every tracked object while holding the GIL, pausing the event
    loop and so /healthz; measured 170-250 ms under the load test with them (on 2 shared cores
    the walk is cache-bound: ~1.5 us an object), and they live as long as the process anyway."""
    global _settled
    with _settle_lock:
        if _settled:
            return
        warm_up()
        gc.collect()  # only live objects get frozen, never garbage a collection would free
        gc.freeze()
        _settled = True


def warm_up() -> None:
    """Renders every step of a tiny trace (not kept) and compiles every page template: it loads
    Plotly's validators, the LaTeX converter's tables and Jinja's compiled templates now
    (~1 s), before settle_heap freezes them, rather than during the first requests."""
    settings = Settings()
    spec = resolve(TraceSpec(config=WARM_UP_CONFIG, text="abcab", seed=0), settings)
    ctx = TraceContext(spec, build_trace(spec), settings)
    views.trace_summary(ctx)
    for index in range(len(ctx.trace.records)):
        views.step_view_json(ctx, index, 0, 0, check_record(ctx.trace, index))
    env = pages.templates(settings.templates_dir).env
    for name in env.list_templates():  # the pages and every template they include
        env.get_template(name)


def _full_match(route: BaseRoute, scope: dict, method: str) -> bool:
    return route.matches({**scope, "method": method})[0] == Match.FULL


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    # The worker pool already keeps the cores busy; BLAS threads on top of it busy-wait
    # and oversubscribe them (first step views measured ~9x slower with the default).
    threadpool_limits(limits=settings.blas_threads, user_api="blas")
    app = FastAPI(
        lifespan=lifespan,
        title="xt",
        summary="One training step of a small Llama-style transformer, op by op, forward and backward.",
        version="0.1.0",
        docs_url=None,  # /docs is served offline by app.routes.docs
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.store = TraceStore(settings)

    @app.exception_handler(SpecError)
    async def spec_error(request: Request, exc: SpecError):
        return JSONResponse(status_code=422, content={"detail": exc.detail()})

    @app.exception_handler(Exception)
    async def internal_error(request: Request, exc: Exception):
        # Starlette's outermost ServerErrorMiddleware writes this answer (and re-raises, so the
        # traceback is logged), outside SecurityHeaders: the headers are set here instead.
        return JSONResponse(
            status_code=500,
            content={"detail": "internal error: the server logged it; please report what you did"},
            headers=security.header_dict(request.url.path),
        )

    @app.exception_handler(405)
    async def method_not_allowed(request: Request, exc: HTTPException):
        # Starlette's Allow names the methods of the first route whose path matched; GET and
        # POST /api/models are two routes, so ask every route about every method.
        allowed = [m for m in METHODS if any(_full_match(r, request.scope, m) for r in app.router.routes)]
        headers = {"Allow": ", ".join(allowed)} if allowed else dict(exc.headers or {})
        return JSONResponse(status_code=405, content={"detail": exc.detail}, headers=headers)

    @app.get("/healthz", tags=["meta"], response_class=JSONResponse)
    async def healthz() -> Response:
        # On the event loop, no lock, no pool, no encoding: it answers as soon as the loop turns,
        # so a slow /healthz means a blocked loop (what the load test watches), never a busy pool.
        return Response(HEALTHY, media_type="application/json")

    app.include_router(api.router)
    app.include_router(buglab.router)
    app.include_router(models.router)  # /api/models, uploads, training progress
    app.include_router(assets.router)
    app.include_router(pages.router)
    app.include_router(docs.router)
    app.mount(docs.SWAGGER_PREFIX, docs.swagger_files(), name="swagger")
    app.mount("/static", assets.RevalidatedStaticFiles(directory=settings.static_dir), name="static")
    # Around every route, the static files and the 404/422 answers (not the bare 500 of an
    # unhandled exception, which Starlette's outermost ServerErrorMiddleware writes).
    app.add_middleware(SecurityHeaders)
    return app


app = create_app()
