"""Traces (contract in docs/api.md): build one from a spec, one step's view, its check, one
enlarged head, a softmax row's Jacobian, a recorded tensor. Each route validates its
parameters and calls app.answers (services.answers), which makes every answer."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from app import security
from app.deps import FigureSeq, LangDep, OffLoopJSONRoute, ServicesDep, SettingsDep, StepIndex
from app.errors import BAD_FIELD, DOWNLOADS_LIMITED, NOT_FOUND, QUIZ_WEIGHTS
from app.schemas.traces import HeadView, JacobianView, StepCheckAnswer, StepView, TensorJSON, TraceSummary
from app.spec import TraceSpec, resolve

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

router = APIRouter(prefix="/api", tags=["api"], responses={**NOT_FOUND, **BAD_FIELD}, route_class=OffLoopJSONRoute)

# The trace's id feeds the routes under /api/traces/{trace_id} (OpenAPI links: clients and
# schemathesis' stateful phase follow them), with a second step and the logits as examples; the
# quiz's state (every trace answers it: `quiz` false for one that hides no bug), not its probe or
# answer, which only a quiz trace has.
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
        ("GetQueuePlace", "queue_place_api_traces__trace_id__queue_get", {}),
        ("GetUpdate", "update_parameter_api_traces__trace_id__update_get", {}),
        ("GetChecks", "get_checks_api_traces__trace_id__checks_get", {}),
        ("GetDiff", "get_diff_api_traces__trace_id__steps__index__diff_get", {"index": _STEP}),
        ("GetStepCheck", "get_step_check_api_traces__trace_id__steps__index__check_get", {"index": _STEP}),
        ("GetQuiz", "quiz_state_api_traces__trace_id__quiz_get", {}),
    )
}


@router.post(
    "/traces",
    response_model=TraceSummary,
    responses={
        200: {"description": "the trace's summary", "links": _TRACE_LINKS},
        **security.BODY_REFUSED,
        **security.WRITE_REFUSED,
        **security.BUSY,
    },
    summary="Build (or find) the trace of a spec: its steps, tokens and blocks",
)
async def create_trace(
    spec: TraceSpec, request: Request, services: ServicesDep, settings: SettingsDep, lang: LangDep
) -> Response:
    """Viewing is open to anyone who reaches the server; training (train_steps > 0) a trace
    not already built needs the admin key on a server bound beyond loopback."""
    return await services.answers.summary(request, resolve(spec, settings), lang)


@router.get(
    "/traces/{trace_id}/steps/{index}",
    response_model=StepView,
    summary="One step: explanation, formulas, figures, gradient check",
)
async def get_step(
    request: Request,
    services: ServicesDep,
    lang: LangDep,
    trace_id: str,
    index: StepIndex,
    seq: FigureSeq = 0,
    pos: int = Query(0, description="position of the output-softmax identity check (step `output_probs`, backward)"),
) -> Response:
    return await services.answers.step(request, trace_id, index, seq, pos, lang)


@router.get(
    "/traces/{trace_id}/steps/{index}/check",
    response_model=StepCheckAnswer,
    summary="One step's gradient check (a real model's step view answers before it: its gradcheck is pending)",
)
async def get_step_check(
    request: Request,
    services: ServicesDep,
    trace_id: str,
    index: StepIndex,
    lang: LangDep,
) -> Response:
    return await services.answers.check(request, trace_id, index, lang)


@router.get(
    "/traces/{trace_id}/steps/{index}/head",
    response_model=HeadView,
    summary="One attention head of a step's grid with every value (the step view sends a downsampled overview)",
)
async def get_head(
    request: Request,
    services: ServicesDep,
    lang: LangDep,
    trace_id: str,
    index: StepIndex,
    head: int = Query(description="the head, 0 to n_head - 1"),
    figure: str | None = Query(None, description="id of one of the step's head grids (default: its first)"),
    seq: int = Query(0, description="which sequence of the batch"),
) -> Response:
    return await services.answers.head(request, trace_id, index, figure, head, seq, lang)


@router.get(
    "/traces/{trace_id}/jacobian",
    response_model=JacobianView,
    summary="One softmax row's Jacobian and the chain-rule check",
)
async def get_jacobian(
    request: Request,
    services: ServicesDep,
    lang: LangDep,
    trace_id: str,
    layer: str = Query(description='a layer index for attention, or "output" for the output softmax'),
    head: int = Query(0, description="attention head (attention only)"),
    pos: int | None = Query(None, description="query position (attention) or position (output); default the last"),
    seq: int = Query(0, description="sequence of the batch"),
    top_k: int | None = Query(
        None, description="output only: show the k most probable tokens and the target (default: 10, or V if fewer)"
    ),
) -> Response:
    return await services.answers.jacobian(request, trace_id, layer, head, pos, seq, top_k, lang)


@router.get(
    "/traces/{trace_id}/tensors/{name}",
    response_model=TensorJSON,
    responses={**TENSOR_ANSWER, **QUIZ_WEIGHTS, **DOWNLOADS_LIMITED},
    summary="One recorded tensor or its gradient, as .npy or JSON",
)
async def get_tensor(
    request: Request,
    services: ServicesDep,
    trace_id: str,
    name: str,
    grad: bool = Query(False, description="the gradient dL/d(name) instead of the value"),
    format: Literal["npy", "json"] = Query(
        "npy", description="npy: numpy's .npy file; json: {name, shape, dtype, data}"
    ),
) -> Response:
    # a .npy download counts against its client's max_download_bytes_per_client (app.traces.downloads)
    client = services.client_key(request)
    return await services.answers.tensor(request, trace_id, name, grad, format == "json", client=client)
