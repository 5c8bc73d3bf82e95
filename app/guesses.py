"""Guessing made hopeless without locking anyone out: failed guesses of a secret (an admin or
presenter key, a join code) are counted per client address only, and past the bound the next
guess from that address is refused (429 + Retry-After) before it is compared (docs/api.md,
"Limits and errors"; docs/lessons.md, "Guessing: the arithmetic").

There is no bound over all addresses together: a flood of wrong guesses from many addresses
would fill it and refuse the teacher's right key and the students' real code (issue 35, finding
5). The secrets are long enough instead that per-address bounds alone leave guessing hopeless:
a join code has 31^10 ≈ 8.2e14 values, the keys `xt serve` makes 192 random bits. An IPv6
client counts by its /64 (one machine holds a whole /64), an IPv4 one by its address.

The counts live in this process: with several workers each counts its own share (the join
codes' count is the session store's, shared by every worker).
"""

from __future__ import annotations

import ipaddress
import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable

from fastapi import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.words.choice import chosen_language
from app.words.said import Said, in_language

PRESENTER_KEY_HEADER = b"x-presenter-key"
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
MAX_TRACKED_ADDRESSES = 10_000  # addresses remembered by a GuessLimiter; the oldest is forgotten first
GUESS_MESSAGES = "error-guess-"  # the catalogue's names of what is guessed (GuessLimiter's `what`)
IPV6_CLIENT_PREFIX = 64  # the addresses one IPv6 machine may hold (SLAAC hands each host a /64)


def client_of(address: str) -> str:
    """The client an address counts as: an IPv6 address by its /64, anything else as it is."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if parsed.version == 4:
        return str(parsed)
    if parsed.ipv4_mapped is not None:
        return str(parsed.ipv4_mapped)
    return str(ipaddress.ip_network(f"{parsed}/{IPV6_CLIENT_PREFIX}", strict=False))


class TooManyGuesses(HTTPException):
    def __init__(self, detail: str, retry_after: float):
        super().__init__(429, detail=detail, headers={"Retry-After": str(max(1, math.ceil(retry_after)))})


class GuessLimiter:
    """Failed guesses of a secret (an admin or presenter key), bounded per client (client_of:
    an address, an IPv6 /64) to per_address in a minute. Past it, check() refuses with a 429 and
    Retry-After before the guess is compared, so a right guess is found no faster than wrong
    ones are refused. Other addresses are never held back: nothing is counted over all of them."""

    def __init__(self, what: str, per_address: int, clock: Callable[[], float] = time.monotonic):
        self.what = what
        self.per_address = per_address
        self.clock = clock
        self._by_address: OrderedDict[str, deque[float]] = OrderedDict()

    def check(self, address: str) -> None:
        now = self.clock()
        recent = self._recent(client_of(address), now)
        # `what`: a catalogue message (error-guess-…) naming the guesses, or a test's own word
        what = Said(self.what) if self.what.startswith(GUESS_MESSAGES) else self.what
        if len(recent) >= self.per_address:
            raise TooManyGuesses(
                Said("error-guesses-per-address", what=what, most=self.per_address), recent[0] + 60 - now
            )

    def failed(self, address: str) -> None:
        client = client_of(address)
        now = self.clock()
        self._recent(client, now).append(now)
        self._by_address.move_to_end(client)
        while len(self._by_address) > MAX_TRACKED_ADDRESSES:
            self._by_address.popitem(last=False)

    def _recent(self, client: str, now: float) -> deque[float]:
        recent = self._by_address.setdefault(client, deque())
        while recent and recent[0] <= now - 60:
            recent.popleft()
        return recent


class PresenterKeyGuesses:
    """Pure ASGI middleware: a request carrying X-Presenter-Key is screened by the key limiter
    first (429 past it); a 403 answer to it counts as a wrong key (a GET answers a wrong key with
    the students' view, so it counts as none)."""

    def __init__(self, app: ASGIApp, guesses: GuessLimiter) -> None:
        self.app = app
        self.guesses = guesses

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not any(name == PRESENTER_KEY_HEADER for name, _ in scope["headers"]):
            await self.app(scope, receive, send)
            return
        address = (scope.get("client") or ("",))[0]
        try:
            self.guesses.check(address)
        except TooManyGuesses as exc:
            detail = in_language(exc.detail, chosen_language(Request(scope)))
            await JSONResponse({"detail": detail}, 429, headers=exc.headers)(scope, receive, send)
            return

        async def counting_send(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 403:
                self.guesses.failed(address)
            await send(message)

        await self.app(scope, receive, counting_send)
