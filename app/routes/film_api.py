"""The film's own answers (docs/film.md): GET /api/runs/{name}/attention, every head's attention on
the run's probe sequence at its recorded steps (the frames the film draws while scrubbing: read from
the run, milliseconds, LIGHT), and GET /api/runs/{name}/composition, layer 1's dL/dW_Q and dL/dW_K at
a step split by what wrote the residual stream (a replay of seconds: BUILDS, cached). The work is
app.films.views'."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import Response

from app.deps import ServicesDep, SettingsDep
from app.encoding import json_response, json_safe
from app.errors import BAD_FIELD, NOT_FOUND
from app.films import runs, views
from app.schemas.film_views import CompositionAnswer, FramesAnswer
from app.traces.pool import BUILDS, LIGHT

router = APIRouter(prefix="/api", tags=["runs"])
RunName = Annotated[str, Path(pattern=runs.RUN_NAME, description="a run's name, as GET /api/runs lists it")]
REPLAY_DIFFERS = {409: {**NOT_FOUND[404], "description": "the step replayed differs from the recorded weights"}}
MEASURING = {
    503: {**NOT_FOUND[404], "description": "another composition is replaying its run: retry after Retry-After"}
}


@router.get(
    "/runs/{name}/attention",
    response_model=FramesAnswer,
    responses={**NOT_FOUND, **BAD_FIELD},
    summary="Every head's attention on the run's probe sequence at its recorded steps (the film's frames)",
)
async def read_frames(
    request: Request,
    services: ServicesDep,
    settings: SettingsDep,
    name: RunName,
    start: int = Query(0, description="the first step whose frames are answered"),
    stop: int | None = Query(None, description="the step the stretch stops before (default: the run's end)"),
) -> Response:
    answer = await services.run(views.frames_answer, settings, name, start, stop, pool=LIGHT)
    return json_response(request, json_safe(answer))  # compact and gzipped: 0.6 MB of small integers


@router.get(
    "/runs/{name}/composition",
    response_model=CompositionAnswer,
    responses={**NOT_FOUND, **BAD_FIELD, **REPLAY_DIFFERS, **MEASURING},
    summary="Layer's dL/dW_Q and dL/dW_K at a step split by what wrote the residual stream (a replay, seconds)",
)
async def read_composition(
    request: Request,
    services: ServicesDep,
    settings: SettingsDep,
    name: RunName,
    step: int = Query(description="the run's step"),
    layer: int = Query(1, description="the layer whose W_Q and W_K gradients are split (at least 1)"),
    ahead: int = Query(50, description=f"steps after `step` replayed and summed (1 to {views.MAX_AHEAD})"),
) -> dict:
    answer = views.composition_answer
    return json_safe(await services.run(answer, settings, name, step, layer, ahead, pool=BUILDS, request=request))
