# Over 350 lines: the caps, the uvicorn protocol that holds connections to them (with its reserve) and the stream cap read one Caps and one Tally; split, each would import the others.
"""Connections bounded (docs/lessons.md, "Serving a class"): the process's open-file limit raised
where allowed and the caps derived from it (Caps), the uvicorn protocol that holds each client
address and all clients together to their share of connections and closes a connection whose
request headers do not arrive in time (bounded_protocol, used by `xt serve`), and the cap on
event streams (StreamCap, in the app).

A connection past a cap is answered at once, before its request is read: 429 past the client's
share, 503 past the total, each with Retry-After, then closed. The last Caps.reserve connections
of the total serve only the presenter, /healthz and joins (app/reserve.py): no mix of clients at
their shares takes those. No client can take the
descriptors everyone else needs: the caps stay FD_RESERVE below the open-file limit (model
files, Redis, logs and uploads use those), and a refused connection lingers at most
REFUSED_LINGER_S so its client reads the answer (at most MAX_LINGERING at once; beyond,
it is closed as soon as it is answered).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import resource
import secrets
from collections import Counter
from dataclasses import dataclass

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.guesses import client_of
from app.reserve import MAX_HEAD_BYTES, Reserved, reserved_kind
from app.settings import Settings
from app.words import t

FD_RESERVE = 128  # descriptors that are never a client's: model files, Redis, logs, uploads, lesson files
MAX_OPEN_FILES = 65_536  # the open-file limit is raised at most to this (the hard limit permitting)
MAX_CONNECTIONS = 8_192  # one event loop serves no more usefully, whatever the open-file limit
REFUSED_LINGER_S = 1.0
MAX_LINGERING = 64
MIN_RESERVE = 8  # connections kept for the presenter, /healthz and joins, at the least (Caps.reserve)
RETRY_AFTER_S = 5
STREAM_PATH = re.compile(r"^/api/sessions/[^/]+/events/?$")


def open_file_limit() -> int:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return MAX_OPEN_FILES if soft == resource.RLIM_INFINITY else soft


def raise_open_file_limit(target: int = MAX_OPEN_FILES) -> int:
    """The soft open-file limit raised towards `target` as far as the hard limit allows; the limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = target if hard == resource.RLIM_INFINITY else min(target, hard)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        with contextlib.suppress(ValueError, OSError):  # not allowed here: the caps follow the limit as it is
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    return open_file_limit()


@dataclass(frozen=True)
class Caps:
    """How many connections and event streams the server holds: in all, and per client address."""

    connections: int
    streams: int
    client_connections: int
    client_streams: int
    reserve: int = 0  # of `connections`, those only the presenter, /healthz and joins may use

    @property
    def general(self) -> int:
        """Connections any request may use."""
        return self.connections - self.reserve

    @classmethod
    def of(cls, settings: Settings, open_files: int | None = None) -> Caps:
        """From the settings; a total of 0 there comes from the open-file limit: connections up to
        FD_RESERVE below it, three quarters of them streams (the rest answer everything else); an
        eighth of them (MIN_RESERVE at the least) kept for the presenter, /healthz and joins."""
        files = open_files if open_files is not None else open_file_limit()
        connections = settings.max_connections or max(16, min(MAX_CONNECTIONS, files - FD_RESERVE))
        streams = min(settings.max_streams or max(4, connections * 3 // 4), connections)
        return cls(
            connections=connections,
            streams=streams,
            client_connections=min(settings.max_client_connections, connections),
            client_streams=min(settings.max_client_streams, streams),
            reserve=min(max(MIN_RESERVE, connections // 8), connections // 2),
        )

    def refusal(self, mine: int, everyone: int, client_cap: int, total_cap: int, what: str) -> tuple[int, str] | None:
        """(status, detail) when one more `what` from a client holding `mine` passes a cap, else None."""
        if mine >= client_cap:
            return 429, (
                f"this address already holds {mine} {what} (at most {client_cap} per address): close some and "
                f"retry in {RETRY_AFTER_S} s"
            )
        if everyone >= total_cap:
            return 503, f"this server holds its maximum of {total_cap} {what}: retry in {RETRY_AFTER_S} s"
        return None


# ---------------------------------------------------------------------- connections (uvicorn)


class Tally:
    """The open connections of one server: per client address, in all, refused ones lingering,
    and those in the reserve whose request head has not come yet (oldest first)."""

    def __init__(self) -> None:
        self.by_client: Counter[str] = Counter()
        self.total = 0
        self.lingering = 0
        self.undecided: dict[BoundedConnection, None] = {}

    def add(self, client: str) -> None:
        self.by_client[client] += 1
        self.total += 1

    def remove(self, client: str) -> None:
        self.total -= 1
        self.by_client[client] -= 1
        if self.by_client[client] <= 0:
            del self.by_client[client]


def refusal_bytes(status: int, detail: str) -> bytes:
    body = json.dumps({"detail": detail}).encode()
    reason = {429: b"Too Many Requests", 503: b"Service Unavailable"}[status]
    head = [
        b"HTTP/1.1 %d %s" % (status, reason),
        b"content-type: application/json",
        b"content-length: %d" % len(body),
        b"retry-after: %d" % RETRY_AFTER_S,
        b"connection: close",
    ]
    return b"\r\n".join(head) + b"\r\n\r\n" + body


class BoundedConnection:
    """The mixin bounded_protocol puts before uvicorn's HTTP protocol: its class attributes
    (caps, header_timeout_s, tally, proxies, admin_key, admin_token) are those of one server."""

    caps: Caps
    header_timeout_s: float
    tally: Tally
    proxies: frozenset[str]
    admin_key: str = ""
    admin_token: str = ""

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._xt_client = client_of((self.client or ("",))[0])
        self._xt_timer: asyncio.TimerHandle | None = None
        self._xt_counted = False
        self._xt_lingering = False
        self._xt_cycle = None
        self._xt_head: bytearray | None = None  # a reserve connection's head, until it is complete
        self._xt_reserved: Reserved | None = None
        caps, tally = self.caps, self.tally
        forwarded = "*" in self.proxies or (self.client or ("",))[0] in self.proxies
        mine = 0 if forwarded else tally.by_client[self._xt_client]
        if mine < caps.client_connections and tally.total >= caps.connections and tally.undecided:
            next(iter(tally.undecided))._xt_drop()  # the oldest in the reserve that never sent its head
        refused = caps.refusal(mine, tally.total, caps.client_connections, caps.connections, "connections")
        if refused is not None:
            self._xt_refuse(*refused)
            return
        if tally.total >= caps.general:  # into the reserve: its request's head decides (app/reserve.py)
            self._xt_head = bytearray()
            tally.undecided[self] = None
        tally.add(self._xt_client)
        self._xt_counted = True
        self._xt_arm()

    def connection_lost(self, exc) -> None:
        self._xt_disarm()
        self._xt_end_linger()
        self._xt_uncount()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if not self._xt_counted or (self._xt_reserved is Reserved.ANYONE and self.cycle is not None):
            return  # refused (its answer is written), or a reserved request's head is all it gets
        if self._xt_head is not None:
            data = self._xt_decide(data)
            if not data:
                return
        super().data_received(data)
        if self.cycle is not self._xt_cycle:  # a request's headers are complete
            self._xt_cycle = self.cycle
            self._xt_disarm()

    def _xt_decide(self, data: bytes) -> bytes:
        """A reserve connection's bytes: b"" until its head is complete, then what uvicorn reads
        (its head alone for /healthz and joins); turned away (503) if the reserve is not for it."""
        self._xt_head += data
        end = self._xt_head.find(b"\r\n\r\n")
        if end < 0 and len(self._xt_head) <= MAX_HEAD_BYTES:
            return b""
        head, self._xt_head = bytes(self._xt_head), None
        self.tally.undecided.pop(self, None)
        self._xt_reserved = None if end < 0 else reserved_kind(head[:end], self.admin_key, self.admin_token)
        if self._xt_reserved is None:
            self._xt_uncount()
            self._xt_refuse(503, t("en", "net-reserved-only"))
            return b""
        return head[: end + 4] if self._xt_reserved is Reserved.ANYONE else head

    def on_response_complete(self) -> None:
        if self._xt_reserved is not None:
            self.transport.close()  # a reserved slot serves one answer: the next request reconnects
        super().on_response_complete()
        if not self.transport.is_closing() and (self.cycle is None or self.cycle.response_complete):
            self._xt_arm()  # waiting for the next request (uvicorn's keep-alive timer runs too)

    def _xt_uncount(self) -> None:
        self.tally.undecided.pop(self, None)
        if self._xt_counted:
            self._xt_counted = False
            self.tally.remove(self._xt_client)

    def _xt_drop(self) -> None:
        """Closed to make room in the reserve: it never sent its request's head."""
        self._xt_uncount()
        self._xt_disarm()
        self.transport.abort()

    def _xt_arm(self) -> None:
        self._xt_disarm()
        self._xt_timer = self.loop.call_later(self.header_timeout_s, self.transport.close)

    def _xt_disarm(self) -> None:
        if self._xt_timer is not None:
            self._xt_timer.cancel()
            self._xt_timer = None

    def _xt_refuse(self, status: int, detail: str) -> None:
        self._xt_disarm()
        self.transport.write(refusal_bytes(status, detail))
        if self.tally.lingering >= MAX_LINGERING or not self.transport.can_write_eof():
            self.transport.close()
            return
        # half-closed: the client reads the answer and the end; closing at once, with its
        # request unread, would reset the connection and lose the answer
        self.transport.write_eof()
        self.tally.lingering += 1
        self._xt_lingering = True
        self._xt_timer = self.loop.call_later(REFUSED_LINGER_S, self._xt_close_refused)

    def _xt_close_refused(self) -> None:
        self._xt_end_linger()
        self.transport.close()

    def _xt_end_linger(self) -> None:
        if self._xt_lingering:
            self._xt_lingering = False
            self.tally.lingering -= 1


def bounded_protocol(
    caps: Caps,
    header_timeout_s: float,
    base: type | None = None,
    proxies: frozenset[str] = frozenset(),
    admin: tuple[str, str] = ("", ""),
) -> type:
    """A uvicorn HTTP protocol class (uvicorn.run(http=...)) holding one server's connections
    to `caps` and timing out request headers: from a connection's opening, and from the end
    of each answer, its next request's headers must be complete within header_timeout_s
    (bytes trickling in do not extend it). A connection from one of `proxies` (the trusted
    forwarders: every student behind them shares their address; "*" is all) counts only toward
    the total. `admin`: the admin key and the admin cookie's token, which tell the presenter's
    requests for the reserve (app/reserve.py)."""
    if base is None:
        from uvicorn.protocols.http.auto import AutoHTTPProtocol as base
    attributes = {"caps": caps, "header_timeout_s": header_timeout_s, "tally": Tally(), "proxies": proxies}
    attributes |= {"admin_key": admin[0], "admin_token": admin[1]}
    return type("BoundedProtocol", (BoundedConnection, base), attributes)


# ---------------------------------------------------------------------- event streams (the app)


class StreamCap:
    """Pure ASGI middleware: the event streams (GET /api/sessions/{code}/events) open at once,
    per client address and in all, held to caps; one more is a 429 (the client's share) or a
    503 (the total) with Retry-After, before the session is looked up. With the total reached,
    a newcomer holding fewer streams than the biggest holder by two or more takes the place of
    that holder's oldest stream (told it is over: its client sees the stream end), so addresses
    at their shares never shut out a new follower or the presenter (issue 35, finding 3)."""

    def __init__(self, app: ASGIApp, caps: Caps) -> None:
        self.app = app
        self.caps = caps
        self.by_client: Counter[str] = Counter()
        self.total = 0
        self.held: dict[str, dict[object, asyncio.Event]] = {}  # per client, its streams' "leave" events, oldest first

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not STREAM_PATH.match(scope.get("path", "")):
            await self.app(scope, receive, send)
            return
        client = client_of((scope.get("client") or ("",))[0])
        caps = self.caps
        if self.total >= caps.streams:
            self._make_room(client)
        refused = caps.refusal(self.by_client[client], self.total, caps.client_streams, caps.streams, "event streams")
        if refused is not None:
            status, detail = refused
            answer = JSONResponse({"detail": detail}, status, headers={"Retry-After": str(RETRY_AFTER_S)})
            await answer(scope, receive, send)
            return
        stream, leave = object(), asyncio.Event()
        self.held.setdefault(client, {})[stream] = leave
        self.by_client[client] += 1
        self.total += 1
        try:
            await self.app(scope, _until(leave, receive), send)
        finally:
            if self.held.get(client, {}).pop(stream, None) is not None:
                self._forget(client)

    def _make_room(self, newcomer: str) -> None:
        biggest = max(self.by_client, key=self.by_client.__getitem__, default=None)
        if biggest is None or self.by_client[biggest] < self.by_client[newcomer] + 2:
            return
        stream, leave = next(iter(self.held[biggest].items()))
        del self.held[biggest][stream]
        leave.set()
        self._forget(biggest)

    def _forget(self, client: str) -> None:
        self.total -= 1
        self.by_client[client] -= 1
        if self.by_client[client] <= 0:
            del self.by_client[client]
            self.held.pop(client, None)


def _until(leave: asyncio.Event, receive: Receive) -> Receive:
    """A receive that answers http.disconnect once `leave` is set (the stream gave its place)."""

    async def receiving() -> Message:
        if leave.is_set():
            return {"type": "http.disconnect"}
        message, left = asyncio.ensure_future(receive()), asyncio.ensure_future(leave.wait())
        done, pending = await asyncio.wait({message, left}, return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()
        return message.result() if message in done else {"type": "http.disconnect"}

    return receiving


# ---------------------------------------------------------------------- `xt serve`


def uvicorn_options(host: str, port: int, forwarded_allow_ips: str | None, graceful_s: float) -> tuple[dict, str]:
    """uvicorn.run's options for `xt serve`, and a line saying the caps: the open-file limit
    raised first and the connection caps and header timeout from it; forwarded headers believed
    only from the addresses given (forwarded_allow_ips, else XT_FORWARDED_ALLOW_IPS; none by
    default); no WebSocket upgrades (no route takes one)."""
    if forwarded_allow_ips is not None:
        os.environ["XT_FORWARDED_ALLOW_IPS"] = forwarded_allow_ips  # the app's settings say it too
    open_files = raise_open_file_limit()
    if os.environ.get("XT_ADMIN_KEY") and not os.environ.get("XT_ADMIN_TOKEN"):
        # the admin cookie's token, shared with the app so the reserve knows the presenter's requests
        os.environ["XT_ADMIN_TOKEN"] = secrets.token_urlsafe(32)
    settings = Settings.from_env()
    caps = Caps.of(settings, open_files)
    forwarded = settings.forwarded_allow_ips.strip()
    options = {
        "host": host,
        "port": port,
        "log_level": "info",
        "timeout_graceful_shutdown": graceful_s,
        "timeout_keep_alive": settings.keep_alive_seconds,
        "http": bounded_protocol(
            caps,
            settings.header_timeout_seconds,
            proxies=frozenset(a.strip() for a in forwarded.split(",") if a.strip()),
            admin=(settings.admin_key, settings.admin_token),
        ),
        "ws": "none",
        "proxy_headers": bool(forwarded),
        "forwarded_allow_ips": forwarded or None,
    }
    said = (
        f"xt: up to {caps.connections} connections ({caps.client_connections} per address; {caps.reserve} kept for the "
        f"presenter, /healthz and joins) and {caps.streams} class streams ({caps.client_streams} per address); "
        f"open-file limit {open_files}"
    )
    return options, said
