"""The JSON API (contract in docs/api.md). Routes only validate, fetch the trace and hand
the work to app.views in a bounded thread pool: nothing CPU-heavy runs on the event loop."""

from __future__ import annotations

import asyncio
import gzip
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Literal

from fastapi import APIRouter, HTTPException, Path, Query, Request
from fastapi.responses import Response

from app import views
from app.cache import LRU
from app.errors import BAD_BODY, BAD_FIELD, NOT_FOUND
from app.panels import TraceContext
from app.serialize import GZIP_MIN_BYTES, compact_json, encoded_response, json_safe
from app.spec import SpecError, TraceSpec, resolve
from xt_core.gradcheck import StepCheck, check_record

# format=npy (the default) answers a .npy file, format=json an object.
TENSOR_ANSWER = {
    200: {
        "description": "the tensor: a .npy file, or {name, grad, shape, dtype, data} with format=json",
        "content": {
            "application/octet-stream": {"schema": {"type": "string", "format": "binary"}},
            "application/json": {"schema": {"type": "object"}},
        },
    }
}
router = APIRouter(prefix="/api", tags=["api"], responses={**NOT_FOUND, **BAD_FIELD})


@dataclass
class Services:
    """Per-app workers and caches, created on first use (create_app stays unaware of them)."""

    executor: ThreadPoolExecutor
    # one thread for jobs known to take milliseconds (a cached trace's tensor as .npy or JSON,
    # the model listing): they would otherwise wait behind seconds of trace builds
    light: ThreadPoolExecutor
    gradchecks: LRU[StepCheck]
    steps: LRU[tuple[bytes, bytes]]
    pending: int = 0  # jobs run() has queued or running; only the event loop thread touches it


_services_lock = threading.Lock()


def services(request: Request) -> Services:
    state = request.app.state
    with _services_lock:
        if not hasattr(state, "api_services"):
            s = state.settings
            state.api_services = Services(
                executor=ThreadPoolExecutor(max_workers=max(1, s.worker_threads), thread_name_prefix="xt-worker"),
                light=ThreadPoolExecutor(max_workers=1, thread_name_prefix="xt-worker-light"),
                gradchecks=LRU(s.gradcheck_cache_entries),
                steps=LRU(100_000, s.step_cache_bytes, sizeof=lambda v: len(v[0]) + len(v[1] or b"")),
            )
        return state.api_services


# A tensor up to this many entries is encoded in the light thread (milliseconds as .npy or JSON);
# a bigger one (JSON of a 4 × 256 × 4096 logits tensor: seconds) waits in the worker pool.
LIGHT_TENSOR_ENTRIES = 1 << 18
RETRY_AFTER_S = 2  # an overloaded server's hint: a queue of cheap jobs drains within seconds


class Overloaded(HTTPException):
    """503 + Retry-After: too much work queued. The client may retry; nothing failed."""

    def __init__(self, pending: int):
        detail = f"the server is busy ({pending} jobs queued); retry in a few seconds"
        super().__init__(503, detail=detail, headers={"Retry-After": str(RETRY_AFTER_S)})


async def run(request: Request, fn, *args, light: bool = False, **kwargs):
    """fn(*args) in the worker pool (settings.worker_threads threads), or with light=True in the
    one thread kept for millisecond jobs (Services.light). At most settings.max_pending_jobs
    jobs wait or run at once: one more is refused with a 503 (Overloaded) instead of queueing
    without bound behind minutes of work."""
    svc = services(request)
    if svc.pending >= request.app.state.settings.max_pending_jobs:
        raise Overloaded(svc.pending)
    svc.pending += 1
    executor = svc.light if light else svc.executor
    try:
        return await asyncio.get_running_loop().run_in_executor(executor, partial(fn, *args, **kwargs))
    finally:
        svc.pending -= 1


def _encode(fn, gzip_ok: bool) -> tuple[bytes, bytes | None]:
    """fn()'s payload as compact JSON, and gzipped when the client takes it (serialize.json_response's
    encoding): done in the worker pool, since dumping and compressing a large answer on the event
    loop would hold up every other request, /healthz included."""
    body = compact_json(json_safe(fn()))
    zipped = gzip.compress(body, compresslevel=5) if gzip_ok and len(body) >= GZIP_MIN_BYTES else None
    return body, zipped


async def run_json(request: Request, fn, *args, light: bool = False) -> Response:
    """A JSON answer built, encoded and compressed in the worker pool (see _encode)."""
    gzip_ok = "gzip" in request.headers.get("accept-encoding", "")
    body, zipped = await run(request, _encode, partial(fn, *args), gzip_ok, light=light)
    return encoded_response(request, body, gzipped=zipped)


async def trace_context(request: Request, trace_id: str) -> TraceContext:
    """The trace of a known id, rebuilt from its spec if it was evicted; 404 otherwise."""
    store = request.app.state.store
    spec = store.spec(trace_id)
    if spec is None:
        raise HTTPException(404, detail=f"unknown trace id {trace_id!r}; POST its spec to /api/traces again")
    trace = store.cached(spec) or await run(request, store.get, spec)  # a hit needs no trip through the pool
    return TraceContext(spec, trace, request.app.state.settings)


def check_range(field: str, value: int, size: int, what: str) -> None:
    if not 0 <= value < size:
        raise SpecError(("query", field), f"{field} must be between 0 and {size - 1} ({what}), got {value}")


def timed(response: Response, started: float) -> Response:
    response.headers["Server-Timing"] = f"total;dur={(time.perf_counter() - started) * 1000:.1f}"
    return response


# ---------------------------------------------------------------------- routes


@router.post("/traces", responses=BAD_BODY, summary="Build (or find) the trace of a spec: its steps, tokens and blocks")
async def create_trace(spec: TraceSpec, request: Request) -> Response:
    started = time.perf_counter()
    resolved = resolve(spec, request.app.state.settings)
    store = request.app.state.store
    svc, key = services(request), (resolved.id, "summary")
    encoded = svc.steps.get(key)  # a re-posted spec (every page load does it): no trip through the pool
    if encoded is None:
        trace = store.cached(resolved) or await run(request, store.get, resolved)
        ctx = TraceContext(resolved, trace, request.app.state.settings)
        encoded = await run(request, _encode, partial(views.trace_summary, ctx), True)
        svc.steps.put(key, encoded)
    else:
        store.remember(resolved)  # the id stays known (its spec) even while the summary is cached
    return timed(encoded_response(request, encoded[0], gzipped=encoded[1]), started)


@router.get("/traces/{trace_id}/steps/{index}", summary="One step: explanation, formulas, figures, gradient check")
async def get_step(
    request: Request,
    trace_id: str,
    index: int = Path(description="position in the trace's step list"),
    seq: int = Query(0, description="which sequence of the batch the figures show"),
    pos: int = Query(0, description="position of the output-softmax identity check (step `probs`, backward)"),
) -> Response:
    started = time.perf_counter()
    svc = services(request)
    key = (trace_id, index, seq, pos)
    cached = svc.steps.get(key)
    if cached is None:
        ctx = await trace_context(request, trace_id)
        _step_record(ctx, index)
        check_range("seq", seq, ctx.n_seq, f"the trace has {ctx.n_seq} sequence(s)")
        check_range("pos", pos, ctx.T, f"the trace has {ctx.T} positions")
        if ctx.trace.records[index].name != "probs":  # only the identity check reads pos: share one view
            pos, key = 0, (trace_id, index, seq, 0)
        cached = svc.steps.get(key) or await run(
            request, svc.steps.get_or_compute, key, partial(_render_step, svc, ctx, trace_id, index, seq, pos)
        )
    body, gzipped = cached
    return timed(encoded_response(request, body, gzipped=gzipped), started)


def _render_step(
    svc: Services, ctx: TraceContext, trace_id: str, index: int, seq: int, pos: int
) -> tuple[bytes, bytes]:
    check = svc.gradchecks.get_or_compute((trace_id, index), lambda: check_record(ctx.trace, index))
    body = views.step_view_json(ctx, index, seq, pos, check)  # within settings.max_step_bytes
    return body, gzip.compress(body, compresslevel=5)


def _step_record(ctx: TraceContext, index: int):
    n = len(ctx.trace.records)
    if not 0 <= index < n:
        raise HTTPException(404, detail=f"step {index} is out of range: this trace has steps 0 to {n - 1}")
    return ctx.trace.records[index]


@router.get(
    "/traces/{trace_id}/steps/{index}/head",
    summary="One attention head of a step's grid with every value (the step view sends a downsampled overview)",
)
async def get_head(
    request: Request,
    trace_id: str,
    index: int = Path(description="position in the trace's step list"),
    head: int = Query(description="the head, 0 to n_head - 1"),
    figure: str | None = Query(None, description="id of one of the step's head grids (default: its first)"),
    seq: int = Query(0, description="which sequence of the batch"),
) -> Response:
    started = time.perf_counter()
    svc = services(request)
    key = ("head", trace_id, index, figure, head, seq)
    cached = svc.steps.get(key)
    if cached is None:
        ctx = await trace_context(request, trace_id)
        record = _step_record(ctx, index)
        grids = list(views.head_grids(ctx, index))
        if not grids:
            raise SpecError(("query", "figure"), f"step {index} ({record.name}) shows no grid of attention heads")
        if figure is not None and figure not in grids:
            raise SpecError(
                ("query", "figure"), f"figure must be one of this step's head grids {grids}, got {figure!r}"
            )
        check_range("head", head, ctx.trace.cfg.n_head, f"the model has {ctx.trace.cfg.n_head} heads")
        check_range("seq", seq, ctx.n_seq, f"the trace has {ctx.n_seq} sequence(s)")
        render = partial(_render_head, ctx, index, figure or grids[0], head, seq)
        cached = await run(request, svc.steps.get_or_compute, key, render)
    body, gzipped = cached
    return timed(encoded_response(request, body, gzipped=gzipped), started)


def _render_head(ctx: TraceContext, index: int, figure_id: str, head: int, seq: int) -> tuple[bytes, bytes]:
    body = compact_json(json_safe(views.head_view(ctx, index, figure_id, head, seq)))
    return body, gzip.compress(body, compresslevel=5)


@router.get("/traces/{trace_id}/jacobian", summary="One softmax row's Jacobian and the chain-rule check")
async def get_jacobian(
    request: Request,
    trace_id: str,
    layer: str = Query(description='a layer index for attention, or "output" for the output softmax'),
    head: int = Query(0, description="attention head (attention only)"),
    pos: int | None = Query(None, description="query position (attention) or position (output); default the last"),
    seq: int = Query(0, description="sequence of the batch"),
    top_k: int = Query(10, description="output only: show the k most probable tokens and the target"),
) -> Response:
    started = time.perf_counter()
    ctx = await trace_context(request, trace_id)
    cfg = ctx.trace.cfg
    if layer == "output":
        layer_index = None
        limit = min(cfg.vocab_size, request.app.state.settings.max_top_k)
        if not 1 <= top_k <= limit:
            raise SpecError(("query", "top_k"), f"top_k must be between 1 and {limit}, got {top_k}")
    else:
        try:
            layer_index = int(layer)
        except ValueError:
            raise SpecError(("query", "layer"), f'layer must be an integer or "output", got {layer!r}') from None
        check_range("layer", layer_index, cfg.n_layer, f"the model has {cfg.n_layer} layer(s)")
        check_range("head", head, cfg.n_head, f"the model has {cfg.n_head} heads")
    check_range("seq", seq, ctx.n_seq, f"the trace has {ctx.n_seq} sequence(s)")
    pos = ctx.T - 1 if pos is None else pos
    check_range("pos", pos, ctx.T, f"the trace has {ctx.T} positions")
    return timed(await run_json(request, views.jacobian_view, ctx, layer_index, head, seq, pos, top_k), started)


@router.get(
    "/traces/{trace_id}/tensors/{name}",
    responses=TENSOR_ANSWER,
    summary="One recorded tensor or its gradient, as .npy or JSON",
)
async def get_tensor(
    request: Request,
    trace_id: str,
    name: str,
    grad: bool = Query(False, description="the gradient dL/d(name) instead of the value"),
    format: Literal["npy", "json"] = Query(
        "npy", description="npy: numpy's .npy file; json: {name, shape, dtype, data}"
    ),
) -> Response:
    ctx = await trace_context(request, trace_id)
    try:
        array = views.tensor_array(ctx.trace, name, grad)
    except KeyError as exc:
        message = f"{exc.args[0]} in trace {trace_id}; a step's `shapes` names the tensors it reads and writes"
        raise HTTPException(404, detail=message) from None
    light = array.size <= LIGHT_TENSOR_ENTRIES
    if format == "json":
        return await run_json(request, views.tensor_json, name, array, grad, light=light)
    body = await run(request, views.tensor_npy, array, light=light)
    filename = f"{name}{'.grad' if grad else ''}.npy"
    return Response(
        body,
        media_type="application/octet-stream",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )
