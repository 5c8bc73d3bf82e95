"""Server-Timing on every answer: `total;dur=<ms>` from the request's arrival to its first byte
of headers (for a computing route: validation, the trace, the view and its encoding); and the
one way both header middlewares (this one, app.security's) add a header a route did not set."""

from __future__ import annotations

import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send


def with_default_headers(message: Message, defaults) -> Message:
    """An http.response.start message with each (name, value) of `defaults` whose name the route
    did not set itself; any other message as it is."""
    if message["type"] != "http.response.start":
        return message
    headers = list(message.get("headers", []))
    present = {name.lower() for name, _ in headers}
    headers += [(name, value) for name, value in defaults if name not in present]
    return {**message, "headers": headers}


class ServerTiming:
    """Pure ASGI middleware; a Server-Timing header the route set itself is kept."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()

        async def send_timed(message: Message) -> None:
            if message["type"] == "http.response.start":
                elapsed = (time.perf_counter() - started) * 1000
                message = with_default_headers(message, [(b"server-timing", f"total;dur={elapsed:.1f}".encode())])
            await send(message)

        await self.app(scope, receive, send_timed)
