"""The connections kept in reserve (issue 35, findings 2 and 3) against a real `xt serve` under
`ulimit -n 256` (macOS's default: 128 connections, 64 per address, 16 of them kept for the
presenter, /healthz and joins): clients at 127.0.0.2-127.0.0.5 (loopback, other addresses than
the class's 127.0.0.1) hold every connection they may with request bodies trickling in a byte at a
time, and idle sockets; meanwhile /healthz, a join and the presenter's move from 127.0.0.1 are
served, and the trickling bodies are answered 408. Every socket closes when the test ends."""

from __future__ import annotations

import asyncio
import http.client
import json

import pytest

from app.connections import Caps, raise_open_file_limit
from app.settings import Settings
from tests.helpers.aio import run_async
from tests.helpers.connections import HOST, close_all, open_from, request, xt_serve

pytestmark = pytest.mark.server  # a real server: one at a time

OPEN_FILES = 256
KEY = "rehearsal-admin-key-0123456789"
SPEC = {"model": "text", "text": "the cat sat on the mat."}
ATTACKERS = ("127.0.0.2", "127.0.0.3", "127.0.0.4")
BODY_TIMEOUT_S = 4


@pytest.fixture(autouse=True)
def _room_for_the_client():
    if raise_open_file_limit(2048) < 1024:
        pytest.skip("this test process may not open the sockets the hostile clients need")


def slow_post(port: int) -> bytes:
    head = f"POST /api/traces HTTP/1.1\r\nHost: {HOST}:{port}\r\nContent-Type: application/json\r\n"
    return (head + "Content-Length: 4000\r\n\r\n").encode()


async def hold_from(port: int, source: str, first: bytes | None, n: int) -> tuple[list, dict]:
    """n connections from `source`, each sending `first` (a request head, or nothing): the ones
    the server keeps open, and the statuses it answered the others with."""
    held, answered = [], {}
    for _ in range(n):
        pair, outcome = await open_from(port, None, source=source)
        if pair is None:
            answered[outcome] = answered.get(outcome, 0) + 1
            continue
        if first is not None:
            pair[1].write(first)
        held.append(pair)
    await asyncio.sleep(0.5)
    kept = []
    for reader, writer in held:
        try:
            line = await asyncio.wait_for(reader.readline(), 0.01)
        except TimeoutError:
            kept.append((reader, writer))
            continue
        except OSError:
            line = b"reset"
        status = int(line.split()[1]) if line.startswith(b"HTTP/1.1 ") else "closed"
        answered[status] = answered.get(status, 0) + 1
        writer.transport.abort()
    return kept, answered


async def trickle(pairs: list, stop: asyncio.Event) -> None:
    """A body byte every half second on every held connection, until `stop`."""
    while not stop.is_set():
        for _, writer in pairs:
            if not writer.transport.is_closing():
                writer.write(b" ")
        await asyncio.sleep(0.5)


async def statuses_after(pairs: list, within_s: float) -> dict:
    """What the server answered each held connection (its status line), or how it ended."""

    async def one(reader) -> int | str:
        try:
            line = await asyncio.wait_for(reader.readline(), within_s)
        except TimeoutError:
            return "still open"
        except OSError:
            return "reset"
        return int(line.split()[1]) if line.startswith(b"HTTP/1.1 ") else "closed"

    counts: dict = {}
    for outcome in await asyncio.gather(*(one(reader) for reader, _ in pairs)):
        counts[outcome] = counts.get(outcome, 0) + 1
    return counts


def the_class_is_served(port: int, code: str, key: str, step: int) -> list[str]:
    """/healthz, a join and the presenter's move from 127.0.0.1: what failed."""
    failures = []
    tries = [
        ("healthz", "GET", "/healthz", None, {}, 200),
        ("join", "GET", f"/join/{code}", None, {}, 303),
        (
            "move",
            "POST",
            f"/api/sessions/{code}/state",
            {"step": step},
            {"X-Admin-Key": KEY, "X-Presenter-Key": key},
            200,
        ),
    ]
    for what, method, path, body, headers, expected in tries:
        try:
            status, payload, _ = request(port, method, path, body=body, headers=headers)
        except (OSError, http.client.HTTPException) as exc:
            failures.append(f"{what}: {type(exc).__name__}")
            continue
        if status != expected:
            failures.append(f"{what}: {status} {payload[:100]!r}")
    return failures


def test_slow_bodies_and_addresses_at_their_caps_leave_the_reserve_to_the_class():
    caps = Caps.of(Settings(), OPEN_FILES)
    assert (caps.connections, caps.client_connections, caps.reserve) == (128, 64, 16)
    env = {"XT_ADMIN_KEY": KEY, "XT_BODY_TIMEOUT_SECONDS": str(BODY_TIMEOUT_S), "XT_HEADER_TIMEOUT_SECONDS": "30"}
    with xt_serve(env, open_files=OPEN_FILES) as server:
        status, payload, _ = request(server.port, "POST", "/api/sessions", {"spec": SPEC}, {"X-Admin-Key": KEY})
        assert status == 201, payload
        code, key = json.loads(payload)["code"], json.loads(payload)["presenter_key"]

        async def scenario() -> dict:
            held, seen = [], {}
            stop = asyncio.Event()
            try:
                for source in ATTACKERS:  # slow bodies: every connection each address may hold
                    kept, answered = await hold_from(server.port, source, slow_post(server.port), 64)
                    held += kept
                    seen[source] = (len(kept), answered)
                trickling = asyncio.create_task(trickle(held, stop))
                # idle sockets from one more address: into the reserve, where they cannot stay
                idle, _ = await hold_from(server.port, "127.0.0.5", None, 40)
                seen["while held"] = [
                    await asyncio.to_thread(the_class_is_served, server.port, code, key, step) for step in (1, 2, 3)
                ]
                seen["idle kept"] = len(idle)
                close_all(idle)
                stop.set()
                await trickling
                seen["slow bodies"] = await statuses_after(held, BODY_TIMEOUT_S + 20)
            finally:
                stop.set()
                close_all(held)
            return seen

        seen = run_async(scenario())
    general = caps.connections - caps.reserve
    # the first address holds its share, the second the rest of the general connections; the
    # reserve turned their further requests away (503), and the third got none
    assert seen["127.0.0.2"][0] == caps.client_connections, seen
    assert seen["127.0.0.3"][0] == general - caps.client_connections, seen
    assert seen["127.0.0.4"][0] == 0 and seen["127.0.0.4"][1] == {503: 64}, seen
    assert seen["while held"] == [[], [], []], seen
    # every trickling body ended by the server: answered 408, or reset when the close found the
    # client's trickled bytes unread (the kernel then drops the answer); none kept open
    slow = seen["slow bodies"]
    assert set(slow) <= {408, "reset"} and sum(slow.values()) == general and slow.get(408, 0) > 0, seen
