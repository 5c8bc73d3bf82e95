"""One vote per student (issue 35, finding 6): the poll counts seats (app.sessions.voters), each
voting only while a stream of it follows the class. The app is driven in process over ASGI with
real event streams held open (each a task whose client leaves when the test says), so the stream
caps (app.connections.StreamCap), the seat cookies and the poll are the server's own."""

from __future__ import annotations

import json

import pytest
from fastapi import HTTPException

from app.main import create_app
from app.sessions.service import Sessions
from app.settings import Settings
from app.spec import TraceSpec, resolve
from tests.app.sessions.conftest import QUIZ_SPEC
from tests.helpers.aio import run_async
from tests.helpers.asgi import Asgi, open_poll, poll_of, seat_of, student
from tests.helpers.client import TEST_HOSTS

NAT = "10.20.0.1"  # a classroom behind one router: every student the same address


def test_a_nat_class_answers_after_one_classmate_used_up_the_address():
    """30 students behind one address (the stream cap raised for them, as docs/lessons.md says); one
    of them first spends every learner identity the address may have (cookie-less answers: the
    70th is a 429) and answers without following (409). Then the 29 others join, follow and
    answer: every answer counts (before: 0 of 5 counted, each a 429)."""
    app = create_app(Settings(allowed_hosts=TEST_HOSTS, max_client_streams=64), warm_up=False)

    async def run():
        asgi = Asgi(app)
        try:
            code, presenter = await open_poll(asgi, QUIZ_SPEC)
            spent = [
                (await asgi.call("POST", f"/api/sessions/{code}/answers", NAT, body={"step": 49}))[0] for _ in range(70)
            ]
            answers = [await student(asgi, code, NAT, 50) for _ in range(29)]
            return spent, answers, await poll_of(asgi, code, presenter)
        finally:
            await asgi.close()

    spent, answers, poll = run_async(run())
    assert set(spent) == {409, 429} and spent[-1] == 429, spent  # identities used up; none voted
    assert answers == [200] * 29
    assert poll["answers"] == 29 and poll["counts"] == {"50": 29} and poll["by_address"] == {NAT: 29}


def test_one_client_cannot_cast_40_votes_in_a_class_of_30():
    """One client at its own address opens 40 streams (a seat each) and answers with every seat it
    got: it votes at most once per stream it may hold (16), and the presenter sees that address's
    16 beside the class's 30 at 30 addresses."""
    app = create_app(Settings(allowed_hosts=TEST_HOSTS), warm_up=False)
    cheat = "10.21.0.1"

    async def run():
        asgi = Asgi(app)
        try:
            code, presenter = await open_poll(asgi, QUIZ_SPEC)
            class_answers = [await student(asgi, code, f"10.22.0.{i + 1}", 50) for i in range(30)]
            seats, statuses = [], []
            for _ in range(40):
                status, headers, _ = await asgi.call("GET", f"/api/sessions/{code}/events", cheat)
                statuses.append(status)
                seats.append(seat_of(headers))
            votes = [
                (await asgi.call("POST", f"/api/sessions/{code}/answers", cheat, {"X-Seat": seat}, {"step": 49}))[0]
                for seat in seats
                if seat
            ]
            return class_answers, statuses, votes, await poll_of(asgi, code, presenter)
        finally:
            await asgi.close()

    class_answers, streams, votes, poll = run_async(run())
    caps = app.state.caps
    assert class_answers == [200] * 30
    assert streams == [200] * caps.client_streams + [429] * (40 - caps.client_streams)
    assert votes == [200] * caps.client_streams
    assert poll["counts"] == {"49": caps.client_streams, "50": 30}
    assert next(iter(poll["by_address"].items())) == (cheat, caps.client_streams)


def test_a_seat_votes_only_while_it_follows_and_is_no_learner_identity():
    app = create_app(Settings(allowed_hosts=TEST_HOSTS), warm_up=False)

    async def run():
        asgi = Asgi(app)
        try:
            code, presenter = await open_poll(asgi, QUIZ_SPEC)
            _, headers, _ = await asgi.call("GET", f"/join/{code}", "10.23.0.1")
            seat = {"X-Seat": seat_of(headers)}
            before = (await asgi.call("POST", f"/api/sessions/{code}/answers", "10.23.0.1", seat, {"step": 49}))[0]
            await asgi.call("GET", f"/api/sessions/{code}/events", "10.23.0.1", seat)
            following = (await asgi.call("POST", f"/api/sessions/{code}/answers", "10.23.0.1", seat, {"step": 49}))[0]
            other_class, _ = await open_poll(asgi, QUIZ_SPEC)
            elsewhere = (
                await asgi.call("POST", f"/api/sessions/{other_class}/answers", "10.23.0.1", seat, {"step": 49})
            )[0]
            state = json.loads((await asgi.call("GET", f"/api/sessions/{code}", "10.23.0.1"))[2])
            return before, following, elsewhere, state, app.state.services.voters.valid(seat["X-Seat"])
        finally:
            await asgi.close()

    before, following, elsewhere, state, a_learner = run_async(run())
    assert (before, following) == (409, 200)
    assert elsewhere == 409  # a seat is one class's: elsewhere it is nobody, and follows nothing
    assert "by_address" not in state["poll"]  # the classmates' addresses stay with the presenter
    assert a_learner is False  # a seat buys no quiz probes


def test_a_vote_needs_a_live_stream_in_redis_too(redis_url):
    """The Redis store: a vote counts while its seat's stream follows (in any process), and the
    presenter's answers per address come from the store every worker shares."""

    async def run():
        sessions = Sessions(Settings(redis_url=redis_url))
        try:
            code, _ = await sessions.create(resolve(TraceSpec.model_validate(QUIZ_SPEC), Settings()), [], None, 0)
            fields = await sessions.store.load(code)
            with pytest.raises(HTTPException) as refused:
                await sessions.answer(fields, "seat a", "10.50.0.1", 49)  # no stream of it yet
            stream = sessions.events(fields, "seat a")
            await anext(stream)
            await sessions.answer(fields, "seat a", "10.50.0.1", 49)
            state = await sessions.compose(fields)
            await stream.aclose()
            return refused.value.status_code, state["poll"], await sessions.store.following(code, "seat a")
        finally:
            await sessions.close()

    refused, poll, still_following = run_async(run())
    assert refused == 409 and poll["counts"] == {"49": 1} and poll["by_address"] == {"10.50.0.1": 1}
    assert still_following is False
