"""Recorded training runs (`xt train --record`, docs/film.md): the runs this server offers and a
stretch of one's steps (app.films.runs: reading a run is milliseconds, LIGHT); and a run of a demo
task recorded from the page (POST /api/runs: app.recording),
whose progress the page polls."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import JSONResponse

from app import security
from app.deps import LangDep, ServicesDep, SettingsDep, WriterDep
from app.encoding import json_safe
from app.errors import BAD_FIELD, NOT_FOUND
from app.films import runs
from app.recording import limits as record_limits
from app.recording.recordings import Recordings, started
from app.schemas.runs import RecordBody, RecordProgress, RecordStarted, RunAnswer, RunListing
from app.traces.pool import LIGHT
from app.words.said import in_language

router = APIRouter(prefix="/api", tags=["runs"])
RunName = Annotated[str, Path(pattern=runs.RUN_NAME, description="a run's name, as GET /api/runs lists it")]
REFUSED = {
    403: "from another site, or (a server bound beyond loopback) without the admin key",
    429: "this client already has max_recordings_per_client recordings under way, or too many wrong admin keys "
    "from this address: retry after Retry-After",
    503: "max_recordings are under way, or the page runs kept fill their bound and none is old enough to go: "
    "retry after Retry-After",
}
RECORD_REFUSED = {status: {**NOT_FOUND[404], "description": said} for status, said in REFUSED.items()}


def get_recordings(request: Request) -> Recordings:
    return request.app.state.recordings


RecordingsDep = Annotated[Recordings, Depends(get_recordings)]


@router.get("/runs", response_model=RunListing, summary="The recorded training runs this server offers")
async def list_runs(services: ServicesDep, settings: SettingsDep) -> dict:
    return await services.run(runs.listing, settings, pool=LIGHT)


@router.post(
    "/runs",
    status_code=202,
    response_model=RecordStarted,
    responses={**BAD_FIELD, **security.BODY_REFUSED, **RECORD_REFUSED},
    summary="Record a run of a demo task on the server (within the settings' limits), a slice per turn of the build queue",
)
async def record_run(
    request: Request,
    _writer: WriterDep,
    body: RecordBody,
    services: ServicesDep,
    settings: SettingsDep,
    recordings: RecordingsDep,
) -> JSONResponse:
    plan = record_limits.checked_plan(settings, body)  # every limit, before anything is written
    recorder = recordings.start(plan, services.client_key(request))
    return JSONResponse(started(recorder), status_code=202)


@router.get(
    "/runs/{name}/progress",
    response_model=RecordProgress,
    responses=NOT_FOUND,
    summary="Where a run recorded from the page stands",
)
async def record_progress(
    services: ServicesDep, settings: SettingsDep, recordings: RecordingsDep, lang: LangDep, name: RunName
) -> dict:
    """A run this process records (or recorded lately); a run already on the server is `done`."""
    answer = recordings.progress(name)
    if answer is None:
        run = await services.run(runs.opened, settings, name, pool=LIGHT)  # 404 naming the runs there are
        steps = run.plan.steps
        answer = {"name": name, "state": "done", "done": steps, "total": steps, "loss": float(run.log.loss[-1])}
        answer |= {"seconds": 0.0, "waiting": False, "ahead": 0, "error": None}
    return json_safe({**answer, "error": in_language(answer["error"], lang) if answer["error"] else None})


@router.get(
    "/runs/{name}",
    response_model=RunAnswer,
    responses={**NOT_FOUND, **BAD_FIELD},
    summary="A recorded run: its plan, checkpoints, and every step's loss, norms and head scores in a stretch",
)
async def read_run(
    services: ServicesDep,
    settings: SettingsDep,
    name: RunName,
    start: int = Query(0, description="the first step shown"),
    stop: int | None = Query(None, description="the step the stretch stops before (default: the run's end)"),
    stride: int | None = Query(None, ge=1, description="steps between two shown (default: the least that fits)"),
) -> dict:
    return json_safe(await services.run(runs.answer, settings, name, start, stop, stride, pool=LIGHT))
