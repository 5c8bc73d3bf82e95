"""A request body must keep coming (issue 35, finding 2): uvicorn times out request headers
(app.connections) but never a body, so a client that sends complete headers and then one body
byte every two seconds held its connection for as long as it liked, and a handful of them held
every connection a laptop's open-file limit allows.

The app's receive is wrapped where the guard reads a body (app.security.Guard): the body must
arrive within settings.body_timeout_seconds plus one second for every
settings.min_body_bytes_per_second received so far (a 12 kB spec: 13 s; an 8 MB upload on a slow
classroom network: over half an hour, far longer than it needs). Past that the request is a 408
with `Connection: close`, and uvicorn closes the connection.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from fastapi import HTTPException
from starlette.types import Message, Receive

from app.settings import Settings
from app.words.said import Said


class BodyTooSlow(HTTPException):
    """A 408 that closes the connection: raised by BodyDeadline, inside the route that reads an
    upload too (the app's error handlers answer it in the request's language)."""

    def __init__(self, received: int, seconds: float, grace_s: float, rate: int):
        detail = Said("net-body-too-slow", received=received, seconds=round(seconds), grace=round(grace_s), rate=rate)
        super().__init__(408, detail=detail, headers={"Connection": "close"})


class BodyDeadline:
    """A receive that answers as the wrapped one does, while the body keeps its pace: each call
    waits at most until started + grace_s + received / min_rate, else raises BodyTooSlow. Once
    the body is complete it waits as long as the wrapped one (a request waiting for its build
    listens for the client leaving). `clock` is the loop's monotonic time (a test hands its own)."""

    def __init__(
        self, receive: Receive, grace_s: float, min_rate: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.receive = receive
        self.grace_s = grace_s
        self.min_rate = min_rate
        self.clock = clock
        self.started = clock()
        self.received = 0
        self.complete = False

    @classmethod
    def of(cls, receive: Receive, settings: Settings) -> BodyDeadline:
        return cls(receive, settings.body_timeout_seconds, settings.min_body_bytes_per_second)

    def remaining(self) -> float:
        return self.started + self.grace_s + self.received / self.min_rate - self.clock()

    def too_slow(self) -> BodyTooSlow:
        return BodyTooSlow(self.received, self.clock() - self.started, self.grace_s, self.min_rate)

    async def __call__(self) -> Message:
        if self.complete:
            return await self.receive()
        remaining = self.remaining()
        if remaining <= 0:
            raise self.too_slow()
        try:
            async with asyncio.timeout(remaining):
                message = await self.receive()
        except TimeoutError:
            raise self.too_slow() from None
        if message["type"] == "http.request":
            self.received += len(message.get("body", b""))
            self.complete = not message.get("more_body", False)
        return message
