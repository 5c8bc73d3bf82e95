"""A running check job's memory (app.traces.checks): its trace and the float64 room its steps replay
in (app.traces.working.check_bytes) count in the one budget from the job's start to its end.
A SmolLM2 trace's every-step checks take minutes; a build or a hold waiting for bytes does not wait
them out (issue 35, finding 7: a float64 build waited >900 s behind one job). At a step boundary,
while something waits for bytes (Admission.wants_room), the job makes way: it lets its room go and
drops its trace (it stays cached, evictable), takes its trace again (a cache hit, or rebuilt in its
turn) and holds its room again behind the builds admitted before (Admission.hold, after_builds; the
trace let go again while it waits: app.traces.room), then goes on where it stopped (its
checks done so far are cached per step)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from concurrent.futures import Future

from app.traces.room import Reads

LetGo = Callable[[], None]


class CheckRoom:
    """What one running check job holds, let go and taken again at its step boundaries. `wants_room()`:
    whether something waits for bytes; `retake(trace_id)`: the trace again (through admission), with
    its spec; `hold(reads)`: its room, held behind the builds waiting (`reads.trace` let go while it
    waits, then taken again); `let_go`: the room held at the start."""

    def __init__(
        self,
        wants_room: Callable[[], bool],
        retake: Callable[[str], Awaitable[Reads]],
        hold: Callable[[Reads], Awaitable[LetGo]],
        let_go: LetGo,
    ):
        self.loop = asyncio.get_running_loop()  # made on the loop that holds the room; steps end in worker threads
        self.wants_room, self.retake, self.hold, self.let_go = wants_room, retake, hold, let_go

    def between_steps(self, job) -> Future | None:
        """Called from a worker thread as a step ends: None to go on at once, else a future that resolves
        once the job made way and may take its next step (failed: the job stops where it is)."""
        if not self.wants_room() or self.loop.is_closed():
            return None
        return asyncio.run_coroutine_threadsafe(self._make_way(job), self.loop)

    async def _make_way(self, job) -> None:
        trace_id, job.trace = job.trace_id, None  # unreferenced first: its bytes count as evictable
        self.end()
        reads = await self.retake(trace_id)
        self.let_go = await self.hold(reads)
        job.trace = reads.trace

    def end(self) -> None:
        """Lets the room held go (the job ended, or makes way)."""
        let_go, self.let_go = self.let_go, _nothing_held
        let_go()


def _nothing_held() -> None:
    pass
