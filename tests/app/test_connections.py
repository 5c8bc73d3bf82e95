"""Connections bounded (issue 24, finding 3): a real `xt serve` under `ulimit -n 1024` (a laptop's
default), one hostile client at 127.0.0.2 (loopback, but another address than the class's) opening
1,100 event streams and then 1,100 idle sockets, while /healthz, the presenter's move and a new
join from 127.0.0.1 are served. Every loop is bounded and every socket closes when the test ends.

The caps come from the open-file limit (app.connections.Caps): past its share a client's
connection or stream is a 429 with Retry-After, never a connection dropped for everyone else;
request headers that do not arrive in time close the connection (XT_HEADER_TIMEOUT_SECONDS)."""

from __future__ import annotations

import asyncio

import pytest

from app.connections import FD_RESERVE, Caps, raise_open_file_limit
from app.settings import Settings
from tests.helpers.aio import run_async
from tests.helpers.connections import (
    HOST,
    OPEN_FILES,
    class_is_served,
    close_all,
    hold,
    hostile_client,
    open_from,
    open_session,
    xt_serve,
)
from tests.helpers.server import wait_ready

pytestmark = pytest.mark.server  # real servers holding many sockets: one at a time

ATTEMPTS = 1_100
HEADER_TIMEOUT_S = 2.0


@pytest.fixture(autouse=True)
def _room_for_the_client():
    """The client side holds up to 2 x ATTEMPTS sockets itself."""
    if raise_open_file_limit(4 * ATTEMPTS) < 2 * ATTEMPTS + 200:
        pytest.skip("this test process may not open the sockets the hostile client needs")


def _served(outcome: dict) -> list[float]:
    assert not outcome["failures"], outcome["failures"]
    return outcome["healthz_ms"]


def test_one_client_cannot_take_the_class_down():
    caps = Caps.of(Settings(), OPEN_FILES)
    assert caps.connections == OPEN_FILES - FD_RESERVE and caps.client_connections < caps.connections
    with xt_serve({"XT_HEADER_TIMEOUT_SECONDS": str(HEADER_TIMEOUT_S)}) as server:
        code, key = open_session(server.port)
        _served(class_is_served(server.port, code, key, 1))
        seen = run_async(hostile_client(server.port, code, key, ATTEMPTS, HEADER_TIMEOUT_S))
        assert seen["streams_held"] == caps.client_streams, seen["stream_outcomes"]
        # each stream past the client's share answered 429, none dropped
        assert seen["stream_outcomes"] == {200: caps.client_streams, 429: ATTEMPTS - caps.client_streams}
        # the idle sockets kept: the client's share of connections less its streams; closed in time
        assert seen["idle_kept"] == caps.client_connections - caps.client_streams, seen["idle_outcomes"]
        assert seen["idle_closed_by_timeout"] == seen["idle_kept"]
        _served(seen["while_streams"]), _served(seen["while_idle"])  # every /healthz answered while held
        _served(class_is_served(server.port, code, key, 4))  # and after


def test_request_headers_that_never_finish_are_closed():
    """A request trickling in a byte at a time is closed at the header timeout (uvicorn alone
    keeps it open for as long as bytes come); one answered connection, kept alive, is closed too."""
    with xt_serve({"XT_HEADER_TIMEOUT_SECONDS": str(HEADER_TIMEOUT_S)}, open_files=4096) as server:
        request = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 200

        async def trickle() -> tuple[int, bytes]:
            """The bytes sent before the server closed the connection, and what it answered."""
            reader, writer = await asyncio.open_connection(HOST, server.port)
            sent = 0
            try:
                for byte in request:
                    writer.write(bytes([byte]))
                    await writer.drain()
                    sent += 1
                    await asyncio.sleep(0.05)
                    if reader.at_eof():
                        break
                return sent, await asyncio.wait_for(reader.read(), 30)  # a deadline for a hang
            except OSError:
                return sent, b""
            finally:
                writer.transport.abort()

        sent, answered = run_async(trickle())
        # closed by the timeout (10 s of bytes to go at 20 a second), never answered as a request
        assert sent < len(request) and b"200 OK" not in answered, (sent, answered[:200])


def test_past_the_total_a_connection_is_answered_503_but_the_reserve_serves_healthz():
    """Past the total (XT_MAX_CONNECTIONS: 8, 4 of them the reserve, all held by the hostile
    client's idle sockets), another address's request for anything but the presenter, /healthz
    or a join is answered 503; its /healthz takes the place of an idle socket in the reserve."""
    env = {"XT_MAX_CONNECTIONS": "8", "XT_HEADER_TIMEOUT_SECONDS": str(HEADER_TIMEOUT_S)}
    with xt_serve(env, open_files=4096) as server:

        async def scenario():
            idle, _ = await hold(server.port, None, 8)
            try:
                lessons = b"GET /api/lessons HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                refused, refused_status = await open_from(server.port, lessons, source=HOST)
                close_all([refused] if refused else [])
                healthz = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                served, served_status = await open_from(server.port, healthz, source=HOST)
                close_all([served] if served else [])
            finally:
                close_all(idle)
            return refused_status, served_status

        assert run_async(scenario()) == (503, 200)
        wait_ready(server, timeout=10)  # the held ones gone, it answers again
