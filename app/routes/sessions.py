# Over 350 lines: every classroom route (sessions, lessons, join pages) on one router, whose lifespan checks lessons.
"""Classroom sessions and lessons (contract in docs/api.md, "Sessions"): a presenter opens a
session, students follow it over Server-Sent Events, the presenter polls the class in the bug
lab; lessons are paths through a walkthrough. Thin: app.sessions holds the state and the
streams, app.lessons the lessons.

A class speaks its presenter's language, and each student may choose their own. The session
keeps the language the presenter's page spoke when it opened the class: the projected screen
and what the server writes into the shared state (the poll's question, the revealed fault's
description) are in it, and a joining student's page opens in it unless that student chose a
language before (the xt_lang cookie, which the header's switch sets). A Russian classroom's
phones set to English then show the teacher's Russian, the words the room hears; a foreign
student who taps the switch keeps their own language from then on, class after class. Nothing
the class shares depends on it: the presenter moves steps and lesson stops by index, and the
poll counts step indices, so every screen follows the same class in its own words (the revealed
fault also carries its `name`, which a page in another language words from its own catalogue).

The lessons are checked when the app starts (this router's lifespan): a bad file is logged with
every problem and left out. Sessions are built on first use (an app driven without its lifespan
works too) and their store is closed when the app stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated
from urllib.parse import urlencode

import anyio
import segno
from fastapi import APIRouter, Depends, FastAPI, Header, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.routing import APIRoute
from markupsafe import Markup
from sse_starlette import EventSourceResponse

from app import security, words
from app.buglab.views import revealed_faults
from app.deps import LangDep, ServicesDep, SettingsDep, WriterDep
from app.errors import BAD_BODY, BAD_FIELD, SpecError
from app.lessons import Catalogue, load_all
from app.routes.pages import templates
from app.schemas.sessions import Answered, Lesson, Lessons, SessionEnded, SessionOpened, SessionState
from app.sessions import film, rules
from app.sessions.service import Sessions
from app.sessions.state import AnswerBody, PollAction, SessionCreate, StateUpdate, closed_poll
from app.sessions.store import StoreUnavailable
from app.sessions.voters import client_address, remember, remember_seat, seated
from app.spec import resolve, spec_to_query
from app.spec.faults import new_class_quiz
from app.words import choice
from app.words.choice import chosen_language
from app.words.said import Said, in_language

log = logging.getLogger("xt.sessions")
REVEAL_WAIT_S = 30  # the gradient checks of every step before the reveal (tiny models: well under a second)


class StoreRoute(APIRoute):
    """A session store that does not answer (Redis down) is a 503, not a 500."""

    def get_route_handler(self):
        handler = super().get_route_handler()

        async def guarded(request: Request) -> Response:
            try:
                return await handler(request)
            except StoreUnavailable as exc:
                return JSONResponse({"detail": str(exc)}, status_code=503, headers={"Retry-After": "5"})

        return guarded


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    catalogue = await anyio.to_thread.run_sync(load_all, app.state.settings)
    for error in catalogue.errors:
        log.error("lesson left out: %s", error)
    try:
        yield
    finally:
        sessions = getattr(app.state, "sessions", None)
        if sessions is not None:
            await sessions.close()


router = APIRouter(tags=["sessions"], route_class=StoreRoute, lifespan=lifespan)


def _answers(*codes: int) -> dict:
    text = {
        403: "the X-Presenter-Key header is missing or wrong: only the presenter moves the class",
        404: "no session with this code (it ended or is mistyped), or no such lesson",
        409: "the poll is not open, this session's walkthrough plants no bug, the poll is full, or the "
        "answer's seat has no stream following the class",
        429: "too many unknown codes from this address this minute (guessing is rate-limited)",
        503: "max_sessions sessions are open, or the session store (Redis) does not answer",
    }
    schema = {"type": "object", "properties": {"detail": {"type": "string"}}}
    return (
        {c: {"description": text[c], "content": {"application/json": {"schema": schema}}} for c in codes}
        | BAD_FIELD
        | BAD_BODY
    )


def get_sessions(request: Request) -> Sessions:
    if getattr(request.app.state, "sessions", None) is None:
        quiz = request.app.state.services.quiz  # a reveal unseals the class's trace in this process
        request.app.state.sessions = Sessions(request.app.state.settings, on_reveal=quiz.reveal)
    return request.app.state.sessions


async def get_catalogue(request: Request) -> Catalogue:
    return await anyio.to_thread.run_sync(load_all, request.app.state.settings)  # cached after the first


SessionsDep = Annotated[Sessions, Depends(get_sessions)]
CatalogueDep = Annotated[Catalogue, Depends(get_catalogue)]
PresenterKey = Annotated[str | None, Header(alias="X-Presenter-Key", description="the key POST /api/sessions gave")]


def _client(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def join_url(request: Request, code: str) -> str:
    base = request.app.state.settings.public_url or str(request.base_url)
    return f"{base.rstrip('/')}/join/{code}"


# ---------------------------------------------------------------------- sessions


@router.post(
    "/api/sessions",
    status_code=201,
    response_model=SessionOpened,
    responses=_answers(503) | security.WRITE_REFUSED | security.BODY_REFUSED,
    summary="Open a classroom session",
)
async def create_session(
    request: Request,
    _writer: WriterDep,  # presenting needs the admin key on a server bound beyond loopback
    body: SessionCreate,
    services: ServicesDep,
    settings: SettingsDep,
    sessions: SessionsDep,
    catalogue: CatalogueDep,
    lang: LangDep,
) -> JSONResponse:
    """`lang` (the presenter's page's language) becomes the class's. A quiz's session draws its own quiz number (a class quiz: app.spec.faults): its hidden
    fault is the class's own, and the answer's `spec` and `walk_url` are the class's walkthrough.
    With `run` in place of `spec`, a film class (app.sessions.film): `film_url` is the presenter's page
    (with `lesson`: playing it, from its first film stop, so the class follows the lesson's stops)."""
    if (body.spec is None) == (body.run is None):
        raise SpecError(("body", "spec" if body.spec is None else "run"), Said("error-class-spec-or-run"))
    if body.run is not None:
        return await _create_film(request, body, services, settings, sessions, catalogue, lang)
    spec = resolve(body.spec, settings)
    if spec.quiz is not None:
        spec = resolve(body.spec.model_copy(update={"quiz": new_class_quiz()}), settings)
    lesson = None
    if body.lesson is not None:
        lesson = catalogue.lessons.get(body.lesson)
        if lesson is None:
            raise SpecError(("body", "lesson"), Said("error-unknown-lesson", lesson=repr(body.lesson)))
        if lesson.run is not None:  # its stops are on several pages; a class follows one walkthrough
            raise SpecError(("body", "lesson"), Said("lesson-run-no-class", lesson=repr(body.lesson)))
        if rules.walkthrough_id(lesson.spec) != rules.walkthrough_id(spec):
            raise SpecError(("body", "lesson"), Said("error-lesson-other-spec", lesson=repr(body.lesson)))
    trace = await services.build(spec, request)  # admitted, as every trace build
    first = lesson.steps[0]["index"] if lesson else 0
    code, key = await sessions.create(spec, trace.records, body.lesson, first, lang)
    answer = {"code": code, "join_url": join_url(request, code), "presenter_key": key, "spec": spec.canonical}
    walk = _walk_url(spec_to_query(spec.canonical), first, f"present={code}")
    return JSONResponse(answer | {"trace_id": spec.id, "walk_url": walk}, status_code=201)


async def _create_film(request, body: SessionCreate, services, settings, sessions, catalogue, lang) -> JSONResponse:
    steps = await film.film_of(services, settings, body.run, body.film_step)
    if body.lesson is not None:
        rules.check_lesson(body.lesson, {"run": body.run}, catalogue.lessons)
    code, key = await sessions.create_film(body.run, steps, body.film_step, body.lesson, lang)
    playing = {"lesson": body.lesson} if body.lesson is not None else {}  # the presenter's film plays it
    page = f"/film?{urlencode({'run': body.run, 'step': str(body.film_step)})}#{urlencode(playing | {'present': code})}"
    answer = {"code": code, "join_url": join_url(request, code), "presenter_key": key}
    return JSONResponse(answer | {"spec": None, "trace_id": None, "walk_url": None, "film_url": page}, status_code=201)


async def _session(request: Request, sessions: Sessions, code: str) -> dict:
    return await sessions.find(code, _client(request))


@router.get(
    "/api/sessions/{code}",
    response_model=SessionState,
    response_model_exclude_unset=True,  # a student's state has no `counts` before the reveal
    responses=_answers(404, 429),
    summary="A session's state (never its key)",
)
async def get_session(request: Request, code: str, sessions: SessionsDep, key: PresenterKey = None) -> dict:
    """With the presenter's key the poll carries its histogram (`counts`) before the reveal too."""
    fields = await _session(request, sessions, code)
    return await sessions.view(fields, sessions.is_presenter(fields, key))


EVENTS = {
    200: {"description": "text/event-stream: each event's data is the state", "content": {"text/event-stream": {}}}
}


@router.get(
    "/api/sessions/{code}/events",
    response_class=Response,  # text/event-stream only (EVENTS), not the default JSON
    responses={**EVENTS, **_answers(404, 429)},
    summary="The session's states as they change (SSE)",
)
async def session_events(
    request: Request, code: str, sessions: SessionsDep, services: ServicesDep, key: PresenterKey = None
) -> Response:
    """A student's stream counts as one follower per seat in the class (app.sessions.voters: the
    join gave it, else this stream does, as the `xt_seat` cookie); a seat votes while it follows."""
    fields = await _session(request, sessions, code)
    presenter = sessions.is_presenter(fields, key)
    seat = None if presenter else services.voters.seat_of(request, fields["code"])
    new_seat = None if presenter or seat else services.voters.new_seat(fields["code"])
    follower = None if presenter else seated(seat or new_seat)
    stream = sessions.events(fields, follower)
    # sse-starlette's own ping is a fallback: the stream sends its keep-alive every sse_ping_seconds
    response = EventSourceResponse(
        stream, ping=4 * sessions.settings.sse_ping_seconds, headers={"Cache-Control": "no-store"}
    )
    return remember_seat(response, fields["code"], new_seat) if new_seat else response


@router.post(
    "/api/sessions/{code}/state",
    response_model=SessionState,
    response_model_exclude_unset=True,
    responses=_answers(403, 404, 429) | security.BODY_REFUSED,
    summary="Move the class (presenter)",
)
async def set_state(
    request: Request,
    code: str,
    update: StateUpdate,
    sessions: SessionsDep,
    catalogue: CatalogueDep,
    services: ServicesDep,
    settings: SettingsDep,
    key: PresenterKey = None,
) -> dict:
    """A film class's `run_step` opens the run's step into the walkthrough (its trace built, as every
    build): `step`, `jacobian` and `head` given with it are checked against that walkthrough."""
    fields = await _session(request, sessions, code)
    sessions.require_presenter(fields, key)
    opened = {}
    if "run_step" in update.model_fields_set:
        opened = await film.opened_from_film(request, services, settings, fields, update.run_step)
    changes = rules.checked_changes(update, fields | opened, catalogue.lessons)
    return await sessions.change(fields, opened | changes)


@router.delete(
    "/api/sessions/{code}",
    response_model=SessionEnded,
    responses=_answers(403, 404, 429),
    summary="End the class (presenter)",
)
async def end_session(request: Request, code: str, sessions: SessionsDep, key: PresenterKey = None) -> dict:
    """Every follower's stream sends `event: ended` (their pages say "Class ended" and are
    theirs again); the code is gone: a later move, answer or join is a 404."""
    fields = await _session(request, sessions, code)
    sessions.require_presenter(fields, key)
    await sessions.end(fields)
    return {"code": fields["code"], "ended": True}


def _conflict(detail: str) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=409)


async def _reveal(services, settings, fields: dict) -> dict:
    spec = resolve(SessionCreate.model_validate({"spec": fields["spec"]}).spec, settings)
    ctx = await services.context(spec)  # admitted, as every trace build
    faults = revealed_faults(ctx, fields.get("lang", words.DEFAULT))
    del ctx  # not kept while the checks job waits for its room (it lets its own go: app.traces.room)
    services.quiz.reveal(spec.id)  # every learner of the class's trace sees every verdict
    job = await services.checks_job(spec.id)  # holding its room, as every check job
    # past the wait, reveal what is known: the fault and its step (first_failing may be None)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(job.finished)), REVEAL_WAIT_S)
    return rules.reveal(faults, job)


@router.post(
    "/api/sessions/{code}/poll",
    response_model=SessionState,
    responses=_answers(403, 404, 409, 429) | security.BODY_REFUSED,
    summary="Open, close or reveal the bug hunt (presenter)",
)
async def set_poll(
    request: Request,
    code: str,
    body: PollAction,
    services: ServicesDep,
    settings: SettingsDep,
    sessions: SessionsDep,
    key: PresenterKey = None,
) -> Response:
    fields = await _session(request, sessions, code)
    sessions.require_presenter(fields, key)
    if not fields["buglab"]:
        return _conflict(in_language(Said("error-poll-no-bug"), chosen_language(request)))
    poll = dict(fields["poll"])
    if body.action == "open":
        await sessions.clear_answers(fields)
        poll = {**closed_poll(fields.get("lang", words.DEFAULT)), "status": "open"}
    elif body.action == "close":
        poll["status"] = "closed" if poll["status"] != "revealed" else "revealed"
    else:
        poll = {**poll, "status": "revealed", "reveal": await _reveal(services, settings, fields)}
    return JSONResponse(await sessions.change(fields, {"poll": poll}))


@router.post(
    "/api/sessions/{code}/answers",
    response_model=Answered,
    responses=_answers(404, 409, 429) | security.BODY_REFUSED,
    summary="A student's answer to the open poll",
)
async def answer_poll(
    request: Request, code: str, body: AnswerBody, sessions: SessionsDep, services: ServicesDep
) -> Response:
    """One answer per seat in the class (app.sessions.voters: the `xt_seat` cookie or X-Seat),
    else per learner identity (the cookie, or X-Voter from the answer's `voter`), counted only
    while a stream of it follows the class: answering again changes it."""
    fields = await _session(request, sessions, code)
    if fields["poll"]["status"] != "open":
        return _conflict(in_language(Said("error-poll-not-open"), chosen_language(request)))
    rules.check_answer(body.step, fields)
    seat = services.voters.seat_of(request, fields["code"])
    voter = seated(seat) if seat else services.voters.identify(request)
    await sessions.answer(fields, voter, client_address(request), body.step)
    identity = services.voters.of(request) or (None if seat else voter)
    answered = JSONResponse({"step": body.step, "voter": identity or seat})
    return remember(answered, identity) if identity else answered


SVG = {200: {"description": "the join URL as a QR code", "content": {"image/svg+xml": {}}}}


@router.get(
    "/api/sessions/{code}/qr.svg",
    response_class=Response,  # image/svg+xml only (SVG), not the default JSON
    responses={**SVG, **_answers(404, 429)},
    summary="The join URL as a QR code (SVG)",
)
async def session_qr(request: Request, code: str, sessions: SessionsDep) -> Response:
    fields = await _session(request, sessions, code)
    out = io.BytesIO()
    segno.make(join_url(request, fields["code"]), error="m").save(out, kind="svg", scale=8, border=2, xmldecl=False)
    return Response(out.getvalue(), media_type="image/svg+xml", headers={"Cache-Control": "no-store"})


# ---------------------------------------------------------------------- lessons


def _with_walkthrough(lesson, shown: dict) -> dict:
    """A lesson's JSON with the walkthrough id a class's quiz of it shares (rules.walkthrough_id)."""
    return shown | {"walkthrough": rules.walkthrough_id(lesson.spec)}


@router.get("/api/lessons", response_model=Lessons, summary="The lessons: paths of key steps through a walkthrough")
async def list_lessons(catalogue: CatalogueDep, lang: LangDep) -> dict:
    """Each lesson's title and summary in the request's language when the lesson has it (`lang`:
    the language they are in)."""
    return {"lessons": [_with_walkthrough(lesson, lesson.brief(lang)) for lesson in catalogue.lessons.values()]}


@router.get(
    "/api/lessons/{name}",
    response_model=Lesson,
    responses=_answers(404),
    summary="One lesson: its steps, takeaways, narration, annotations",
)
async def get_lesson(name: str, catalogue: CatalogueDep, lang: LangDep) -> Response:
    """The words (takeaways, narration, marks, claims) in the request's language when the lesson has it."""
    lesson = catalogue.lessons.get(name)
    if lesson is None:
        return JSONResponse({"detail": words.t(lang, "error-no-lesson", lesson=repr(name))}, status_code=404)
    return JSONResponse(_with_walkthrough(lesson, lesson.json(lang)))


def _walk_url(query: dict, step: int, fragment: str) -> str:
    """The walk page on step index `step`: its URL carries the number people read (index + 1)."""
    return f"/walk?{urlencode(query | {'step': str(step + 1)})}#{fragment}"


@router.get("/lessons/{name}", include_in_schema=False)
async def play_lesson(request: Request, name: str, catalogue: CatalogueDep, lang: LangDep) -> Response:
    """The walk page on the lesson's first stop; a ?lang= link keeps its language."""
    lesson = catalogue.lessons.get(name)
    if lesson is None:
        return JSONResponse({"detail": words.t(lang, "error-no-lesson-short", lesson=repr(name))}, status_code=404)
    asked = choice.asked_language(request)
    if lesson.run is not None:  # a recorded run's lesson: its first stop's page (the film, or a run step)
        return RedirectResponse(lesson.start_url(asked), 303)
    query = spec_to_query(lesson.spec.canonical) | ({choice.QUERY_KEY: asked} if asked else {})
    return RedirectResponse(_walk_url(query, lesson.steps[0]["index"], f"lesson={name}"), 303)


# ---------------------------------------------------------------------- the students' way in


def _join_page(request: Request, status: int, error: str = "", code: str = "") -> Response:
    page = templates(request.app.state.settings.templates_dir)
    return page.TemplateResponse(request, "join.html", {"error": error, "code": code}, status_code=status)


def _join_error(request: Request, exc: HTTPException, code: str) -> str | Markup:
    """Why a code does not join, in the page's language (a store that does not answer: its own
    English words, marked so)."""
    lang = choice.chosen_language(request)
    if exc.status_code == 404:
        return words.t(lang, "class-join-unknown", code=code)
    if exc.status_code == 429:
        return words.t(lang, "class-join-too-many", limit=request.app.state.settings.join_failures_per_minute)
    return Markup('<span lang="en">{}</span>').format(exc.detail) if lang != "en" else str(exc.detail)


@router.get("/join", response_class=HTMLResponse, include_in_schema=False)
async def join_form(request: Request, code: str = "") -> Response:
    if code:
        return RedirectResponse(f"/join/{code.strip()[:12]}", 303)
    return _join_page(request, 200)


@router.get("/join/{code}", response_class=HTMLResponse, include_in_schema=False)
async def join(request: Request, code: str, sessions: SessionsDep, services: ServicesDep) -> Response:
    """A student's way in: the walk page of the session's spec (a film class on its film: the film),
    following the presenter, with a
    learner identity if the browser has none (past the address's bound: none, the page works)."""
    try:
        fields = await _session(request, sessions, code)
    except HTTPException as exc:
        return _join_page(request, exc.status_code, _join_error(request, exc, code[:12]), code[:12])
    language = {}
    if request.cookies.get(choice.COOKIE) is None and not choice.asked_language(request):
        language = {choice.QUERY_KEY: fields.get("lang", words.DEFAULT)}  # the class's, unless they chose
    elif choice.asked_language(request):
        language = {choice.QUERY_KEY: choice.asked_language(request)}
    if fields["spec"] is None:  # a film class on its film
        query = {"run": fields["run"], "step": str(fields["film_step"])} | language
        page = f"/film?{urlencode(query)}#follow={fields['code']}"
    else:
        page = _walk_url(spec_to_query(fields["spec"]) | language, fields["step"], f"follow={fields['code']}")
    response = RedirectResponse(page, 303)
    if services.voters.seat_of(request, fields["code"]) is None:
        remember_seat(response, fields["code"], services.voters.new_seat(fields["code"]))
    if services.voters.of(request) is None:
        with contextlib.suppress(HTTPException):
            remember(response, services.voters.issue(client_address(request)))
    return response
