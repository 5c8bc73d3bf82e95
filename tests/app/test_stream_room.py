"""Addresses at their stream shares cannot shut a new follower out (issue 35, finding 3: 45
addresses × 16 streams blocked every new follower): with the total reached, a newcomer takes the
place of the biggest holder's oldest stream, whose client is told it is over. In process, the
cap in front of a stand-in for the stream route that holds until its client leaves."""

from __future__ import annotations

import asyncio

from app.connections import Caps, StreamCap
from app.main import create_app
from app.settings import Settings
from tests.app.sessions.conftest import QUIZ_SPEC
from tests.helpers.aio import run_async
from tests.helpers.asgi import Asgi, open_poll
from tests.helpers.client import TEST_HOSTS

CAPS = Caps(connections=64, streams=16, client_connections=64, client_streams=4)


def test_a_newcomer_takes_the_place_of_the_biggest_holders_oldest_stream():
    async def run() -> dict:
        ended: list[str] = []

        async def stream_route(scope, receive, send):
            await send({"type": "http.response.start", "status": 200, "headers": []})
            while (await receive())["type"] != "http.disconnect":
                pass
            ended.append(scope["name"])

        cap = StreamCap(stream_route, CAPS)
        statuses: dict[str, int] = {}

        async def open_stream(address: str, name: str) -> None:
            scope = {"type": "http", "path": "/api/sessions/ABCDEFGHJK/events", "client": (address, 1), "name": name}
            scope |= {"method": "GET", "headers": [], "query_string": b""}

            async def send(message):
                if message["type"] == "http.response.start":
                    statuses[name] = message["status"]

            await cap(scope, asyncio.Event().wait, send)  # the client itself never leaves

        tasks = [asyncio.create_task(open_stream(f"10.40.0.{a}", f"{a}.{i}")) for a in range(1, 5) for i in range(4)]
        await asyncio.sleep(0.05)
        full = (cap.total, dict(cap.by_client))
        tasks += [asyncio.create_task(open_stream("10.40.1.1", "follower"))]
        await asyncio.sleep(0.05)
        tasks += [asyncio.create_task(open_stream("10.40.1.2", "presenter"))]
        await asyncio.sleep(0.05)
        # an address holding three cannot take a place from one holding four: the server is full
        tasks += [asyncio.create_task(open_stream("10.40.0.1", "greedy"))]
        await asyncio.sleep(0.05)
        after = (cap.total, dict(cap.by_client))
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return {"full": full, "after": after, "statuses": statuses, "ended": ended}

    seen = run_async(run())
    assert seen["full"][0] == CAPS.streams and set(seen["full"][1].values()) == {4}
    assert seen["statuses"]["follower"] == 200 and seen["statuses"]["presenter"] == 200
    assert seen["ended"] == ["1.0", "2.0"]  # the oldest streams of the biggest holders gave their places
    assert seen["statuses"]["greedy"] == 503 and seen["after"][0] == CAPS.streams


def test_the_class_stream_that_gave_its_place_ends():
    """The same with the app's own stream route: the oldest stream of the full address ends."""
    app = create_app(Settings(allowed_hosts=TEST_HOSTS, max_streams=4, max_client_streams=4), warm_up=False)

    async def run() -> tuple[list[int], list[bool]]:
        asgi = Asgi(app)
        try:
            code, _ = await open_poll(asgi, QUIZ_SPEC)
            opened = len(asgi.tasks)
            path = f"/api/sessions/{code}/events"
            statuses = [(await asgi.call("GET", path, "10.41.0.1"))[0] for _ in range(4)]
            statuses.append((await asgi.call("GET", path, "10.41.0.2"))[0])
            await asyncio.sleep(0.2)
            return statuses, [task.done() for task in asgi.tasks[opened:]]
        finally:
            await asgi.close()

    statuses, ended = run_async(run())
    assert statuses == [200] * 5 and ended == [True, False, False, False, False]
