"""The bug lab's routes (contract in docs/api.md): the catalogue, every step's gradient
check, the faulty-vs-correct diff of a backward step, the quiz's answer and its start page.
Thin: validate and call app.buglab.views (the catalogue, the checks' chart) or the answers
built from traces (services.answers: the diff, a probe's check)."""

from __future__ import annotations

import asyncio
from urllib.parse import urlencode

from fastapi import APIRouter, HTTPException, Path, Query, Request
from fastapi.responses import RedirectResponse, Response
from pydantic import BaseModel, Field, ValidationError, field_validator

from app import security
from app.buglab import quiz
from app.buglab import views as buglab_views
from app.deps import FigureSeq, LangDep, ServicesDep, SettingsDep, TraceDep
from app.encoding import json_response, json_safe
from app.errors import (
    BAD_BODY,
    BAD_FIELD,
    CLASS_QUIZ,
    NOT_FOUND,
    PROBES_SPENT,
    PROBES_STORE_DOWN,
    QUIZ_SEALED,
    VOTERS_LIMITED,
    PydanticSaid,
    not_a_boolean,
)
from app.schemas.buglab import Catalogue, ChecksView, DiffView, LearnerQuiz, ProbeAnswer, QuizVerdict
from app.sessions.voters import client_address, remember
from app.spec import CONFIG_FIELDS, SpecError, TraceSpec, resolve
from app.spec.faults import default_fault_layer, is_class_quiz, new_quiz_seed
from app.steps.context import TraceContext
from app.steps.gradcheck import gradcheck_json
from app.traces.pool import VIEWS
from app.words.said import Said

router = APIRouter(tags=["bug lab"], responses=BAD_FIELD)


@router.get(
    "/api/faults",
    response_model=Catalogue,
    summary="The bug-lab catalogue: each fault, the op it breaks, whether it applies",
)
async def list_faults(request: Request, settings: SettingsDep, lang: LangDep) -> Response:
    """Query: a checkpoint `model` or any config field (as on /walk: n_layer, n_head, n_kv_head,
    tie_embeddings, ...), and fault_layer; without them, the default config and its last layer."""
    config, layer, model = {}, None, None
    for key, value in request.query_params.items():
        if key == "lang":
            continue  # the words' language (LangDep)
        if key in CONFIG_FIELDS:
            config[key] = value
        elif key == "fault_layer":
            layer = value
        elif key == "model":
            model = value or None
        else:
            raise SpecError(("query", key), Said("error-faults-unknown-parameter", key=repr(key)))
    try:
        spec = TraceSpec.model_validate({"model": model, "config": config or None, "tokens": [0, 0]})
        cfg = resolve(spec, settings).cfg
    except SpecError as exc:
        raise SpecError(("query", exc.loc[-1]), exc.msg) from None
    except ValidationError as exc:  # a value that is not a number
        field = next((str(p) for p in reversed(exc.errors()[0]["loc"]) if str(p) in CONFIG_FIELDS), "config")
        raise SpecError(
            ("query", field), Said("error-query-field", field=field, reason=PydanticSaid(exc.errors()[0]))
        ) from None
    if layer in (None, ""):
        layer = default_fault_layer(cfg)
    elif not (layer.isdigit() and int(layer) < cfg.n_layer):
        raise SpecError(
            ("query", "fault_layer"), Said("error-faults-layer", last=str(cfg.n_layer - 1), value=repr(layer))
        )
    return json_response(request, json_safe(buglab_views.catalogue(cfg, int(layer), lang)))


@router.get(
    "/api/traces/{trace_id}/checks",
    response_model=ChecksView,
    responses={**NOT_FOUND, **QUIZ_SEALED},
    summary="Every step's gradient check (computed in the background)",
)
async def get_checks(
    request: Request,
    services: ServicesDep,
    trace_id: str,
    lang: LangDep,
    wait: bool = Query(False, description="answer only once every step is checked (else: progress so far)"),
) -> Response:
    if services.store.spec(trace_id) is not None and services.answers.sealed(request, trace_id):
        raise HTTPException(
            403,
            detail=Said("error-quiz-sealed", probes=services.quiz.max_probes, trace_id=trace_id),
        )
    job = await services.checks_job(trace_id, request)  # no trace held here: the job makes way without it
    if wait:
        await asyncio.wrap_future(job.finished)
    payload = job.final_views.get(lang) or await services.run(
        lambda: json_safe(buglab_views.checks_view(job, lang)), pool=VIEWS
    )
    if payload["complete"]:
        job.final_views[lang] = payload  # nothing changes any more: draw the chart once (per language)
    return json_response(request, payload)


@router.get(
    "/api/traces/{trace_id}/steps/{index}/diff",
    response_model=DiffView,
    responses={**NOT_FOUND, **QUIZ_SEALED},
    summary="A backward step: faulty vs correct gradients",
)
async def get_diff(
    request: Request,
    services: ServicesDep,
    lang: LangDep,
    trace_id: str,
    index: int = Path(description="a backward step of a trace run with faults"),
    seq: FigureSeq = 0,
) -> Response:
    return await services.answers.diff(request, trace_id, index, seq, lang)


class QuizAnswer(BaseModel):
    step: int = Field(description="index of the backward step the learner names as broken")

    _number = field_validator("step", mode="before")(not_a_boolean)


class QuizProbe(BaseModel):
    step: int = Field(description="index of the step (any phase) whose gradient check the probe runs")

    _number = field_validator("step", mode="before")(not_a_boolean)


@router.post(
    "/api/traces/{trace_id}/quiz/answer",
    response_model=QuizVerdict,
    responses={**NOT_FOUND, **BAD_BODY, **CLASS_QUIZ, **VOTERS_LIMITED, **PROBES_STORE_DOWN, **security.BODY_REFUSED},
    summary="The quiz: name the broken step, get the fault revealed",
)
async def answer_quiz(
    request: Request, services: ServicesDep, ctx: TraceDep, answer: QuizAnswer, lang: LangDep
) -> Response:
    """The answer is the learner's own (app.sessions.voters): it unseals nothing for anyone else.
    A class's quiz is answered in the class's poll and revealed by its presenter: 409 here."""
    quiz_or_404(ctx)
    if is_class_quiz(ctx.spec.quiz):
        raise HTTPException(409, detail=Said("error-quiz-of-a-class"))
    records = ctx.trace.records
    check_range_body(answer.step, len(records))
    if records[answer.step].phase != "backward":
        raise SpecError(
            ("body", "step"), Said("error-quiz-not-backward", step=str(answer.step), phase=records[answer.step].phase)
        )
    learner = services.voters.identify(request)
    state = await services.quiz.answer(ctx.spec.id, learner)
    verdict = buglab_views.quiz_answer(ctx, answer.step, lang) | state.json(services.quiz.max_probes)
    return remember(json_response(request, json_safe(verdict | {"voter": learner})), learner)


def quiz_or_404(ctx: TraceContext) -> None:
    if ctx.spec.quiz is None:
        raise HTTPException(404, detail=Said("error-not-a-quiz", trace_id=ctx.spec.id))


@router.get(
    "/api/traces/{trace_id}/quiz",
    response_model=LearnerQuiz,
    responses={**NOT_FOUND, **PROBES_STORE_DOWN},
    summary="The quiz's state: answered or not, the steps probed and the probes left (quiz false: no quiz)",
)
async def quiz_state(request: Request, services: ServicesDep, ctx: TraceDep) -> Response:
    """Every trace answers (a link from any trace's summary leads here): one that is no quiz
    has no probe to spend and nothing to answer, and its probe and answer routes are a 404."""
    if ctx.spec.quiz is None:
        none = {"answered": False, "probes": {"used": [], "max": 0, "left": 0}, "class": False, "revealed": False}
        return json_response(request, none | {"quiz": False})
    learner = services.voters.of(request)
    state = (await services.quiz.refresh(ctx.spec.id, learner)).json(services.quiz.max_probes)
    revealed = not services.quiz.sealed(ctx.spec.id, learner) and not state["answered"]
    return json_response(request, state | {"class": is_class_quiz(ctx.spec.quiz), "revealed": revealed, "quiz": True})


@router.post(
    "/api/traces/{trace_id}/quiz/probe",
    response_model=ProbeAnswer,
    responses={**NOT_FOUND, **BAD_BODY, **PROBES_SPENT, **VOTERS_LIMITED, **PROBES_STORE_DOWN, **security.BODY_REFUSED},
    summary="The quiz: spend a probe on one step and get its gradient check",
)
async def probe_quiz(
    request: Request, services: ServicesDep, ctx: TraceDep, probe: QuizProbe, lang: LangDep
) -> Response:
    """Any step (forward, loss, backward, update): the probe buys the step's gradient check and,
    for a backward step, its comparison with the correct backward (GET .../diff). The probes
    are the learner's own (app.sessions.voters). Probing a step again, or after the answer, is free."""
    quiz_or_404(ctx)
    check_range_body(probe.step, len(ctx.trace.records))
    learner = services.voters.identify(request)
    try:
        state = await services.quiz.probe(ctx.spec.id, learner, client_address(request), probe.step)
    except quiz.ProbesSpent as exc:
        raise HTTPException(409, detail=exc.words(lang)) from None
    async with services.twin_room(ctx, probe.step, request):  # its check's float64 bytes (it may build the twin)
        check = await services.run(services.answers.check_of, ctx, probe.step)
    checked = gradcheck_json(check, ctx.spec.canonical["dtype"])
    payload = {"index": probe.step, "gradcheck": checked} | state.json(services.quiz.max_probes)
    return remember(json_response(request, json_safe(payload | {"voter": learner})), learner)


def check_range_body(step: int, n: int) -> None:
    if not 0 <= step < n:
        raise SpecError(("body", "step"), Said("error-quiz-step-range", last=str(n - 1), value=str(step)))


@router.get("/quiz", include_in_schema=False)
def start_quiz(request: Request) -> Response:
    """A new quiz: the spec of the query (the default model without one) with a fresh quiz
    seed; the fault it hides is resolved from the seed on the server only."""
    params = {k: v for k, v in request.query_params.items() if k not in ("quiz", "faults", "step")}
    params["quiz"] = str(new_quiz_seed())
    return RedirectResponse(f"/walk?{urlencode(params)}", status_code=303)
