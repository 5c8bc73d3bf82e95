"""A film class (docs/lessons.md, "A class on the film"): a class that follows a recorded run's film
(/film?run=NAME) instead of one walkthrough. The presenter scrubs (state `film_step`) and opens one of
the run's steps into the walkthrough (`run_step`: the class is then on that step's walk page, its moves
checked as any walkthrough class's) and goes back to the film (`run_step` null). What needs the
settings and the build queue is here; app.sessions.rules checks the rest."""

from __future__ import annotations

from fastapi import Request

from app.errors import SpecError, check_between
from app.films.runs import RunNotOpened, open_run
from app.sessions import rules
from app.sessions.service import ON_THE_FILM, walk_fields
from app.settings import Settings
from app.spec import TraceSpec, resolve
from app.traces.pool import LIGHT


async def film_of(services, settings: Settings, name: str, film_step: int) -> int:
    """The run's step count: the run offered here and readable (else 422 at body.run), `film_step`
    one of its steps (else 422 at body.film_step). Reading a run is milliseconds (LIGHT)."""
    try:
        run = await services.run(open_run, settings, name, pool=LIGHT)
    except RunNotOpened as exc:
        raise SpecError(("body", "run"), exc.said) from None
    check_between(("body", "film_step"), film_step, 0, run.plan.steps - 1)
    return run.plan.steps


async def opened_from_film(request: Request, services, settings: Settings, fields: dict, run_step: int | None) -> dict:
    """The fields a film class's `run_step` sets: the walkthrough of the run's step (its trace built,
    admitted as every build: the presenter's walk page has built it already, so it is cached), the
    film scrubbed to that step; null: back on the film, no walkthrough."""
    rules.check_film_step("run_step", run_step, fields)
    moved = {"run_step": run_step, "jacobian": None, "head": None}
    if run_step is None:
        return ON_THE_FILM | moved
    spec = resolve(TraceSpec(run=fields["run"], run_step=run_step), settings)
    trace = await services.build(spec, request)
    return walk_fields(spec, trace.records) | moved | {"film_step": run_step, "step": 0}
