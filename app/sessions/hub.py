"""This process's listeners (open event streams), by session code, and the fan-out of each
published state to them.

A state is encoded once per view (the presenter's, with the poll histogram, and the students')
and handed to every listener of the session. A listener keeps only the newest state: a slow
client skips intermediate states instead of queueing them (the class follows the presenter,
not the path the presenter took), and a state older than one already seen (a late delivery)
is dropped by its `version`.

A session the presenter ended is published as ENDED_STATE ({"code", "ended": true}): every
listener of it is told once (its next() answers ENDED) and the stream sends `event: ended`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

from app.sessions.state import student_view

ENDED = "ended"  # what Listener.next() answers once the presenter ended the session


def ended_state(code: str) -> dict:
    """What a store publishes when the presenter ends a session (DELETE /api/sessions/{code})."""
    return {"code": code, "ended": True}


def encode(state: dict) -> str:
    return json.dumps(state, ensure_ascii=False, separators=(",", ":"))


class Listener:
    """One open stream: the newest state not yet sent, and an event set when there is one."""

    def __init__(self, presenter: bool):
        self.presenter = presenter
        self.version = -1
        self.latest: str | None = None
        self.last_sent: str | None = None
        self.ready = asyncio.Event()
        self.closed = False
        self.ended = False

    def offer(self, version: int, presenter_data: str, student_data: str) -> None:
        if version < self.version:
            return
        self.version = version
        data = presenter_data if self.presenter else student_data
        if data != self.last_sent:
            self.latest = data
            self.ready.set()

    async def next(self) -> str | None:
        """The newest unsent state; ENDED once the session ended; None once the hub closed."""
        await self.ready.wait()
        self.ready.clear()
        if self.closed:
            return None
        if self.ended:
            return ENDED
        data, self.latest = self.latest, None
        self.last_sent = data
        return data

    def end(self) -> None:
        self.ended = True
        self.ready.set()

    def close(self) -> None:
        self.closed = True
        self.ready.set()


class Hub:
    def __init__(self) -> None:
        self._listeners: dict[str, set[Listener]] = {}
        self.on_state: Callable[[dict], None] | None = None  # told of every state published to this process

    def listen(self, code: str, presenter: bool) -> Listener:
        listener = Listener(presenter)
        self._listeners.setdefault(code, set()).add(listener)
        return listener

    def forget(self, code: str, listener: Listener) -> None:
        listeners = self._listeners.get(code)
        if listeners is not None:
            listeners.discard(listener)
            if not listeners:
                del self._listeners[code]

    def deliver(self, code: str, state: dict) -> None:
        if self.on_state is not None:
            self.on_state(state)
        listeners = self._listeners.get(code)
        if not listeners:
            return
        if state.get("ended"):
            for listener in listeners:
                listener.end()
            return
        presenter_data = encode(state)
        student_data = encode(student_view(state))
        for listener in listeners:
            listener.offer(state["version"], presenter_data, student_data)

    def close(self) -> None:
        for listeners in self._listeners.values():
            for listener in listeners:
                listener.close()
        self._listeners.clear()
