"""Training from the page: the progress of a training run, where a build waits in the queue, and
one parameter's ΔW on the update step (app.traces.training runs it; app.steps.update draws it)."""

from __future__ import annotations

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from app.deps import LangDep, ServicesDep
from app.encoding import json_safe
from app.errors import BAD_FIELD, NOT_FOUND, QUIZ_WEIGHTS
from app.schemas.training import ParamUpdate, Progress, QueuePlace

router = APIRouter(prefix="/api", tags=["training"])


@router.get(
    "/traces/{trace_id}/progress", response_model=Progress, summary="How far the training before a trace's step has got"
)
async def training_progress(services: ServicesDep, trace_id: str) -> dict:
    """{state: pending|training|done|failed, done, total, loss, seconds}; `pending` also for
    an id the server has not started (the page polls while its POST is under way)."""
    progress = services.store.progress.get(trace_id)
    return json_safe(progress or {"state": "pending", "done": 0, "total": None, "loss": None, "seconds": 0.0})


@router.get("/traces/{trace_id}/queue", response_model=QueuePlace, summary="Where a trace's build waits its turn")
async def queue_place(services: ServicesDep, trace_id: str) -> dict:
    """{state: queued|building|idle, position, ahead, ahead_seconds, seconds, waiting}: the page
    polls it while its POST waits in the queue (app.traces.admission); `idle` also for an id the
    server does not know."""
    return services.admission.where(trace_id)


@router.get(
    "/traces/{trace_id}/update",
    response_model=ParamUpdate,
    responses={**NOT_FOUND, **BAD_FIELD, **QUIZ_WEIGHTS},
    summary="The update step for one parameter: ΔW beside its gradient",
)
async def update_parameter(
    request: Request,
    services: ServicesDep,
    lang: LangDep,
    trace_id: str,
    param: str = Query(description="a parameter name, e.g. layers.0.attention.wq"),
) -> Response:
    return await services.answers.update(request, trace_id, param, lang)
