"""The FastAPI application: the app factory. Routers by resource (app.routes lists them all),
one settings object, the services (deps.Services) built with the app and shut down with it,
the guard in front of every route (app.security.Guard), and one rule for bad input: a 4xx
naming the field and the limit, never a 500 (docs/api.md, "Errors")."""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

import anyio
from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.routing import BaseRoute, Match
from threadpoolctl import threadpool_limits

from app import security, words
from app.checkpoints.registry import registry
from app.connections import Caps, StreamCap
from app.errors import SpecError, pydantic_message
from app.guesses import GuessLimiter, PresenterKeyGuesses
from app.recording.recordings import Recordings
from app.routes import ROUTERS, assets, docs, pages
from app.security import Guard, SecurityHeaders
from app.services import Services
from app.settings import Settings, get_settings
from app.timing import ServerTiming
from app.traces import freed
from app.warmup import settle_heap
from app.words.choice import chosen_language
from app.words.said import Said, in_language
from xt_core import memory

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
# A 422 lists at most this many of pydantic's errors (a 1 MB body of bad token ids would
# otherwise answer one error per id), each without the offending input.
MAX_ERRORS_SHOWN = 10


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    # Compress Plotly.js (~4.8 MB, gzip -9, ~0.5 s) before the first page needs its URL: done
    # lazily, every page rendered meanwhile would compress it again, all at once, under load.
    await anyio.to_thread.run_sync(assets.plotly_bundle)
    env = pages.templates(app.state.settings.templates_dir).env
    # Each language's catalogue parsed once before the first page asks (about 40 ms each).
    await anyio.to_thread.run_sync(words.load_all)
    services = app.state.services
    if app.state.warm_up:
        await anyio.to_thread.run_sync(registry(app.state.settings).read_headers)
        await anyio.to_thread.run_sync(partial(settle_heap, env))
        services.store.freeze_cached = True  # a server's heap: its cached traces kept out of collections too
    await anyio.to_thread.run_sync(registry(app.state.settings).remove_stale_partials)
    try:
        yield
    finally:
        services.shutdown()
        await app.state.recordings.stop()  # a recording under way ends at its next step, its folder removed


def _full_match(route: BaseRoute, scope: dict, method: str) -> bool:
    return route.matches({**scope, "method": method})[0] == Match.FULL


class ErrorResponse(JSONResponse):
    """An error's JSON in ASCII: a message quoting the client's text (a lone surrogate included)
    always encodes."""

    def render(self, content) -> bytes:
        return json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode()


def _is_json(content_type: str | None) -> bool:
    media = (content_type or "").split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


def validation_answer(request: Request, exc: RequestValidationError) -> ErrorResponse:
    """400 for a body that is not JSON at all, 415 for a body sent as another media type,
    else 422 with the first few errors (loc, msg, type; never the input echoed back), their
    messages in the request's language."""
    lang = chosen_language(request)
    errors = list(exc.errors())
    parse_error = next((e for e in errors if e.get("type") == "json_invalid"), None)
    if parse_error is not None:
        reason = (parse_error.get("ctx") or {}).get("error", "")
        return ErrorResponse(status_code=400, content={"detail": words.t(lang, "error-body-not-json", reason=reason)})
    body_sent = int(request.headers.get("content-length") or 0) > 0
    if (
        body_sent
        and not _is_json(request.headers.get("content-type"))
        and any(e["loc"][:1] == ("body",) for e in errors)
    ):
        sent = repr(request.headers.get("content-type"))
        return ErrorResponse(status_code=415, content={"detail": words.t(lang, "error-body-not-json-type", sent=sent)})
    shown = [
        {"loc": list(e["loc"]), "msg": pydantic_message(e, lang), "type": str(e["type"])}
        for e in errors[:MAX_ERRORS_SHOWN]
    ]
    if len(errors) > MAX_ERRORS_SHOWN:
        more = words.t(lang, "error-more-errors", count=len(errors) - MAX_ERRORS_SHOWN)
        shown.append({"loc": [], "msg": more, "type": "value_error"})
    return ErrorResponse(status_code=422, content={"detail": shown})


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(SpecError)
    async def spec_error(request: Request, exc: SpecError):
        return ErrorResponse(status_code=422, content={"detail": exc.detail(chosen_language(request))})

    @app.exception_handler(HTTPException)
    async def refusal(request: Request, exc: HTTPException):
        # A detail from the catalogue (app.words.said.Said) reads in the request's language.
        if isinstance(exc.detail, Said | list | dict):
            exc = HTTPException(exc.status_code, in_language(exc.detail, chosen_language(request)), exc.headers)
        return await http_exception_handler(request, exc)

    @app.exception_handler(RequestValidationError)
    async def request_validation_error(request: Request, exc: RequestValidationError):
        return validation_answer(request, exc)

    @app.exception_handler(Exception)
    async def internal_error(request: Request, exc: Exception):
        # Starlette's outermost ServerErrorMiddleware writes this answer (and re-raises, so the
        # traceback is logged), outside SecurityHeaders: the headers are set here instead.
        return JSONResponse(
            status_code=500,
            content={"detail": words.t(chosen_language(request), "error-internal")},
            headers=security.header_dict(request.url.path),
        )

    @app.exception_handler(405)
    async def method_not_allowed(request: Request, exc: HTTPException):
        # Starlette's Allow names the methods of the first route whose path matched; GET and
        # POST /api/models are two routes, so ask every route about every method.
        allowed = [m for m in METHODS if any(_full_match(r, request.scope, m) for r in app.router.routes)]
        headers = {"Allow": ", ".join(allowed)} if allowed else dict(exc.headers or {})
        return JSONResponse(status_code=405, content={"detail": exc.detail}, headers=headers)


def create_app(settings: Settings | None = None, warm_up: bool = True) -> FastAPI:
    """The app; `warm_up` False skips settle_heap at startup: for a batch of requests in a process
    that is no server (`xt export`, a notebook's show(): the user's objects must stay collectable)."""
    settings = settings or get_settings()
    # The worker pool already keeps the cores busy; BLAS threads on top of it busy-wait
    # and oversubscribe them (first step views measured ~9x slower with the default).
    threadpool_limits(limits=settings.blas_threads, user_api="blas")
    # One malloc arena for every thread, set before the worker pools start theirs: freed memory kept
    # once, not per thread (xt_core.memory.share_arenas; issue 35, finding 7)
    memory.share_arenas()
    memory.limit_freed_memory(settings.kept_freed_bytes)
    freed.watch(settings.kept_freed_bytes)  # and freed memory between live chunks (app.traces.freed)
    app = FastAPI(
        lifespan=lifespan,
        title="xt",
        summary="One training step of a small Llama-style transformer, op by op, forward and backward.",
        version="0.1.0",
        docs_url=None,  # /docs is served offline by app.routes.docs
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.warm_up = warm_up
    app.state.services = Services(settings)
    app.state.recordings = Recordings(settings, app.state.services)  # runs recorded from the page (app.films)
    # the admin cookie's value: this process's own unless the settings share one among workers
    app.state.admin_token = settings.admin_token or secrets.token_urlsafe(32)
    app.state.key_guesses = GuessLimiter("error-guess-keys", settings.key_failures_per_minute)
    app.state.caps = Caps.of(settings)
    _add_error_handlers(app)
    for router in ROUTERS:
        app.include_router(router)
    app.mount(docs.SWAGGER_PREFIX, docs.swagger_files(), name="swagger")
    app.mount("/static", assets.RevalidatedStaticFiles(directory=settings.static_dir), name="static")
    # @fluent/bundle's ES modules (app/vendor/fluent/README.md), imported by static/js/lib/words.js
    app.mount("/vendor/fluent", assets.RevalidatedStaticFiles(directory=assets.FLUENT_DIR), name="fluent")
    # Around every route, the static files and the 404/422 answers (not the bare 500 of an
    # unhandled exception, which Starlette's outermost ServerErrorMiddleware writes); the
    # guard's refusals (400/403/413/414/429) get the headers and the timing too; streams past
    # their caps and presenter keys past their guesses are refused behind the guard.
    app.add_middleware(StreamCap, caps=app.state.caps)
    app.add_middleware(PresenterKeyGuesses, guesses=app.state.key_guesses)
    app.add_middleware(Guard, settings=settings, admin_token=app.state.admin_token, guesses=app.state.key_guesses)
    app.add_middleware(SecurityHeaders)
    app.add_middleware(ServerTiming)
    return app


app = create_app()
