"""The FastAPI application: routers per area, one settings object, one trace store."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException
from starlette.routing import BaseRoute, Match
from threadpoolctl import threadpool_limits

from app.routes import api, assets, buglab, docs, models, pages
from app.security import SecurityHeaders
from app.settings import Settings, get_settings
from app.spec import SpecError
from app.store import TraceStore

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
HEALTHY = b'{"status":"ok"}'


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    # Compress Plotly.js (~4.8 MB, gzip -9, ~0.5 s) before the first page needs its URL: done
    # lazily, every page rendered meanwhile would compress it again, all at once, under load.
    await anyio.to_thread.run_sync(assets.plotly_bundle)
    yield


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
