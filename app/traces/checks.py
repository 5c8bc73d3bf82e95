"""Every step's gradient check for one trace: the bug lab's per-step error chart.

A check costs a partial forward replay per direction: milliseconds for the tiny models,
about 17 s for all 156 steps of the class config. So the checks run as a background job,
one step per task in the shared worker pool (a step view asked for meanwhile waits behind
one step, not behind the whole job), and GET .../checks answers with what is done so far.
Results land in the same per-(trace, step) cache the step views read, so neither computes
a check twice.

Backward steps are checked first, in the order they run: the first failing one (the
faulted op, with the bug lab on) is known as early as possible.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from dataclasses import dataclass

import xt_core
from app.traces.cache import LRU
from xt_core.checks.directional import StepCheck
from xt_core.checks.gradcheck import check_record
from xt_core.checks.tolerances import FINITE_DIFFERENCES

log = logging.getLogger("xt.checks")


@dataclass(frozen=True)
class StepResult:
    index: int
    name: str
    phase: str
    max_rel_error: float  # NaN when the check itself failed to run
    passed: bool


def check_order(trace: xt_core.Trace) -> list[int]:
    """Backward steps first, in execution order; then everything else, in step order."""
    backward = [r.index for r in trace.records if r.phase == "backward"]
    others = [r.index for r in trace.records if r.phase != "backward"]
    return backward + others


class ChecksJob:
    """The checks of one trace, filled in step by step by worker threads. A running job holds
    its trace (asking the store per step would rebuild an evicted trace at every step) and
    drops it when done; ChecksRunner bounds the bytes running jobs hold."""

    def __init__(self, trace_id: str, trace: xt_core.Trace):
        self.trace_id = trace_id
        self.trace: xt_core.Trace | None = trace
        self.nbytes = trace.nbytes()
        self.records = [(r.index, r.name, r.phase) for r in trace.records]
        self.labels = [(r.layer, r.kind) for r in trace.records]  # with name and phase: the step's title
        self.final_views: dict[str, dict] = {}  # the answer once complete, by language (GET .../checks caches it here)
        self.tolerance = FINITE_DIFFERENCES
        self.pending = check_order(trace)
        self.finished: Future = Future()  # resolves when every step is checked
        self.room = None  # what the job holds in the memory budget (app.traces.check_room), if anything
        self._results: dict[int, StepResult] = {}
        self._lock = threading.Lock()

    @property
    def total(self) -> int:
        return len(self.records)

    def add(self, result: StepResult) -> None:
        with self._lock:
            self._results[result.index] = result

    def results(self) -> list[StepResult]:
        """What is done so far, in step order."""
        with self._lock:
            return [self._results[i] for i in sorted(self._results)]

    def first_failing(self) -> tuple[int | None, bool]:
        """(index of the first failing backward step, whether that answer is final): the
        backward steps are checked in order, so it is final as soon as one fails."""
        results = {r.index: r for r in self.results()}
        for index, _, phase in self.records:
            if phase != "backward":
                continue
            result = results.get(index)
            if result is None:
                return None, False
            if not result.passed:
                return index, True
        return None, True


class ChecksBusy(Exception):
    """Running jobs already hold `max_running_bytes` of traces: try again shortly (503)."""

    def __init__(self, running: int):
        super().__init__(f"{running} gradient-check jobs are running and hold the memory they may use")
        self.running = running


class ChecksRunner:
    """One job per trace id (the latest `max_jobs` kept); each step is a separate task. Running
    jobs hold their traces, together at most `max_running_bytes` (one job always may run)."""

    def __init__(
        self,
        executor: Executor,
        gradchecks: LRU[StepCheck],
        max_jobs: int = 256,
        max_running_bytes: int = 1 << 30,
        ensure_running: Callable[[], None] | None = None,
    ):
        self.executor = executor
        # called when a request starts a job: pools a lifespan shut down are started again (a
        # job's own next step, submitted from a worker thread, never restarts them)
        self.ensure_running = ensure_running
        self.gradchecks = gradchecks
        self.max_running_bytes = max_running_bytes
        self._jobs: LRU[ChecksJob] = LRU(max_jobs)
        self._running: dict[str, ChecksJob] = {}
        # reentrant: a task that finishes before its done-callback is attached runs the callback
        # (the next step, or _finish) in the thread that holds the lock in start()
        self._lock = threading.RLock()

    def get(self, trace_id: str) -> ChecksJob | None:
        return self._jobs.get(trace_id)

    def start(self, trace_id: str, trace: xt_core.Trace, room=None) -> ChecksJob:
        """The trace's job: started now (holding `room`: app.traces.check_room), or the one a concurrent
        request started first. Raises ChecksBusy when running jobs already hold max_running_bytes."""
        if self.ensure_running is not None:
            self.ensure_running()
        with self._lock:
            job = self._jobs.get(trace_id)
            if job is None:
                held = sum(j.nbytes for j in self._running.values())
                if self._running and held + trace.nbytes() > self.max_running_bytes:
                    raise ChecksBusy(len(self._running))
                job = ChecksJob(trace_id, trace)
                job.room = room
                self._jobs.put(trace_id, job)
                self._running[trace_id] = job
                self._submit_next(job, may_pause=False)
        return job

    def _finish(self, job: ChecksJob, error: BaseException | None = None) -> None:
        job.trace = None  # the job outlives its need for the trace
        with self._lock:
            self._running.pop(job.trace_id, None)
        if not job.finished.done():
            if error is None:
                job.finished.set_result(job)
            else:
                job.finished.set_exception(error)

    def _submit_next(self, job: ChecksJob, may_pause: bool = True) -> None:
        """The job's next step, submitted; first, between two steps, the job may make way for work
        waiting for memory (app.traces.check_room) and go on once it has."""
        if not job.pending:
            self._finish(job)
            return
        resumed = job.room.between_steps(job) if may_pause and job.room is not None else None
        if resumed is not None:
            resumed.add_done_callback(lambda made_way: self._resume(job, made_way))
            return
        index = job.pending.pop(0)
        try:
            task = self.executor.submit(self._check_one, job, index)
        except RuntimeError:  # the pool is shut down (the lifespan ended): the job stops where it is
            job.pending.insert(0, index)
            self._stop(job)
            return
        task.add_done_callback(lambda _: self._submit_next(job))

    def _resume(self, job: ChecksJob, made_way: Future) -> None:
        if made_way.cancelled() or made_way.exception() is not None:  # its trace is gone, or the server stops
            if not made_way.cancelled():
                log.warning("checks of trace %s stopped: %r", job.trace_id, made_way.exception())
            self._stop(job)
        else:
            self._submit_next(job, may_pause=False)

    def _stop(self, job: ChecksJob) -> None:
        self._jobs.pop(job.trace_id)  # forgotten: the next request starts it again, on new pools
        self._finish(job)  # waiters get the progress so far (complete: false), never an error

    def _check_one(self, job: ChecksJob, index: int) -> None:
        _, name, phase = job.records[index]
        try:
            check = self.gradchecks.get_or_compute((job.trace_id, index), lambda: check_record(job.trace, index))
            job.add(StepResult(index, name, phase, check.max_rel_error, check.passed))
        except Exception:  # a check that cannot run is a failed check, never a stuck job
            log.exception("gradient check of step %d of trace %s", index, job.trace_id)
            job.add(StepResult(index, name, phase, float("nan"), False))
