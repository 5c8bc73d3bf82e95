"""Slow request bodies (issue 35, finding 2): uvicorn times out headers, never a body, so the app's
receive is paced (app/bodies.py). A fake clock and a controlled receive stand in for time and the
client: no assertion here depends on how fast this machine is. The same bound against a real
`xt serve` under `ulimit -n 256`: tests/app/test_reserve.py."""

from __future__ import annotations

import asyncio
import json

import pytest

from app.bodies import BodyDeadline, BodyTooSlow
from app.main import create_app
from app.settings import Settings
from tests.helpers.aio import run_async
from tests.helpers.client import TEST_HOSTS

SPEC = json.dumps({"model": "text", "text": "the cat sat on the mat."}).encode()


def _trickle(clock: list[float], step_s: float):
    """A client sending one byte per call, step_s of the fake clock apart."""

    async def receive():
        clock[0] += step_s
        return {"type": "http.request", "body": b"x", "more_body": True}

    return receive


def test_a_body_trickling_a_byte_every_two_seconds_is_cut_at_the_grace():
    clock = [0.0]
    paced = BodyDeadline(_trickle(clock, 2.0), grace_s=10.0, min_rate=4096, clock=lambda: clock[0])

    async def read_all() -> int:
        with pytest.raises(BodyTooSlow) as slow:
            for _ in range(100):
                await paced()
        assert slow.value.status_code == 408 and slow.value.headers["Connection"] == "close"
        return paced.received

    # bytes at 2, 4, ..., 12 s (the call begun at 10 s returns its byte); no call begins past the grace
    assert run_async(read_all()) == 6


def test_a_body_at_the_minimum_rate_keeps_coming():
    clock = [0.0]

    async def receive():
        clock[0] += 1.0
        return {"type": "http.request", "body": b"x" * 4096, "more_body": True}

    paced = BodyDeadline(receive, grace_s=2.0, min_rate=4096, clock=lambda: clock[0])

    async def read(n: int) -> int:
        for _ in range(n):
            await paced()
        return paced.received

    assert run_async(read(500)) == 500 * 4096  # 2 MB over 500 s: each second's bytes buy a second


def test_a_complete_body_stops_the_clock():
    """Once the body is in, receive waits for the client leaving as long as it takes."""
    clock = [0.0]
    messages = iter([{"type": "http.request", "body": b"{}", "more_body": False}, {"type": "http.disconnect"}])

    async def receive():
        clock[0] += 100.0
        return next(messages)

    paced = BodyDeadline(receive, grace_s=1.0, min_rate=1, clock=lambda: clock[0])

    async def read() -> list[str]:
        return [(await paced())["type"] for _ in range(2)]

    assert run_async(read()) == ["http.request", "http.disconnect"]


def _answer_to_a_stalled_body(path: str, content_type: bytes, grace_s: float) -> tuple[int, dict, dict]:
    """The app's answer to a POST whose body sends its first bytes, then nothing (a receive that
    never returns again): status, headers, JSON."""
    app = create_app(Settings(allowed_hosts=TEST_HOSTS, body_timeout_seconds=grace_s), warm_up=False)
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1"), (b"content-type", content_type), (b"content-length", b"100000")],
        "client": ("10.7.0.1", 5000),
        "server": ("127.0.0.1", 8000),
    }
    sent: list[dict] = []

    async def run() -> None:
        first = True

        async def receive():
            nonlocal first
            if first:
                first = False
                return {"type": "http.request", "body": SPEC[:10], "more_body": True}
            await asyncio.Event().wait()  # the client sends nothing more

        async def send(message):
            sent.append(message)

        await app(scope, receive, send)

    run_async(run())
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], {k.decode(): v.decode() for k, v in start["headers"]}, json.loads(body)


@pytest.mark.parametrize(
    ("path", "content_type"),
    [("/api/traces", b"application/json"), ("/api/models", b"multipart/form-data; boundary=x")],
    ids=["json", "upload"],
)
def test_a_stalled_body_is_answered_408_and_the_connection_closes(path, content_type):
    status, headers, answer = _answer_to_a_stalled_body(path, content_type, grace_s=0.05)
    assert status == 408 and headers["connection"] == "close", (status, headers, answer)
    assert "too slowly" in answer["detail"]
