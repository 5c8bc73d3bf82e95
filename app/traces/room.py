"""Where a job's working bytes are held in the one budget (app.traces.working estimates them;
app.traces.admission holds them): `Room`, and what a job reads (`Reads`), let go while it waits."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Protocol

from fastapi import Request

from app.spec import ResolvedSpec
from app.traces.admission import Held
from xt_core import Trace


class Reads(Protocol):
    """What a job reads: a trace (None while the job waits for its bytes) and the spec it is built from."""

    spec: ResolvedSpec
    trace: Trace | None


class Room:
    """Working bytes held in the one budget for a job, through the admission (`hold`: Admission.hold,
    which returns what lets them go); past `small_bytes`, a views job holds them one at a time (its
    turn: the views pool has one thread).

    While a job waits for its bytes (or its turn), its request lets go of the traces the job reads
    (`Reads.trace` set to None): they stay cached, and work that runs past the budget because nothing
    else can (a hold alone) may evict them instead of running beside them (issue 35, finding 7: a
    mix's peak had 1.1 GB of traces pinned by requests waiting their turn beside an AdamW check run
    alone). Its own bytes never evict them (Admission.hold `spare`). Once held, the job takes them
    again from the cache (`cached`); one evicted meanwhile is rebuilt (`rebuild`, through the
    admission) with its bytes and its turn let go first (a build never waits behind bytes its own
    request holds, nor another views job behind that build), then its turn and bytes are waited for
    once more, the traces kept this time: at most one rebuild a request."""

    def __init__(
        self,
        hold: Callable[..., Awaitable[Held]],
        small_bytes: int,
        cached: Callable[[ResolvedSpec], Trace | None],
        rebuild: Callable[[ResolvedSpec, Request | None], Awaitable[Trace]],
    ):
        self.hold, self.cached, self.rebuild = hold, cached, rebuild
        self.small_bytes = small_bytes
        self._turn: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None  # the lock of the loop serving

    @contextlib.asynccontextmanager
    async def held(self, nbytes: int, *reads: Reads, request: Request | None = None) -> AsyncIterator[Held]:
        """`nbytes` held for the block, a views job's (waiting for them, and for its turn if large, with
        `reads`' traces let go); the block may keep part of them past its end (Held.keep: a download's
        array while it streams)."""
        turn = None if nbytes <= self.small_bytes else self._large_turn()
        let_go = await self._taken(nbytes, reads, request, turn)
        try:
            yield let_go
        finally:
            let_go()
            if turn is not None:
                turn.release()

    async def hold_for(
        self, nbytes: int, *reads: Reads, request: Request | None = None, after_builds: bool = False
    ) -> Held:
        """`nbytes` held (Admission.hold), the traces `reads` read let go while it waits and taken again
        once held (rebuilt if evicted meanwhile); returns what lets the bytes go."""
        return await self._taken(nbytes, reads, request, None, after_builds)

    async def _taken(
        self,
        nbytes: int,
        reads: tuple[Reads, ...],
        request: Request | None,
        turn: asyncio.Lock | None,
        after_builds: bool = False,
    ) -> Held:
        """Its turn (if `turn`: acquired on return) and its bytes, `reads`' traces let go while it waits
        and taken again; one evicted meanwhile rebuilt with neither held, then both waited for again."""
        for job in reads:
            job.trace = None  # before its turn too: a large job may wait out another's whole run
        spare = frozenset(job.spec.id for job in reads)
        held = await self._turn_and_bytes(nbytes, turn, after_builds, spare)
        if self._retaken(reads):
            return held
        held()  # a build waits for bytes: none held by its own request
        _release(turn)
        for job in reads:
            job.trace = await self.rebuild(job.spec, request)
        return await self._turn_and_bytes(nbytes, turn, after_builds, frozenset())  # its traces kept

    async def _turn_and_bytes(
        self, nbytes: int, turn: asyncio.Lock | None, after_builds: bool, spare: frozenset[str]
    ) -> Held:
        if turn is not None:
            await turn.acquire()
        try:
            return await self.hold(nbytes, after_builds=after_builds, spare=spare)
        except BaseException:
            _release(turn)
            raise

    def _retaken(self, reads: tuple[Reads, ...]) -> bool:
        traces = [self.cached(job.spec) for job in reads]
        if any(trace is None for trace in traces):
            return False
        for job, trace in zip(reads, traces, strict=True):
            job.trace = trace
        return True

    def _large_turn(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()  # an app's lifespan may end and start again on another loop
        if self._turn is None or self._turn[0] is not loop:
            self._turn = (loop, asyncio.Lock())
        return self._turn[1]


def _release(turn: asyncio.Lock | None) -> None:
    if turn is not None:
        turn.release()
