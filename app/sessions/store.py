"""Where sessions live: one interface, two back ends. `MemoryStore` (the default) keeps them in
this process; `RedisStore` (app.sessions.redis_store, with settings.redis_url) in Redis, so
several workers or hosts serve one class. Both expire a session after settings.
session_idle_seconds without a touch, bound their number, count failed joins per client IP and
minute, and deliver each published state to the local `Hub` of every process.

Every method is a coroutine run on the event loop; none blocks (the memory store only touches
dicts, the Redis store awaits redis-py's asyncio client).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from typing import Protocol

from app.sessions.hub import Hub, ended_state

FAILURE_WINDOW_S = 60
MAX_TRACKED_CLIENTS = 100_000  # the memory store's failed-join counters, swept beyond this


class StoreUnavailable(Exception):
    """The store did not answer (Redis down): a 503, nothing the client did wrong."""


ANSWERS_FULL, ADDRESS_FULL = "full", "address"


@dataclass(frozen=True)
class Vote:
    voter: str  # the learner identity (app.sessions.voters)
    address: str  # the client address it came from
    step: int
    max_answers: int  # settings.max_session_answers
    per_address: int  # settings.session_answers_per_address


def follower_of(stream: str) -> str:
    return stream.rpartition("|")[0]


class SessionStore(Protocol):
    hub: Hub

    async def start(self) -> None:
        """Ready to deliver published states to this process's hub (call before listening)."""

    async def create(self, fields: dict, max_sessions: int, ttl: int) -> bool:
        """Stores a new session; False when max_sessions are open (nothing stored)."""

    async def load(self, code: str) -> dict | None:
        """The session's fields, None if unknown or expired."""

    async def update(self, code: str, changes: dict, ttl: int) -> dict | None:
        """Sets `changes`, bumps `version`, refreshes the expiry; the fields after, None if gone."""

    async def touch(self, code: str, ttl: int) -> bool:
        """Refreshes the expiry (an open stream's keep-alive); False if the session is gone."""

    async def answers(self, code: str) -> dict[str, int]:
        """Poll answers by learner identity."""

    async def answer(self, code: str, vote: Vote, ttl: int) -> str:
        """Records (or changes) one learner's answer: "ok", or ANSWERS_FULL when max_answers others
        answered, or ADDRESS_FULL when per_address others from the vote's address did."""

    async def clear_answers(self, code: str) -> None: ...

    async def end(self, code: str) -> bool:
        """Deletes the session and everything of it, then publishes hub.ended_state to every
        process's hub; False if it was gone already."""

    async def join(self, code: str, stream: str, ttl: int) -> None:
        """An open stream (named `follower|connection`), alive for ttl seconds unless joined again."""

    async def leave(self, code: str, stream: str) -> None: ...

    async def followers(self, code: str) -> int:
        """Distinct followers (the part of a stream's name before "|") with an open stream, across processes."""

    async def following(self, code: str, follower: str) -> bool:
        """Whether `follower` has an open stream of the session (in any process)."""

    async def answers_by_address(self, code: str) -> dict[str, int]:
        """Learners who answered the poll, per client address they answered from."""

    async def publish(self, code: str, state: dict) -> None:
        """Delivers the state to every process's hub (this one's included)."""

    async def failures(self, client: str) -> int:
        """Failed joins from this client in the current minute."""

    async def add_failure(self, client: str) -> int:
        """Counts one more failed join; the count after it."""

    async def close(self) -> None: ...


def _window() -> int:
    return int(time.time() // FAILURE_WINDOW_S)


class MemoryStore:
    """Sessions in this process's memory. Expiry is checked lazily on each access and swept on
    create (no timer task)."""

    def __init__(self) -> None:
        self.hub = Hub()
        self._fields: dict[str, dict] = {}
        self._expires: dict[str, float] = {}
        self._answers: dict[str, dict[str, int]] = {}
        self._addresses: dict[str, dict[str, str]] = {}  # code -> voter -> address it answered from
        self._streams: dict[str, dict[str, float]] = {}
        self._failures: dict[str, tuple[int, int]] = {}  # client -> (window, count)

    def _alive(self, code: str) -> bool:
        if self._expires.get(code, 0.0) > time.monotonic():
            return True
        self._forget(code)
        return False

    def _forget(self, code: str) -> None:
        for table in (self._fields, self._expires, self._answers, self._addresses, self._streams):
            table.pop(code, None)

    def _sweep(self) -> None:
        for code in list(self._expires):
            self._alive(code)
        window = _window()
        self._failures = {c: wc for c, wc in self._failures.items() if wc[0] == window}

    async def start(self) -> None:
        return None

    async def create(self, fields: dict, max_sessions: int, ttl: int) -> bool:
        self._sweep()
        if len(self._fields) >= max_sessions or fields["code"] in self._fields:
            return False
        self._fields[fields["code"]] = {**fields, "version": 0}
        self._expires[fields["code"]] = time.monotonic() + ttl
        return True

    async def load(self, code: str) -> dict | None:
        return dict(self._fields[code]) if self._alive(code) else None

    async def update(self, code: str, changes: dict, ttl: int) -> dict | None:
        if not self._alive(code):
            return None
        fields = self._fields[code]
        fields.update(changes, version=fields["version"] + 1)
        self._expires[code] = time.monotonic() + ttl
        return dict(fields)

    async def touch(self, code: str, ttl: int) -> bool:
        if not self._alive(code):
            return False
        self._expires[code] = time.monotonic() + ttl
        return True

    async def answers(self, code: str) -> dict[str, int]:
        return dict(self._answers.get(code, {})) if self._alive(code) else {}

    async def answer(self, code: str, vote: Vote, ttl: int) -> str:
        answers = self._answers.setdefault(code, {})
        addresses = self._addresses.setdefault(code, {})
        if vote.voter not in answers:
            if len(answers) >= vote.max_answers:
                return ANSWERS_FULL
            if sum(1 for a in addresses.values() if a == vote.address) >= vote.per_address:
                return ADDRESS_FULL
            addresses[vote.voter] = vote.address
        answers[vote.voter] = vote.step
        return "ok"

    async def clear_answers(self, code: str) -> None:
        self._answers.pop(code, None)
        self._addresses.pop(code, None)

    async def end(self, code: str) -> bool:
        if not self._alive(code):
            return False
        self._forget(code)
        self.hub.deliver(code, ended_state(code))
        return True

    async def join(self, code: str, stream: str, ttl: int) -> None:
        if self._alive(code):
            self._streams.setdefault(code, {})[stream] = time.monotonic() + ttl

    async def leave(self, code: str, stream: str) -> None:
        self._streams.get(code, {}).pop(stream, None)

    async def followers(self, code: str) -> int:
        now = time.monotonic()
        return len({follower_of(s) for s, until in self._streams.get(code, {}).items() if until > now})

    async def following(self, code: str, follower: str) -> bool:
        now = time.monotonic()
        return any(follower_of(s) == follower and until > now for s, until in self._streams.get(code, {}).items())

    async def answers_by_address(self, code: str) -> dict[str, int]:
        return dict(Counter(self._addresses.get(code, {}).values())) if self._alive(code) else {}

    async def publish(self, code: str, state: dict) -> None:
        self.hub.deliver(code, state)

    async def failures(self, client: str) -> int:
        window, count = self._failures.get(client, (None, 0))
        return count if window == _window() else 0

    async def add_failure(self, client: str) -> int:
        count = await self.failures(client) + 1
        if len(self._failures) >= MAX_TRACKED_CLIENTS:
            self._sweep()
        self._failures[client] = (_window(), count)
        return count

    async def close(self) -> None:
        self.hub.close()


def make_store(redis_url: str) -> SessionStore:
    if not redis_url:
        return MemoryStore()
    from app.sessions.redis_store import RedisStore  # redis is only imported when configured

    return RedisStore(redis_url)
