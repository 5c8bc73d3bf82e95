"""The film of a recorded run (GET /film?run=NAME[&step=S], docs/film.md): the loss and every head's
scores over the run's steps, a scrubber, and each step one click from the walkthrough. The page
reads the run from GET /api/runs/{name}; without a run (or an unknown one) it lists the runs here.
Under either, "Record a training run" (templates/_film_record.html: POST /api/runs) and its limits."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from app.films import runs
from app.routes.pages import templates
from app.settings import Settings
from app.words import choice

router = APIRouter(include_in_schema=False)
# The demo tasks a page may record (xt_core.lab.tasks.TASKS, `xt train --task`), each named for a person
TASK_WORDS = {
    "induction": "film-record-task-induction",
    "text": "film-record-task-text",
    "gpt2-text": "film-record-task-gpt2-text",
}


def _step(value: str | None) -> int:
    try:
        return max(0, int(value or 0))
    except ValueError:
        return 0


@router.get("/film", response_class=HTMLResponse)
def film(request: Request) -> Response:
    settings: Settings = request.app.state.settings
    name = request.query_params.get("run", "")
    listed = runs.listing(settings)["runs"]
    known = {entry["name"]: entry for entry in listed}
    chosen = known.get(name)
    status = 200 if chosen or not name else 404
    step = min(_step(request.query_params.get("step")), chosen["steps"] - 1) if chosen else 0
    record = {"tasks": TASK_WORDS, "steps": settings.max_record_steps, "runs": settings.max_recorded_runs}
    context = {"run": chosen, "asked": name, "runs": listed, "step": step, "record": record}
    response = templates(settings.templates_dir).TemplateResponse(request, "film.html", context, status_code=status)
    choice.remember(request, response)
    return response
