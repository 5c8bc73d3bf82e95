"""Guessing made slow: failed guesses of a secret (an admin or presenter key, a join code) are
counted per client address and from all addresses together, and past either bound the next
guess is refused (429 + Retry-After) before it is compared (docs/api.md, "Limits and errors").

The counts live in this process: with several workers each counts its own share.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from typing import TypeVar

from fastapi import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.words.choice import chosen_language
from app.words.said import Said, in_language

PRESENTER_KEY_HEADER = b"x-presenter-key"
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
T = TypeVar("T")
MAX_TRACKED_ADDRESSES = 10_000  # addresses remembered by a GuessLimiter; the oldest is forgotten first
GUESS_MESSAGES = "error-guess-"  # the catalogue's names of what is guessed (GuessLimiter's `what`)


class TooManyGuesses(HTTPException):
    def __init__(self, detail: str, retry_after: float):
        super().__init__(429, detail=detail, headers={"Retry-After": str(max(1, math.ceil(retry_after)))})


class GuessLimiter:
    """Failed guesses of a secret (an admin or presenter key, a join code), bounded per client
    address (per_address in a minute; 0: no bound here) and from all addresses together
    (overall in a second). Past either, check() refuses with a 429 and Retry-After before the
    guess is compared, so a right guess is found no faster than wrong ones are refused. An
    address that guessed a subject right (succeeded: the admin key, a session's code) is exempt
    from the overall bound for that subject for trusted_s: someone else's guessing does not lock
    out the teacher or the students already in, and they guess other subjects no faster."""

    def __init__(
        self,
        what: str,
        per_address: int,
        overall: int,
        trusted_s: float = 3600.0,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.what = what
        self.per_address = per_address
        self.overall = overall
        self.trusted_s = trusted_s
        self.clock = clock
        self._by_address: OrderedDict[str, deque[float]] = OrderedDict()
        self._all: deque[float] = deque()
        self._trusted: OrderedDict[tuple[str, str], float] = OrderedDict()

    def check(self, address: str, subject: str = "") -> None:
        now = self.clock()
        recent = self._recent(address, now)
        # `what`: a catalogue message (error-guess-…) naming the guesses, or a test's own word
        what = Said(self.what) if self.what.startswith(GUESS_MESSAGES) else self.what
        if self.per_address and len(recent) >= self.per_address:
            raise TooManyGuesses(
                Said("error-guesses-per-address", what=what, most=self.per_address), recent[0] + 60 - now
            )
        while self._all and self._all[0] <= now - 1:
            self._all.popleft()
        if len(self._all) >= self.overall and not self._is_trusted((address, subject), now):
            raise TooManyGuesses(Said("error-guesses-overall", what=what, most=self.overall), self._all[0] + 1 - now)

    def failed(self, address: str) -> None:
        now = self.clock()
        self._all.append(now)
        if self.per_address:
            self._recent(address, now).append(now)
            self._by_address.move_to_end(address)
            while len(self._by_address) > MAX_TRACKED_ADDRESSES:
                self._by_address.popitem(last=False)

    def succeeded(self, address: str, subject: str = "") -> None:
        self._trusted[address, subject] = self.clock()
        self._trusted.move_to_end((address, subject))
        while len(self._trusted) > MAX_TRACKED_ADDRESSES:
            self._trusted.popitem(last=False)

    async def screen(self, address: str, lookup: Awaitable[T | None] | None, subject: str = "") -> T | None:
        """check(), then the lookup's answer (None: a guess known wrong without looking); None
        counts as a failed guess, anything else as a right one."""
        try:
            self.check(address, subject)
        except TooManyGuesses:
            if hasattr(lookup, "close"):
                lookup.close()  # a coroutine never awaited: closed, so Python does not warn
            raise
        found = None if lookup is None else await lookup
        if found is None:
            self.failed(address)
        else:
            self.succeeded(address, subject)
        return found

    def _recent(self, address: str, now: float) -> deque[float]:
        recent = self._by_address.setdefault(address, deque())
        while recent and recent[0] <= now - 60:
            recent.popleft()
        return recent

    def _is_trusted(self, who: tuple[str, str], now: float) -> bool:
        since = self._trusted.get(who)
        return since is not None and now - since < self.trusted_s


class PresenterKeyGuesses:
    """Pure ASGI middleware: a request carrying X-Presenter-Key is screened by the key limiter
    first (429 past it); a 403 answer to it counts as a wrong key, a 2xx answer to a write as a
    right one (a GET answers a wrong key with the students' view, so it counts as neither)."""

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
            if message["type"] == "http.response.start":
                if message["status"] == 403:
                    self.guesses.failed(address)
                elif message["status"] < 300 and scope["method"] in UNSAFE_METHODS:
                    self.guesses.succeeded(address)
            await send(message)

        await self.app(scope, receive, counting_send)
