"""A class one student cannot stall with downloads (issue 35): a .npy download holds its array's bytes
in the one budget until its response ends, so one client has at most max_download_bytes_per_client of
arrays under way (past them: 429 before any work), its place given back however the response ends; a client that
stops reading has its response ended after download_send_timeout_seconds, and the bytes go."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
import time

import pytest
import uvicorn

from app.main import create_app
from app.settings import Settings
from app.spec import TraceSpec, resolve
from app.traces import downloads, tensors
from app.traces.busy import TooManyQueued
from app.traces.downloads import Downloads
from app.traces.store import build_trace
from tests.helpers.aio import run_async
from tests.helpers.client import TEST_HOSTS
from tests.helpers.server import HOST, free_port
from tests.helpers.specs import SMALL_SPEC

DEADLINE_S = 30  # a hung test's bound, never a measure
SMALL_TRACE = build_trace(resolve(TraceSpec.model_validate(SMALL_SPEC), Settings()))
PARAM_BYTES = SMALL_TRACE[SMALL_TRACE.param_names[0]].nbytes  # what a download of _posted's parameter counts


class Download:
    """One request over ASGI from `address` (spec 2.3, as uvicorn's: Starlette listens for the client
    leaving) whose client takes the answer's start at once but each piece of its body only once
    `taking` is set; `leaving` set, it disconnects (`gone_at_start`: as the start arrives, before
    any piece). `body`: a POST of that JSON."""

    def __init__(self, app, path: str, address: str, *, taking=False, gone_at_start=False, body: dict | None = None):
        self.taking, self.leaving, self.gone_at_start = asyncio.Event(), asyncio.Event(), gone_at_start
        if taking:
            self.taking.set()
        self.status: asyncio.Future = asyncio.get_running_loop().create_future()
        self.headers: dict[str, str] = {}
        self.body = bytearray()
        self.sent = b"" if body is None else json.dumps(body).encode()
        headers = [(b"host", HOST.encode())]
        if body is not None:
            headers += [(b"content-type", b"application/json"), (b"content-length", str(len(self.sent)).encode())]
        path, _, query = path.partition("?")
        scope = {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
                 "method": "GET" if body is None else "POST", "scheme": "http", "path": path,
                 "raw_path": path.encode(), "query_string": query.encode(), "root_path": "", "headers": headers,
                 "client": (address, 40000), "server": (HOST, 8000)}  # fmt: skip
        self.asked = False
        self.task = asyncio.create_task(app(scope, self._receive, self._send))

    async def _receive(self) -> dict:
        if not self.asked and not self.leaving.is_set():
            self.asked = True
            return {"type": "http.request", "body": self.sent, "more_body": False}
        await self.leaving.wait()
        return {"type": "http.disconnect"}

    async def _send(self, message: dict) -> None:
        if message["type"] == "http.response.start":
            self.headers = {k.decode(): v.decode() for k, v in message["headers"]}
            self.status.set_result(message["status"])
            if self.gone_at_start:
                self.leaving.set()
        else:
            await self.taking.wait()
            self.body += message.get("body", b"")

    async def started(self) -> int:
        """The answer's status once it has started (a .npy download is held from then on)."""
        return await asyncio.wait_for(asyncio.shield(self.status), DEADLINE_S)

    async def ended(self) -> int:
        await asyncio.wait_for(self.task, DEADLINE_S)
        return await self.started()


async def _posted(app) -> tuple[str, str]:
    """A trace of SMALL_SPEC (its id) and one of its parameters' names."""
    post = Download(app, "/api/traces", "10.0.0.9", taking=True, body=SMALL_SPEC)
    assert await post.ended() == 200, post.body
    trace_id = json.loads(post.body)["id"]
    services = app.state.services
    return trace_id, services.store.get(services.store.spec(trace_id)).param_names[0]


def test_a_client_has_at_most_max_download_bytes_per_address_under_way(monkeypatch):
    """Two downloads of one client held (their client takes no piece): a third, past the bytes, is a
    429 naming the setting (documented), before any work (no array is read); another client's is not
    refused, nor the same client's JSON; once one ends, sent, the client may download again; every
    place and byte goes. A client without a learner identity is its address (_per_address)."""
    settings = Settings(allowed_hosts=TEST_HOSTS, max_download_bytes_per_address=2 * PARAM_BYTES)
    app = create_app(settings, warm_up=False)
    services, read, tensor_array = app.state.services, [], tensors.tensor_array
    monkeypatch.setattr(tensors, "tensor_array", lambda *a: read.append(a[1:]) or tensor_array(*a))

    async def run():
        trace_id, name = await _posted(app)
        url = f"/api/traces/{trace_id}/tensors/{name}"
        held = [Download(app, url, "10.0.0.1") for _ in range(2)]
        assert [await d.started() for d in held] == [200, 200]
        assert services.answers.downloads.under_way == {"address:10.0.0.1": 2 * PARAM_BYTES}
        third = Download(app, url, "10.0.0.1", taking=True)
        assert await third.ended() == 429
        refusal, reads_before = json.loads(third.body), len(read)
        as_json = Download(app, url + "?format=json", "10.0.0.1", taking=True)
        other = Download(app, url, "10.0.0.2", taking=True)
        statuses = [await as_json.ended(), await other.ended()]
        held[0].taking.set()
        assert await held[0].ended() == 200
        again = Download(app, url, "10.0.0.1", taking=True)
        statuses.append(await again.ended())
        held[1].taking.set()
        await held[1].ended()
        return refusal, third.headers, reads_before, statuses, len(again.body)

    refusal, headers, reads_before, statuses, length = run_async(run())
    assert "max_download_bytes_per_address = " in refusal["detail"] and headers["retry-after"] == "2", refusal
    assert reads_before == 2  # the refused one read nothing
    assert "429" in app.openapi()["paths"]["/api/traces/{trace_id}/tensors/{name}"]["get"]["responses"]
    assert statuses == [200, 200, 200] and length > 128
    assert services.answers.downloads.under_way == {}
    assert services.store.reserved == 0 and services.admission.holding == 0


def test_a_download_gives_its_place_back_when_its_client_leaves():
    """Before the first piece (Starlette cancels the stream) or mid-way: the place and the bytes go,
    and the client may download again."""
    app = create_app(Settings(allowed_hosts=TEST_HOSTS, max_download_bytes_per_address=1), warm_up=False)
    services = app.state.services

    async def run():
        trace_id, name = await _posted(app)
        url = f"/api/traces/{trace_id}/tensors/{name}"
        gone_at_start = Download(app, url, "10.0.0.1", gone_at_start=True)
        assert await gone_at_start.ended() == 200
        after_first = [dict(services.answers.downloads.under_way), bytes(gone_at_start.body)]
        mid_way = Download(app, url, "10.0.0.1")
        assert await mid_way.started() == 200
        during = dict(services.answers.downloads.under_way)
        mid_way.leaving.set()
        await asyncio.wait_for(mid_way.task, DEADLINE_S)
        again = Download(app, url, "10.0.0.1", taking=True)
        return after_first, during, await again.ended()

    after_first, during, again = run_async(run())
    assert after_first == [{}, b""]
    assert during == {"address:10.0.0.1": PARAM_BYTES} and again == 200
    assert services.answers.downloads.under_way == {}
    assert services.store.reserved == 0 and services.admission.holding == 0


def test_a_piece_not_taken_in_time_ends_the_response_and_lets_the_bytes_go():
    """The send timeout on its own: the body's first piece never taken, the response returns (no
    exception: no 500) and lets its bytes go."""
    events = []
    response = tensors.HeldWhileSent(
        iter([b"header", b"data"]), lambda: events.append("let go"), send_timeout_s=0.01, media_type="x/y"
    )

    async def receive():
        await asyncio.Event().wait()  # the client never leaves

    async def send(message):
        events.append(message["type"])
        if message["type"] == "http.response.body":
            await asyncio.Event().wait()  # uvicorn's flow.drain: the client takes nothing

    scope = {"type": "http", "asgi": {"spec_version": "2.3"}, "method": "GET", "path": "/", "headers": []}
    run_async(response(scope, receive, send))
    assert events == ["http.response.start", "http.response.body", "let go"]


class _Served:
    """The app served by uvicorn in a thread on a free loopback port (its services readable here)."""

    def __init__(self, settings: Settings):
        self.app = create_app(settings, warm_up=False)
        self.port = free_port()
        config = uvicorn.Config(self.app, host=HOST, port=self.port, log_config=None, log_level="info")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> _Served:
        self.thread.start()
        _until(lambda: self.server.started)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(DEADLINE_S)


def _until(condition) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def _request(port: int, method: str, path: str, body: bytes = b"", receive_buffer: int = 0) -> socket.socket:
    sock = socket.socket()
    if receive_buffer:  # set before connecting: the window the client offers stays small
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    sock.connect((HOST, port))
    head = f"{method} {path} HTTP/1.1\r\nHost: {HOST}\r\nConnection: close\r\nContent-Length: {len(body)}\r\n"
    sock.sendall(head.encode() + b"Content-Type: application/json\r\n\r\n" + body)
    return sock


def _read_all(sock: socket.socket) -> bytes:
    sock.settimeout(DEADLINE_S)
    data = bytearray()
    while chunk := sock.recv(1 << 20):
        data += chunk
    return bytes(data)


class _Seen(logging.Handler):
    """What `seeing()` returns as each record of the download's log is written (on the server's thread)."""

    def __init__(self, seeing):
        super().__init__()
        self.seeing, self.seen = seeing, []

    def emit(self, record: logging.LogRecord) -> None:
        self.seen.append((record.getMessage(), self.seeing()))


def test_a_client_that_stops_reading_has_its_download_ended_and_its_bytes_let_go(caplog):
    """A real socket that takes the answer's start and then reads nothing: uvicorn's send waits for
    it (flow.drain) until download_send_timeout_seconds; then the response ends (no 500, no
    traceback), its 16 MB held until then go with its place, and what the client reads stops short
    of Content-Length (the connection closed)."""
    caplog.set_level(logging.INFO)
    # logits of 4 sequences of 256 positions over 4,096 tokens: 16 MB, past what the sockets buffer
    config = {**SMALL_SPEC["config"], "seq_len": 256, "vocab_size": 4096}
    spec = {"config": config, "tokens": [[(7 * i + row) % 4096 for i in range(257)] for row in range(4)], "seed": 1}
    settings = Settings(allowed_hosts=TEST_HOSTS, download_send_timeout_seconds=0.5)
    with _Served(settings) as served:
        services = served.app.state.services
        seen = _Seen(lambda: (dict(services.answers.downloads.under_way), services.store.reserved))
        logging.getLogger("xt.downloads").addHandler(seen)
        try:
            posted = _read_all(_request(served.port, "POST", "/api/traces", json.dumps(spec).encode()))
            trace_id = json.loads(posted.split(b"\r\n\r\n", 1)[1])["id"]
            stalled = _request(served.port, "GET", f"/api/traces/{trace_id}/tensors/logits", receive_buffer=4096)
            head = stalled.recv(4096)
            _until(lambda: not services.answers.downloads.under_way)
            after = services.store.reserved, services.admission.holding
            received = len(head) + len(_read_all(stalled))
        finally:
            logging.getLogger("xt.downloads").removeHandler(seen)
    assert head.startswith(b"HTTP/1.1 200"), head
    length = int(next(h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")).split(b":")[1])
    assert length == 4 * 256 * 4096 * 4 + 128
    [(said, (under_way, reserved))] = seen.seen  # as the response ended: still held
    assert "download_send_timeout_seconds" in said
    assert under_way == {"address:127.0.0.1": length - 128} and reserved >= length - 128
    assert after == (0, 0)
    assert received < length
    assert not any(r.exc_info for r in caplog.records), [r.getMessage() for r in caplog.records if r.exc_info]


def test_a_learner_identity_has_max_download_bytes_per_client_and_an_address_without_one_more():
    settings, downloads = Settings(max_download_bytes_per_client=100, max_download_bytes_per_address=300), Downloads()
    downloads.take("voter:abc", 1000, settings)  # a client's first download is never refused, however large
    with pytest.raises(TooManyQueued) as refused:
        downloads.take("voter:abc", 1, settings)
    assert "max_download_bytes_per_client" in str(refused.value.detail)
    places = [downloads.take("address:10.0.0.1", 100, settings) for _ in range(3)]  # a class behind one router
    with pytest.raises(TooManyQueued) as refused:
        downloads.take("address:10.0.0.1", 1, settings)
    assert "max_download_bytes_per_address" in str(refused.value.detail)
    places[0]()
    places[0]()  # given back once
    assert downloads.under_way == {"voter:abc": 1000, "address:10.0.0.1": 200}


def test_a_downloads_bytes_are_counted_from_the_recorded_shapes_before_any_work():
    trace = SMALL_TRACE
    for name in ("logits", "layers.0.attention.probs", trace.param_names[0], "tokens"):
        assert downloads.array_bytes(trace, name) == trace[name].nbytes
    with pytest.raises(KeyError):
        downloads.array_bytes(trace, "no.such.tensor")
