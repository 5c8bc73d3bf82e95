"""Server-Timing on every answer: `total;dur=<ms>` from the request's arrival to its first byte
of headers (for a computing route: validation, the trace, the view and its encoding)."""

from __future__ import annotations

import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send


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
                headers = list(message.get("headers", []))
                if not any(name.lower() == b"server-timing" for name, _ in headers):
                    elapsed = (time.perf_counter() - started) * 1000
                    headers.append((b"server-timing", f"total;dur={elapsed:.1f}".encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_timed)
