"""Traces (contract in docs/api.md): build one from a spec, one step's view, one enlarged head,
a softmax row's Jacobian, a recorded tensor. Thin: validate, find the trace, hand the work to
app.steps in the worker pool (deps.Services)."""

from __future__ import annotations

from functools import partial
from typing import Literal

from fastapi import APIRouter, HTTPException, Path, Query, Request
from fastapi.responses import Response, StreamingResponse

from app import security
from app.buglab import quiz
from app.deps import OffLoopJSONRoute, ServicesDep, SettingsDep, TraceDep, encode, with_gzip
from app.encoding import compact_json, encoded_response, json_safe
from app.errors import BAD_FIELD, NOT_FOUND, SpecError, check_range
from app.spec import TraceSpec, resolve
from app.steps import heads, jacobian, summary, view
from app.steps.gradcheck import gradcheck_json
from app.traces import tensors
from app.traces.context import TraceContext
from xt_core import names
from xt_core.gradcheck import check_record

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
# A tensor's JSON up to this many entries is encoded in the light thread (~0.1 s with gzip); a
# bigger one (up to settings.max_json_tensor_entries, 4×: ~0.5 s) waits in the worker pool. A .npy
# answer is streamed from the array's memory whatever its size.
LIGHT_TENSOR_ENTRIES = 1 << 16

router = APIRouter(prefix="/api", tags=["api"], responses={**NOT_FOUND, **BAD_FIELD}, route_class=OffLoopJSONRoute)

# The trace's id feeds the routes under /api/traces/{trace_id} (OpenAPI links: clients and
# schemathesis' stateful phase follow them), with a second step and the logits as examples;
# not the quiz's answer, which only a quiz trace has.
_ID = "$response.body#/id"
_STEP = "$response.body#/steps/1/index"
_TRACE_LINKS = {
    name: {"operationId": operation, "parameters": {"trace_id": _ID, **extra}}
    for name, operation, extra in (
        ("GetStep", "get_step_api_traces__trace_id__steps__index__get", {"index": _STEP}),
        ("GetHead", "get_head_api_traces__trace_id__steps__index__head_get", {}),
        ("GetJacobian", "get_jacobian_api_traces__trace_id__jacobian_get", {"layer": "0"}),
        ("GetTensor", "get_tensor_api_traces__trace_id__tensors__name__get", {"name": "logits"}),
        ("GetProgress", "training_progress_api_traces__trace_id__progress_get", {}),
        ("GetUpdate", "update_parameter_api_traces__trace_id__update_get", {}),
        ("GetChecks", "get_checks_api_traces__trace_id__checks_get", {}),
        ("GetDiff", "get_diff_api_traces__trace_id__steps__index__diff_get", {"index": _STEP}),
        ("GetStepCheck", "get_step_check_api_traces__trace_id__steps__index__check_get", {"index": _STEP}),
    )
}


@router.post(
    "/traces",
    responses={
        200: {"description": "the trace's summary", "links": _TRACE_LINKS},
        **security.BODY_REFUSED,
        **security.WRITE_REFUSED,
        **security.BUSY,
    },
    summary="Build (or find) the trace of a spec: its steps, tokens and blocks",
)
async def create_trace(spec: TraceSpec, request: Request, services: ServicesDep, settings: SettingsDep) -> Response:
    """Viewing is open to anyone who reaches the server; training (train_steps > 0) a trace
    not already built needs the admin key on a server bound beyond loopback."""
    resolved = resolve(spec, settings)
    store, key = services.store, (resolved.id, "summary")
    encoded = services.answers.get(key)  # a re-posted spec (every page load does it): no trip through the pool
    if encoded is None:
        trace = store.cached(resolved)
        if trace is None:
            if resolved.train_steps:
                security.check_writer(request, settings)
            trace = await services.build(resolved, request)  # admitted by cost (503 beyond the budgets)
        ctx = TraceContext(resolved, trace, settings)
        encoded = await services.run(encode, partial(summary.trace_summary, ctx), True)
        services.answers.put(key, encoded)
    else:
        store.remember(resolved)  # the id stays known (its spec) even while the summary is cached
    return encoded_response(request, encoded[0], gzipped=encoded[1])


def step_record(ctx: TraceContext, index: int):
    n = len(ctx.trace.records)
    if not 0 <= index < n:
        raise HTTPException(404, detail=f"step {index} is out of range: this trace has steps 0 to {n - 1}")
    return ctx.trace.records[index]


@router.get("/traces/{trace_id}/steps/{index}", summary="One step: explanation, formulas, figures, gradient check")
async def get_step(
    request: Request,
    services: ServicesDep,
    trace_id: str,
    index: int = Path(description="position in the trace's step list"),
    seq: int = Query(0, description="which sequence of the batch the figures show"),
    pos: int = Query(0, description="position of the output-softmax identity check (step `output_probs`, backward)"),
) -> Response:
    # A quiz's step keeps its verdict until answered or probed (app/buglab/quiz.py): its own cache entry.
    sealed = _is_quiz(services, trace_id) and services.quiz.sealed(trace_id, index)
    key = (trace_id, index, seq, pos, sealed)
    cached = services.answers.get(key)
    if cached is None:
        ctx = await services.trace(trace_id, request)
        step_record(ctx, index)
        check_range("seq", seq, ctx.n_seq, f"the trace has {ctx.n_seq} sequence(s)")
        check_range("pos", pos, ctx.T, f"the trace has {ctx.T} positions")
        if not names.is_output_softmax(ctx.trace.records[index].name):  # only its identity check reads pos
            pos, key = 0, (trace_id, index, seq, 0, sealed)
        render = partial(_render_step, services, ctx, trace_id, index, seq, pos, sealed)
        cached = services.answers.get(key) or await services.run(
            services.answers.get_or_compute, key, render, request=request
        )
    body, gzipped = cached
    return encoded_response(request, body, gzipped=gzipped)


def _is_quiz(services, trace_id: str) -> bool:
    spec = services.store.spec(trace_id)
    return spec is not None and spec.quiz is not None


def _render_step(
    services, ctx: TraceContext, trace_id: str, index: int, seq: int, pos: int, sealed: bool = False
) -> tuple[bytes, bytes]:
    check = None if view.check_deferred(ctx) else _step_check(services, ctx, trace_id, index)
    body = view.step_view_json(ctx, index, seq, pos, check)  # within settings.max_step_bytes
    return with_gzip(quiz.seal_step(body) if sealed else body)


def _step_check(services, ctx: TraceContext, trace_id: str, index: int):
    return services.gradchecks.get_or_compute((trace_id, index), lambda: check_record(ctx.trace, index))


@router.get(
    "/traces/{trace_id}/steps/{index}/check",
    summary="One step's gradient check (a real model's step view answers before it: its gradcheck is pending)",
)
async def get_step_check(
    request: Request,
    services: ServicesDep,
    trace_id: str,
    index: int = Path(description="position in the trace's step list"),
) -> Response:
    sealed = _is_quiz(services, trace_id) and services.quiz.sealed(trace_id, index)
    key = ("check", trace_id, index, sealed)
    cached = services.answers.get(key)
    if cached is None:
        ctx = await services.trace(trace_id, request)
        step_record(ctx, index)
        render = partial(_render_check, services, ctx, trace_id, index, sealed)
        cached = await services.run(services.answers.get_or_compute, key, render, request=request)
    body, gzipped = cached
    return encoded_response(request, body, gzipped=gzipped)


def _render_check(services, ctx: TraceContext, trace_id: str, index: int, sealed: bool) -> tuple[bytes, bytes]:
    """{index, gradcheck, warning}: the step view's badge and its failed-check warning (null
    when it passed); a quiz's sealed step: {"sealed": true} and no warning, as its view."""
    if sealed:
        answer = {"index": index, "gradcheck": quiz.SEALED_CHECK, "warning": None}
    else:
        check = _step_check(services, ctx, trace_id, index)
        warning = view.failed_check_warning(ctx, ctx.trace.records[index], check)
        answer = {"index": index, "gradcheck": gradcheck_json(check), "warning": warning}
    return with_gzip(compact_json(json_safe(answer)))


@router.get(
    "/traces/{trace_id}/steps/{index}/head",
    summary="One attention head of a step's grid with every value (the step view sends a downsampled overview)",
)
async def get_head(
    request: Request,
    services: ServicesDep,
    trace_id: str,
    index: int = Path(description="position in the trace's step list"),
    head: int = Query(description="the head, 0 to n_head - 1"),
    figure: str | None = Query(None, description="id of one of the step's head grids (default: its first)"),
    seq: int = Query(0, description="which sequence of the batch"),
) -> Response:
    key = ("head", trace_id, index, figure, head, seq)
    cached = services.answers.get(key)
    if cached is None:
        ctx = await services.trace(trace_id, request)
        record = step_record(ctx, index)
        grids = list(heads.head_grids(ctx, index))
        if not grids:
            raise SpecError(("query", "figure"), f"step {index} ({record.name}) shows no grid of attention heads")
        if figure is not None and figure not in grids:
            raise SpecError(
                ("query", "figure"), f"figure must be one of this step's head grids {grids}, got {figure!r}"
            )
        check_range("head", head, ctx.trace.cfg.n_head, f"the model has {ctx.trace.cfg.n_head} heads")
        check_range("seq", seq, ctx.n_seq, f"the trace has {ctx.n_seq} sequence(s)")
        render = partial(_render_head, ctx, index, figure or grids[0], head, seq)
        cached = await services.run(services.answers.get_or_compute, key, render, request=request)
    body, gzipped = cached
    return encoded_response(request, body, gzipped=gzipped)


def _render_head(ctx: TraceContext, index: int, figure_id: str, head: int, seq: int) -> tuple[bytes, bytes]:
    return with_gzip(compact_json(json_safe(heads.head_view(ctx, index, figure_id, head, seq))))


def _jacobian_layer(ctx: TraceContext, layer: str, head: int, top_k: int) -> int | None:
    """The layer index, or None for the output softmax; the query's head or top_k checked."""
    cfg = ctx.trace.cfg
    if layer == "output":
        limit = min(cfg.vocab_size, ctx.settings.max_top_k)
        if not 1 <= top_k <= limit:
            raise SpecError(("query", "top_k"), f"top_k must be between 1 and {limit}, got {top_k}")
        return None
    try:
        layer_index = int(layer)
    except ValueError:
        raise SpecError(("query", "layer"), f'layer must be an integer or "output", got {layer!r}') from None
    check_range("layer", layer_index, cfg.n_layer, f"the model has {cfg.n_layer} layer(s)")
    check_range("head", head, cfg.n_head, f"the model has {cfg.n_head} heads")
    return layer_index


@router.get("/traces/{trace_id}/jacobian", summary="One softmax row's Jacobian and the chain-rule check")
async def get_jacobian(
    request: Request,
    services: ServicesDep,
    ctx: TraceDep,
    layer: str = Query(description='a layer index for attention, or "output" for the output softmax'),
    head: int = Query(0, description="attention head (attention only)"),
    pos: int | None = Query(None, description="query position (attention) or position (output); default the last"),
    seq: int = Query(0, description="sequence of the batch"),
    top_k: int = Query(10, description="output only: show the k most probable tokens and the target"),
) -> Response:
    layer_index = _jacobian_layer(ctx, layer, head, top_k)
    check_range("seq", seq, ctx.n_seq, f"the trace has {ctx.n_seq} sequence(s)")
    pos = ctx.T - 1 if pos is None else pos
    check_range("pos", pos, ctx.T, f"the trace has {ctx.T} positions")
    if ctx.spec.quiz is not None and services.quiz.sealed(ctx.spec.id):
        return await services.json(request, _sealed_jacobian, ctx, layer_index, head, seq, pos, top_k)
    return await services.json(request, jacobian.jacobian_view, ctx, layer_index, head, seq, pos, top_k)


def _sealed_jacobian(*args) -> dict:
    return quiz.seal_jacobian(jacobian.jacobian_view(*args))


@router.get(
    "/traces/{trace_id}/tensors/{name}",
    responses=TENSOR_ANSWER,
    summary="One recorded tensor or its gradient, as .npy or JSON",
)
async def get_tensor(
    request: Request,
    services: ServicesDep,
    ctx: TraceDep,
    name: str,
    grad: bool = Query(False, description="the gradient dL/d(name) instead of the value"),
    format: Literal["npy", "json"] = Query(
        "npy", description="npy: numpy's .npy file; json: {name, shape, dtype, data}"
    ),
) -> Response:
    try:
        array = tensors.tensor_array(ctx.trace, name, grad)
    except KeyError as exc:
        message = f"{exc.args[0]} in trace {ctx.spec.id}; a step's `shapes` names the tensors it reads and writes"
        raise HTTPException(404, detail=message) from None
    if format == "json":
        too_big = tensors.check_json_size(name, array, ctx.settings.max_json_tensor_entries)
        if too_big is not None:  # before a list is made of it (SmolLM2's embedding: 560 MB of JSON)
            raise SpecError(("query", "format"), too_big)
        light = array.size <= LIGHT_TENSOR_ENTRIES
        return await services.json(request, tensors.tensor_json, name, array, grad, light=light)
    # .npy: the array's own memory, a slice at a time (only a non-contiguous one is copied, in the pool)
    light = array.flags.c_contiguous or array.size <= LIGHT_TENSOR_ENTRIES
    length, pieces = await services.run(tensors.npy_stream, array, light=light)
    filename = f"{name}{'.grad' if grad else ''}.npy"
    return StreamingResponse(
        pieces,
        media_type="application/octet-stream",
        headers={"Content-Disposition": f'attachment; filename="{filename}"', "Content-Length": str(length)},
    )
