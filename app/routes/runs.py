"""Recorded training runs (`xt train --record`, docs/film.md): the runs this server offers and a
stretch of one's steps. The work is app.films.runs'; reading a run is milliseconds (LIGHT)."""

from __future__ import annotations

from fastapi import APIRouter, Path, Query

from app.deps import ServicesDep, SettingsDep
from app.encoding import json_safe
from app.errors import BAD_FIELD, NOT_FOUND
from app.films import runs
from app.schemas.runs import RunAnswer, RunListing
from app.traces.pool import LIGHT

router = APIRouter(prefix="/api", tags=["runs"])


@router.get("/runs", response_model=RunListing, summary="The recorded training runs this server offers")
async def list_runs(services: ServicesDep, settings: SettingsDep) -> dict:
    return await services.run(runs.listing, settings, pool=LIGHT)


@router.get(
    "/runs/{name}",
    response_model=RunAnswer,
    responses={**NOT_FOUND, **BAD_FIELD},
    summary="A recorded run: its plan, checkpoints, and every step's loss, norms and head scores in a stretch",
)
async def read_run(
    services: ServicesDep,
    settings: SettingsDep,
    name: str = Path(pattern=runs.RUN_NAME, description="a run's name, as GET /api/runs lists it"),
    start: int = Query(0, description="the first step shown"),
    stop: int | None = Query(None, description="the step the stretch stops before (default: the run's end)"),
    stride: int | None = Query(None, ge=1, description="steps between two shown (default: the least that fits)"),
) -> dict:
    return json_safe(await services.run(runs.answer, settings, name, start, stop, stride, pool=LIGHT))
