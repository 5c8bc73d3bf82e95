"""The classroom sessions of one app: create, look up (rate-limited), change (presenter only),
poll, answer, and stream. Routes (app/routes/sessions.py) stay thin around it; the store
(memory or Redis) holds the state, its hub fans the published states out to this process's
streams.

A presenter's change is published at once. What changes many times a second in a big class (a
stream opening or closing, an answer coming in) is published at most every PUBLISH_LATER_S per
session and process: the count and the histogram stay live without one event per student.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import AsyncIterator, Callable

import anyio
from fastapi import HTTPException
from sse_starlette import ServerSentEvent

from app.guesses import client_of
from app.sessions.codes import key_digest, key_matches, new_code, new_presenter_key, normalize_code
from app.sessions.hub import ENDED, Listener, encode
from app.sessions.rules import walkthrough_id
from app.sessions.state import closed_poll, compose, student_view
from app.sessions.store import ADDRESS_FULL, ANSWERS_FULL, StoreUnavailable, Vote, make_store
from app.settings import Settings
from app.spec import ResolvedSpec
from app.words.said import Said

log = logging.getLogger("xt.sessions")
PUBLISH_LATER_S = 0.3
_NOTHING_NEW = object()  # a beat passed with no new state to send
CODE_TRIES = 8  # a fresh code colliding with an open one 8 times in a row: the cap, not bad luck


def walk_fields(spec: ResolvedSpec, steps: list) -> dict:
    """The fields of the walkthrough a class follows: `spec` and its trace's `steps` (its records)."""
    cfg = spec.cfg
    limits = {
        "n_steps": len(steps),
        "backward": [r.index for r in steps if r.phase == "backward"],
        "T": int(spec.inputs.shape[1]),
        "n_head": cfg.n_head,
        "n_layer": cfg.n_layer,
    }
    return {
        "spec": spec.canonical,
        "trace_id": spec.id,
        "walkthrough": walkthrough_id(spec),
        "limits": limits,
        "buglab": bool(spec.faults),
    }


# A film class on its film: no walkthrough (a step opened from the film fills these: walk_fields).
ON_THE_FILM = {"spec": None, "trace_id": None, "walkthrough": None, "limits": None, "buglab": False, "step": 0}


class Sessions:
    def __init__(self, settings: Settings, on_reveal: Callable[[str], None] | None = None):
        """`on_reveal(trace_id)` runs in every process whose hub a revealed state reaches (the
        quiz ledger unseals the class's trace for its learners there)."""
        self.settings = settings
        self.store = make_store(settings.redis_url)
        self.process = secrets.token_hex(4)  # names this process's streams in the store
        self._later: dict[str, asyncio.Task] = {}
        self.on_reveal = on_reveal
        self.store.hub.on_state = self._delivered

    def _delivered(self, state: dict) -> None:
        if self.on_reveal is not None and state.get("poll", {}).get("status") == "revealed":
            self.on_reveal(state["trace_id"])

    # ---------------------------------------------------------------- create and find

    async def create(
        self, spec: ResolvedSpec, steps: list, lesson: str | None, first_step: int, lang: str = "en"
    ) -> tuple[str, str]:
        """A new session for `spec` (whose trace has `steps`, its records): (code, presenter key).
        `lang`: the presenter's language, the class's (app/routes/sessions.py)."""
        fields = {**walk_fields(spec, steps), "run": None, "run_steps": None, "film_step": None, "run_step": None}
        return await self._create(fields | {"lesson": lesson, "step": first_step}, lang)

    async def create_film(
        self, run: str, run_steps: int, film_step: int, lesson: str | None, lang: str = "en"
    ) -> tuple[str, str]:
        """A new film class on the recorded run `run` (of `run_steps` steps), its film at `film_step`:
        no walkthrough until the presenter opens one of the run's steps (state `run_step`)."""
        fields = {**ON_THE_FILM, "run": run, "run_steps": run_steps, "film_step": film_step, "lesson": lesson}
        return await self._create(fields, lang)

    async def _create(self, fields: dict, lang: str) -> tuple[str, str]:
        s, key = self.settings, new_presenter_key()
        fields = fields | {
            "key": key_digest(key),
            "lesson_step": 0 if fields["lesson"] else None,
            "jacobian": None,
            "head": None,
            "poll": closed_poll(lang),
            "lang": lang,
        }
        for _ in range(CODE_TRIES):
            code = new_code()
            if await self.store.create({**fields, "code": code}, s.max_sessions, s.session_idle_seconds):
                return code, key
        raise HTTPException(
            503,
            detail=Said("error-sessions-full", most=s.max_sessions, idle=s.session_idle_seconds),
            headers={"Retry-After": "60"},
        )

    async def find(self, code_text: str, client: str) -> dict:
        """The session's fields. An unknown code counts as a failed join for this client (an
        address, an IPv6 /64: app.guesses.client_of); past settings.join_failures_per_minute every
        lookup from it is a 429 until the minute ends. Nothing counts over all clients together."""
        limit = self.settings.join_failures_per_minute
        client = client_of(client)
        if await self.store.failures(client) >= limit:
            raise HTTPException(
                429,
                detail=Said("error-session-codes-guessed", most=limit),
                headers={"Retry-After": "60"},
            )
        code = normalize_code(code_text)
        fields = await self.store.load(code) if code else None
        if fields is None:
            await self.store.add_failure(client)
            raise HTTPException(404, detail=Said("error-no-session", code=repr(code_text[:12])))
        return fields

    @staticmethod
    def is_presenter(fields: dict, key: str | None) -> bool:
        return key_matches(key, fields["key"])

    def require_presenter(self, fields: dict, key: str | None) -> None:
        if not self.is_presenter(fields, key):
            raise HTTPException(403, detail=Said("error-not-presenter"))

    # ---------------------------------------------------------------- state

    async def compose(self, fields: dict) -> dict:
        code = fields["code"]
        answers, by_address = await self.store.answers(code), await self.store.answers_by_address(code)
        return compose(fields, answers, await self.store.followers(code), by_address)

    async def view(self, fields: dict, presenter: bool) -> dict:
        state = await self.compose(fields)
        return state if presenter else student_view(state)

    async def change(self, fields: dict, changes: dict) -> dict:
        """Stores the changes and publishes the new state at once; the presenter's view of it."""
        after = await self.store.update(fields["code"], changes, self.settings.session_idle_seconds)
        if after is None:
            raise HTTPException(404, detail=Said("error-session-ended", code=fields["code"]))
        state = await self.compose(after)
        await self.store.publish(after["code"], state)
        return state

    async def answer(self, fields: dict, voter: str, address: str, step: int) -> None:
        """One learner's vote (changed if they voted already): 409 unless `voter` (a seat, a learner
        identity) has a stream following the class right now (a client's votes are at most the
        streams it holds: app.sessions.voters), when the poll is full, or when
        session_answers_per_address other learners already voted from this address."""
        if not await self.store.following(fields["code"], voter):
            raise HTTPException(409, detail=Said("net-follow-to-answer"))
        s = self.settings
        vote = Vote(voter, address, step, s.max_session_answers, s.session_answers_per_address)
        outcome = await self.store.answer(fields["code"], vote, s.session_idle_seconds)
        if outcome == ANSWERS_FULL:
            raise HTTPException(409, detail=Said("error-poll-full", most=s.max_session_answers))
        if outcome == ADDRESS_FULL:
            raise HTTPException(409, detail=Said("error-poll-address-full", most=s.session_answers_per_address))
        if outcome != "ok":
            raise HTTPException(404, detail=Said("error-session-ended", code=fields["code"]))
        self.publish_later(fields["code"])

    async def end(self, fields: dict) -> None:
        """The presenter ended the class: the session is gone (every later move, answer or
        lookup is a 404) and every open stream of it, in every process, sends `event: ended`."""
        if not await self.store.end(fields["code"]):
            raise HTTPException(404, detail=Said("error-session-ended", code=fields["code"]))

    async def clear_answers(self, fields: dict) -> None:
        await self.store.clear_answers(fields["code"])

    def publish_later(self, code: str) -> None:
        """Publishes the session's state within PUBLISH_LATER_S (once, however often asked meanwhile)."""
        if code in self._later:
            return

        async def later() -> None:
            await asyncio.sleep(PUBLISH_LATER_S)
            self._later.pop(code, None)
            try:
                fields = await self.store.load(code)
                if fields is not None:
                    await self.store.publish(code, await self.compose(fields))
            except StoreUnavailable:
                log.warning("session %s: the store did not answer; the next change republishes", code)

        self._later[code] = asyncio.get_running_loop().create_task(later())

    # ---------------------------------------------------------------- events

    async def events(self, fields: dict, follower: str | None) -> AsyncIterator[ServerSentEvent]:
        """The session's states as they change, newest only. Every settings.
        follower_heartbeat_seconds the stream renews the session and its follower entry
        (`follower`, a learner identity or an address: one follower however many streams it
        opens; None for the presenter, who is not counted) and sends a keep-alive comment
        (within sse_ping_seconds: proxies close idle streams). A session that expired or that
        the presenter ended sends `event: ended` and closes. A store that stops answering
        ends the stream cleanly (EventSource reconnects)."""
        code = fields["code"]
        stream = None if follower is None else f"{follower}|{self.process}:{secrets.token_hex(8)}"
        listener = self.store.hub.listen(code, follower is None)
        try:
            async for event in self._stream(fields, listener, stream):
                yield event
        except StoreUnavailable as exc:
            log.warning("session %s: stream closed, the store did not answer (%s)", code, exc)
        finally:
            self.store.hub.forget(code, listener)
            if stream is not None:
                with anyio.CancelScope(shield=True):
                    try:
                        await self.store.leave(code, stream)
                        self.publish_later(code)
                    except Exception:  # the count heals by itself: the stream's entry expires
                        log.warning("session %s: could not remove stream %s", code, stream)

    async def _stream(self, fields: dict, listener: Listener, stream: str | None) -> AsyncIterator[ServerSentEvent]:
        code = fields["code"]
        beat = min(self.settings.follower_heartbeat_seconds, self.settings.sse_ping_seconds)
        alive_s = 2 * beat + 2  # two beats missed (a killed worker's stream) and it no longer counts
        await self.store.start()
        if stream is not None:
            await self.store.join(code, stream, alive_s)
            self.publish_later(code)
        first = await self.compose(await self.store.load(code) or fields)
        listener.offer(first["version"], encode(first), encode(student_view(first)))
        clock = asyncio.get_running_loop()
        renew_at = clock.time() + beat
        while True:
            # The renewal keeps its own clock: a class whose presenter moves more often than
            # once a beat sends events without pause, and waiting for a quiet beat expired
            # every follower of the busiest classes. asyncio.timeout, not wait_for: Python
            # 3.11's wait_for drops a cancellation that comes as a state arrives, and the
            # stream of a learner who left as the presenter moved went on for ever.
            try:
                async with asyncio.timeout(max(0.0, renew_at - clock.time())):
                    data = await listener.next()
            except TimeoutError:
                data = _NOTHING_NEW
            if clock.time() >= renew_at:
                renew_at = clock.time() + beat
                if not await self._renew(code, stream, alive_s):
                    yield ServerSentEvent(data="{}", event="ended")
                    return
            if data is _NOTHING_NEW:
                yield ServerSentEvent(comment="keep-alive")
                continue
            if data is None:  # the server is stopping
                return
            if data is ENDED:  # the presenter ended the class
                yield ServerSentEvent(data="{}", event="ended")
                return
            yield ServerSentEvent(data=data)

    async def _renew(self, code: str, stream: str | None, alive_s: int) -> bool:
        """Keeps the session and the stream's follower entry alive; False if the session is gone."""
        if not await self.store.touch(code, self.settings.session_idle_seconds):
            return False
        if stream is not None:
            await self.store.join(code, stream, alive_s)
        return True

    async def close(self) -> None:
        for task in self._later.values():
            task.cancel()
        await self.store.close()
