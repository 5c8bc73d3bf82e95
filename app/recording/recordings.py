"""Runs recorded from the page (POST /api/runs; docs/film.md, "Recording from the page"): each a
background task on the event loop that trains its run a slice at a time (xt_core.film.record.Recording),
every slice a job of the build queue like any trace build (app/traces/admission.py: admitted with its
estimated seconds and bytes for the client that asked, in its turn, round robin with the other
clients' builds, in the builds pool and never the small builds' lane), so a recording of minutes
never holds the queue: between two slices every other client's waiting build takes its turn, and a
classmate's tiny build has its own lane throughout. Its progress is the training progress the walk
page polls (app.traces.training.TrainingProgress, by "run:NAME"), read by GET /api/runs/{name}/progress.

The limits (app/settings.py) are checked before anything is written (app.recording.limits), and then the
recordings under way: settings.max_recordings on the server (503), max_recordings_per_client for one
client (429). A run lands in settings.recorded_runs_dir under a name the server made; one that fails
or is stopped (the server's shutdown) is removed.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import shutil
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from fastapi import HTTPException

from app.recording import limits as record_limits
from app.recording.limits import NoRoom, RecordCost
from app.services import Services
from app.settings import Settings
from app.traces.busy import MAX_RETRY_AFTER_S
from app.words.said import Said
from xt_core.film.plan import RunPlan
from xt_core.film.record import Recording

QUEUE_RETRY_S = 2.0  # a slice refused by a full queue (503/429) is asked again after its Retry-After, or this
KEEP_FINISHED = 64  # finished recordings whose progress is still answered (the runs themselves stay listed)


@dataclass
class Recorder:
    """One recording from the page: its plan, cost, client, and where it stands."""

    name: str
    folder: Path
    plan: RunPlan
    cost: RecordCost
    client: str
    state: str = "queued"  # queued | recording | finishing | done | failed
    slices: int = 0  # slices admitted so far: the current one's queue id is f"run:{name}:{slices}"
    waiting: bool = True  # the current slice waits its turn in the build queue
    error: Said | None = None
    recording: Recording | None = None  # made by the first slice, in a worker
    task: asyncio.Task | None = field(default=None, repr=False)

    @property
    def key(self) -> str:
        return f"run:{self.name}"  # its training progress's id (never a trace id: those are hex digests)

    @property
    def slice_id(self) -> str:
        return f"{self.key}:{self.slices}"


@dataclass(frozen=True)
class SliceJob:
    """What the build queue needs of a job: its id (Admission.admit reads .id; the cost is given)."""

    id: str


class Recordings:
    """The recordings this process runs and has finished lately, by name."""

    def __init__(self, settings: Settings, services: Services):
        self.settings = settings
        self.services = services
        self.recorders: dict[str, Recorder] = {}

    def under_way(self) -> list[Recorder]:
        return [r for r in self.recorders.values() if r.state not in ("done", "failed")]

    def start(self, plan: RunPlan, client: str) -> Recorder:
        """Checks the recordings under way and the page runs' room (refusing before anything is
        written), then starts the recording of `client` (the build queue's: Services.client_key) in
        the background."""
        busy = self.under_way()
        cost = record_limits.record_cost(plan, self.settings)
        mine = sum(r.client == client for r in busy)
        if mine >= self.settings.max_recordings_per_client:
            said = Said("film-record-error-yours", most=self.settings.max_recordings_per_client)
            raise HTTPException(429, detail=said, headers={"Retry-After": str(self._retry_after(busy))})
        if len(busy) >= self.settings.max_recordings:
            said = Said("film-record-error-busy", most=self.settings.max_recordings, seconds=self._retry_after(busy))
            raise HTTPException(503, detail=said, headers={"Retry-After": str(self._retry_after(busy))})
        need = plan.estimated_bytes() + sum(r.plan.estimated_bytes() for r in busy)
        try:
            record_limits.make_room(self.settings, need, {r.name for r in busy})
        except NoRoom as exc:
            seconds = min(MAX_RETRY_AFTER_S, max(1, math.ceil(exc.seconds)))
            said = Said("film-record-error-full", runs=self.settings.max_recorded_runs, seconds=seconds)
            raise HTTPException(503, detail=said, headers={"Retry-After": str(seconds)}) from None
        name = record_limits.new_name(self.settings, plan.task)
        folder = Path(self.settings.recorded_runs_dir) / name
        recorder = Recorder(name, folder, plan, cost, client)
        self.recorders[name] = recorder
        self._forget_finished()
        recorder.task = asyncio.ensure_future(self._record(recorder))
        return recorder

    def _retry_after(self, busy: list[Recorder]) -> int:
        """The seconds until the soonest recording under way ends, by its estimate (bounded)."""
        left = [(r.plan.steps - self._done(r)) * r.cost.step_seconds for r in busy] or [QUEUE_RETRY_S]
        return min(MAX_RETRY_AFTER_S, max(1, math.ceil(min(left))))

    def _done(self, recorder: Recorder) -> int:
        progress = self.services.store.progress.get(recorder.key)
        return progress["done"] if progress else 0

    def _forget_finished(self) -> None:
        finished = [name for name, r in self.recorders.items() if r.state in ("done", "failed")]
        for name in finished[: max(0, len(finished) - KEEP_FINISHED)]:
            del self.recorders[name]

    async def _record(self, recorder: Recorder) -> None:
        """Slice after slice until the run is written; a failure (or the server stopping) removes its folder."""
        try:
            while not await self._slice(recorder):
                pass
            recorder.state = "done"
        except BaseException as exc:
            recorder.state, recorder.error = "failed", Said("film-record-error-failed", name=recorder.name)
            shutil.rmtree(recorder.folder, ignore_errors=True)
            if not isinstance(exc, Exception):
                raise  # cancelled: the loop is ending
        finally:
            self.services.store.progress.finish(recorder.key, failed=recorder.state != "done")

    async def _slice(self, recorder: Recorder) -> bool:
        """One slice admitted in its turn and run in the pool it was given; True once the run is written."""
        steps = min(recorder.cost.slice_steps, recorder.plan.steps)
        if recorder.recording is not None:
            steps = recorder.recording.next_steps(recorder.cost.slice_steps)
        recorder.slices += 1
        recorder.waiting = True
        admission = self.services.admission
        ticket = await self._admitted(SliceJob(recorder.slice_id), recorder, recorder.cost.of(steps))
        try:
            await admission.wait(ticket)
            recorder.waiting = False
            if recorder.recording is not None and recorder.recording.step == recorder.plan.steps:
                recorder.state = "finishing"
            job = partial(self._advance, recorder)
            return await self.services.run(job, pool=ticket.pool, on_done=partial(admission.release, ticket))
        except BaseException:
            admission.release(ticket)  # idempotent: refused, cancelled, or failed before its job ran
            raise

    async def _admitted(self, job: SliceJob, recorder: Recorder, cost):
        """The slice's ticket; a full queue (503) or the client's share (429) waits its Retry-After and asks again."""
        while True:
            try:
                return self.services.admission.admit(job, recorder.client, cost=cost)
            except HTTPException as exc:
                if exc.status_code not in (429, 503):
                    raise
                await asyncio.sleep(float((exc.headers or {}).get("Retry-After", QUEUE_RETRY_S)))

    def _advance(self, recorder: Recorder) -> bool:
        """In a worker: the first slice makes the recording (its folder and step 0's checkpoint), each trains on."""
        if recorder.recording is None:
            Path(self.settings.recorded_runs_dir).mkdir(parents=True, exist_ok=True)
            report = self.services.store.progress.reporter(recorder.key, recorder.plan.steps)
            recorder.recording = Recording(recorder.plan, recorder.folder, report)
            recorder.state = "recording"
        return recorder.recording.advance(recorder.cost.slice_steps)

    def progress(self, name: str) -> dict | None:
        """Where the recording `name` stands, or None if this process records no such run."""
        recorder = self.recorders.get(name)
        if recorder is None:
            return None
        progress = self.services.store.progress.get(recorder.key) or {"done": 0, "loss": None, "seconds": 0.0}
        place = self.services.admission.where(recorder.slice_id) if recorder.waiting else {}
        return {
            "name": name,
            "state": recorder.state,
            "done": progress["done"],
            "total": recorder.plan.steps,
            "loss": progress["loss"],
            "seconds": progress["seconds"],
            "waiting": recorder.waiting and recorder.state not in ("done", "failed"),
            "ahead": place.get("ahead", 0),
            "error": recorder.error,
        }

    async def stop(self) -> None:
        """The server is stopping: every recording under way ends (its folder removed)."""
        tasks = [r.task for r in self.recorders.values() if r.task is not None and not r.task.done()]
        for task in tasks:
            task.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.gather(*tasks, return_exceptions=True)


def started(recorder: Recorder) -> dict:
    """POST /api/runs's answer: the run's name, its plan's choices and estimates, where to poll and watch."""
    plan = recorder.plan
    return {
        "name": recorder.name,
        "state": recorder.state,
        "task": plan.task,
        "steps": plan.steps,
        "every": plan.every,
        "warmup": plan.warmup,
        "dense": plan.dense,
        "estimated_bytes": plan.estimated_bytes(),
        "estimated_seconds": round(plan.steps * recorder.cost.step_seconds, 1),
        "progress": f"/api/runs/{recorder.name}/progress",
        "film": f"/film?run={recorder.name}",
    }
