"""An app driven in process over ASGI with event streams held open (tests/app/sessions/test_seats.py):
TestClient waits for a response's end, which a class's stream never reaches."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from http.cookies import SimpleCookie


class Asgi:
    """Requests to one app in this event loop; streams stay open until close()."""

    def __init__(self, app) -> None:
        self.app = app
        self.leaving: list[asyncio.Event] = []
        self.seats: list[str] = []  # the seats student() was given, in turn
        self.streams: list[list[bytes]] = []  # each event stream's chunks so far, in the order opened
        self.tasks: list[asyncio.Task] = []

    async def call(self, method: str, path: str, address: str, headers: dict | None = None, body=None):
        """(status, headers, body) of a request that ends; a stream: its status and headers once it starts."""
        sent = json.dumps(body).encode() if body is not None else b""
        raw = [(b"host", b"127.0.0.1")] + [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
        if body is not None:
            raw += [(b"content-type", b"application/json"), (b"content-length", str(len(sent)).encode())]
        path, _, query = path.partition("?")
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
                 "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": query.encode(),
                 "root_path": "", "headers": raw, "client": (address, 40000), "server": ("127.0.0.1", 8000)}  # fmt: skip
        loop = asyncio.get_running_loop()
        leave, started, first_chunk, chunks = asyncio.Event(), loop.create_future(), loop.create_future(), []
        first = True

        async def receive():
            nonlocal first
            if first:
                first = False
                return {"type": "http.request", "body": sent, "more_body": False}
            await leave.wait()
            return {"type": "http.disconnect"}

        async def send(message):
            if message["type"] == "http.response.start" and not started.done():
                started.set_result((message["status"], [(k.decode(), v.decode()) for k, v in message["headers"]]))
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if chunks[-1] and not first_chunk.done():
                    first_chunk.set_result(None)

        task = asyncio.create_task(self.app(scope, receive, send))
        self.leaving.append(leave)
        self.tasks.append(task)
        status, answer_headers = await started
        if dict(answer_headers).get("content-type", "").startswith("text/event-stream"):
            # its first state sent: the stream has joined the class (a deadline for a hung stream, not a measure)
            await asyncio.wait_for(asyncio.shield(first_chunk), 10)
            self.streams.append(chunks)
            return status, answer_headers, b""
        await task
        return status, answer_headers, b"".join(chunks)

    async def close(self) -> None:
        for leave in self.leaving:
            leave.set()
        await asyncio.gather(*self.tasks, return_exceptions=True)


def seat_of(headers: list) -> str | None:
    for name, value in headers:
        if name == "set-cookie" and value.startswith("xt_seat="):
            return SimpleCookie(value)["xt_seat"].value
    return None


async def open_poll(asgi: Asgi, spec: dict) -> tuple[str, dict]:
    """A class on `spec` (a bug hunt's) with its poll open: its code and the presenter's key header."""
    status, _, body = await asgi.call("POST", "/api/sessions", "10.20.9.9", body={"spec": spec})
    assert status == 201, body
    created = json.loads(body)
    presenter = {"X-Presenter-Key": created["presenter_key"]}
    status, _, _ = await asgi.call(
        "POST", f"/api/sessions/{created['code']}/poll", "10.20.9.9", presenter, {"action": "open"}
    )
    assert status == 200
    return created["code"], presenter


async def student(asgi: Asgi, code: str, address: str, step: int) -> int:
    """A student's page: the join (its seat), the stream following the class, the answer: its status."""
    status, headers, _ = await asgi.call("GET", f"/join/{code}", address)
    assert status == 303
    asgi.seats.append(seat_of(headers))
    seat = {"X-Seat": asgi.seats[-1]}
    status, _, _ = await asgi.call("GET", f"/api/sessions/{code}/events", address, seat)
    assert status == 200
    status, _, _ = await asgi.call("POST", f"/api/sessions/{code}/answers", address, seat, {"step": step})
    return status


async def poll_of(asgi: Asgi, code: str, presenter: dict) -> dict:
    """The poll as the presenter sees it."""
    return json.loads((await asgi.call("GET", f"/api/sessions/{code}", "10.20.9.9", presenter))[2])["poll"]


def following(app, code: str, seat: str) -> None:
    """The seat's stream, as a TestClient cannot hold one open: its entry in the app's session
    store (in memory), as the stream writes it when it opens."""
    from app.sessions.voters import seated

    store = app.state.sessions.store
    joined = store.join(code, f"{seated(seat)}|test:{len(seat)}", 60)
    # a test that ran before in this worker may have left its loop set as running in this thread
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, joined).result()
