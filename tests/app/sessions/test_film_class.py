"""A class on a recorded run's film (issue 39, docs/lessons.md "A class on the film"): the presenter
opens it with `run` in place of `spec`, scrubs (`film_step`), opens one of the run's steps into the
walkthrough (`run_step`: the class's walkthrough is then that step's, its moves checked against it)
and goes back to the film (`run_step` null); a student who joins lands on the film and their stream
carries each move. In process over ASGI with the stream held open, on the in-process store and on
Redis (the same scenario); every refusal names its field."""

from __future__ import annotations

import asyncio
import json

import pytest

from app.main import create_app
from app.settings import Settings
from tests.app.sessions.conftest import SPEC
from tests.helpers.aio import run_async
from tests.helpers.asgi import Asgi, seat_of
from tests.helpers.client import TEST_HOSTS, make_client
from tests.helpers.export import FILM_RUN, RUN_LESSON, RUN_LESSON_TOML
from tests.helpers.film import small_plan
from xt_core.film.record import record

PRESENTER_AT, STUDENT_AT = "10.40.0.1", "10.40.0.2"
STEPS = 24  # small_plan's


@pytest.fixture(scope="module")
def runs_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("runs")
    record(small_plan(), folder / "small")
    return folder


def _states(chunks: list[bytes]) -> list[dict]:
    """The states a stream has sent so far (its keep-alives and `ended` left out)."""
    events = b"".join(chunks).decode().replace("\r\n", "\n").split("\n\n")
    datas = [[line[5:].strip() for line in e.split("\n") if line.startswith("data:")] for e in events]
    return [json.loads("\n".join(data)) for data in datas if data and data != ["{}"]]


async def _seen(chunks: list[bytes], predicate) -> dict:
    """The first state the stream sent that matches (a deadline for a lost state, not a measure)."""
    for _ in range(1000):
        matching = [state for state in _states(chunks) if predicate(state)]
        if matching:
            return matching[0]
        await asyncio.sleep(0.01)
    raise AssertionError(f"no such state: {[(s['film_step'], s['run_step']) for s in _states(chunks)]}")


async def _scenario(app) -> dict:
    asgi = Asgi(app)
    try:
        status, _, body = await asgi.call("POST", "/api/sessions", PRESENTER_AT, body={"run": "small", "film_step": 3})
        assert status == 201, body
        created = json.loads(body)
        code, key = created["code"], {"X-Presenter-Key": created["presenter_key"]}
        assert created["film_url"] == f"/film?run=small&step=3#present={code}" and created["spec"] is None

        status, headers, _ = await asgi.call("GET", f"/join/{code}", STUDENT_AT)
        location = dict(headers)["location"]
        assert status == 303 and location == f"/film?run=small&step=3&lang=en#follow={code}"
        seat = {"X-Seat": seat_of(headers)}
        assert (await asgi.call("GET", f"/api/sessions/{code}/events", STUDENT_AT, seat))[0] == 200
        stream = asgi.streams[-1]
        first = await _seen(stream, lambda s: True)
        assert (first["run"], first["film_step"], first["run_step"], first["spec"]) == ("small", 3, None, None)

        async def move(body: dict, headers=key) -> tuple[int, dict]:
            status, _, answer = await asgi.call("POST", f"/api/sessions/{code}/state", PRESENTER_AT, headers, body)
            return status, json.loads(answer)

        assert (await move({"film_step": 9}, {"X-Presenter-Key": "not-the-key"}))[0] == 403
        for step in (4, 11, 17):  # a drag: each move reaches the student, the last one last
            assert (await move({"film_step": step}))[0] == 200
        assert (await _seen(stream, lambda s: s["film_step"] == 17))["version"] == 3
        assert 9 not in [s["film_step"] for s in _states(stream)]

        status, opened = await move({"run_step": 16, "step": 5})
        assert status == 200, opened
        assert (opened["spec"]["run"], opened["spec"]["run_step"], opened["step"]) == ("small", 16, 5)
        assert opened["film_step"] == 16 and opened["trace_id"] == opened["walkthrough"]
        walked = await _seen(stream, lambda s: s["run_step"] == 16)
        assert (walked["step"], walked["trace_id"]) == (5, opened["trace_id"])
        assert (await move({"step": 6}))[0] == 200

        status, back = await move({"run_step": None, "film_step": 20})
        assert status == 200 and (back["spec"], back["step"], back["film_step"]) == (None, 0, 20)
        await _seen(stream, lambda s: s["run_step"] is None and s["film_step"] == 20)
        status, _, answer = await asgi.call("GET", f"/api/sessions/{code}", PRESENTER_AT, key)
        return json.loads(answer)
    finally:
        await asgi.close()


def test_a_student_follows_the_film_in_process(runs_dir):
    app = create_app(Settings(allowed_hosts=TEST_HOSTS, runs_dir=runs_dir), warm_up=False)
    assert run_async(_scenario(app))["followers"] == 1


def test_a_student_follows_the_film_through_redis(runs_dir, redis_url):
    app = create_app(Settings(allowed_hosts=TEST_HOSTS, runs_dir=runs_dir, redis_url=redis_url), warm_up=False)
    assert run_async(_scenario(app))["followers"] == 1


@pytest.fixture(scope="module")
def client(runs_dir):
    with make_client(runs_dir=runs_dir, join_failures_per_minute=1000) as c:
        yield c


@pytest.mark.parametrize(
    ("body", "loc", "words"),
    [
        ({"run": "nope"}, ["body", "run"], "no recorded run named nope on this server (its runs: small)"),
        ({"run": "small", "film_step": STEPS}, ["body", "film_step"], "between 0 and 23"),
        ({"run": "small", "spec": SPEC}, ["body", "run"], "walkthrough (spec) or a recorded run's film (run)"),
        ({}, ["body", "spec"], "give one of them"),
        ({"run": "small", "lesson": "forward-in-ten"}, ["body", "lesson"], "not about the run small"),
    ],
)
def test_a_bad_film_class_is_422_naming_the_field(client, body, loc, words):
    response = client.post("/api/sessions", json=body)
    assert response.status_code == 422, response.text
    assert response.json()["detail"][0]["loc"] == loc and words in response.json()["detail"][0]["msg"]


@pytest.mark.parametrize(
    ("film", "body", "loc", "words"),
    [
        (True, {"film_step": STEPS}, ["body", "film_step"], "between 0 and 23 (the steps of the run small), got 24"),
        (True, {"film_step": None}, ["body", "film_step"], "cannot be null"),
        (True, {"run_step": STEPS}, ["body", "run_step"], "between 0 and 23 (the steps of the run small), got 24"),
        (True, {"step": 1}, ["body", "step"], "this class is on its run's film"),
        (True, {"jacobian": {"layer": 0, "head": 0, "pos": 0}}, ["body", "jacobian"], "on its run's film"),
        (True, {"run_step": 2, "step": 999}, ["body", "step"], "the trace's steps"),
        (False, {"film_step": 1}, ["body", "film_step"], "follows a walkthrough, not a recorded run's film"),
        (False, {"run_step": 1}, ["body", "run_step"], "follows a walkthrough, not a recorded run's film"),
    ],
)
def test_a_bad_film_move_is_422_naming_the_field(client, film, body, loc, words):
    created = client.post("/api/sessions", json={"run": "small"} if film else {"spec": SPEC}).json()
    response = client.post(
        f"/api/sessions/{created['code']}/state", json=body, headers={"X-Presenter-Key": created["presenter_key"]}
    )
    assert response.status_code == 422, response.text
    assert response.json()["detail"][0]["loc"] == loc and words in response.json()["detail"][0]["msg"]
    state = client.get(f"/api/sessions/{created['code']}").json()
    assert state["version"] == 0  # nothing moved


@pytest.fixture(scope="module")
def lesson_client(runs_dir, tmp_path_factory):
    """A server whose one lesson is about the run small (tests/helpers/export.py's tiny run lesson:
    film 3, run step 8's embedding, film 12)."""
    lessons = tmp_path_factory.mktemp("lessons")
    (lessons / f"{RUN_LESSON}.toml").write_text(RUN_LESSON_TOML.replace(f'run = "{FILM_RUN}"', 'run = "small"'))
    with make_client(runs_dir=runs_dir, lessons_dir=lessons) as c:
        yield c


def test_a_film_class_plays_a_lesson_about_its_run_stop_by_stop(lesson_client):
    """The presenter's page plays the lesson (film_url: #lesson=NAME), each stop a move of the class:
    a film stop on the film, a walkthrough stop in its run step, back; a stop past the lesson's is 422."""
    client = lesson_client
    created = client.post("/api/sessions", json={"run": "small", "film_step": 3, "lesson": RUN_LESSON}).json()
    code, key = created["code"], {"X-Presenter-Key": created["presenter_key"]}
    assert created["film_url"] == f"/film?run=small&step=3#lesson={RUN_LESSON}&present={code}"

    def move(body: dict) -> dict:
        response = client.post(f"/api/sessions/{code}/state", json=body, headers=key)
        assert response.status_code == 200, response.text
        return response.json()

    first = client.get(f"/api/sessions/{code}").json()
    assert (first["lesson"], first["lesson_step"], first["film_step"]) == (RUN_LESSON, 0, 3)
    stop = client.get(f"/api/lessons/{RUN_LESSON}").json()["steps"][1]
    walked = move({"lesson": RUN_LESSON, "lesson_step": 1, "run_step": stop["run_step"], "step": stop["index"]})
    assert (walked["lesson_step"], walked["run_step"], walked["step"]) == (1, 8, stop["index"])
    assert walked["trace_id"] == stop["trace_id"]
    back = move({"run_step": None, "film_step": 12, "lesson_step": 2})
    assert (back["lesson"], back["lesson_step"], back["spec"], back["film_step"]) == (RUN_LESSON, 2, None, 12)
    past = client.post(f"/api/sessions/{code}/state", json={"lesson_step": 3}, headers=key)
    assert past.status_code == 422 and past.json()["detail"][0]["loc"] == ["body", "lesson_step"]
    assert move({"lesson": None})["lesson_step"] is None
