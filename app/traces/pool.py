"""The worker pool: concurrent.futures' Executor contract on daemon threads.

ThreadPoolExecutor joins its threads when the interpreter exits, so a server told to stop
(SIGTERM) waits for whatever step a worker is computing: seconds for a large trace, and a
training run of minutes if nothing stops it. Here a queued job is cancelled at shutdown,
a running training stops at its next step (app.traces.training.TrainingProgress.stop), and
a numpy call still running does not hold the process: its daemon thread is left behind.
"""

from __future__ import annotations

import queue
import threading
from concurrent.futures import Executor, Future

# The app's worker pools, by what they run (app.services.Services.run's `pool`):
#   builds  trace builds, trainings, every-step checks, a real model's deferred check: seconds each
#           (settings.worker_threads threads)
#   views   answers made from a trace already built: a step view (a layer replayed, tens of ms),
#           a head, a Jacobian, a diff, an update, a slice: one thread, so a class's views never
#           wait behind the build under way (on 2 cores: one core builds, the other answers)
#   light   jobs known to take milliseconds (a cached trace's tensor, the model listing)
#   small   the small lane's trace builds (app.traces.admission: a tiny spec, the class preset's):
#           one thread, so a classmate's tiny build never waits out a SmolLM2 build
BUILDS, VIEWS, LIGHT, SMALL = "builds", "views", "light", "small"


class DaemonPool(Executor):
    """Up to `max_workers` daemon threads, started as jobs arrive, taking jobs in order."""

    def __init__(self, max_workers: int, thread_name_prefix: str):
        self._max_workers = max(1, max_workers)
        self.prefix = thread_name_prefix
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._idle = 0
        self._lock = threading.Lock()
        self._shutdown = False

    def submit(self, fn, /, *args, **kwargs) -> Future:
        with self._lock:
            if self._shutdown:
                raise RuntimeError("cannot schedule new futures after shutdown")
            future: Future = Future()
            self._jobs.put((future, fn, args, kwargs))
            if self._jobs.qsize() > self._idle and len(self._threads) < self._max_workers:
                thread = threading.Thread(target=self._work, name=f"{self.prefix}_{len(self._threads)}", daemon=True)
                self._threads.append(thread)
                thread.start()
            return future

    def _work(self) -> None:
        while True:
            with self._lock:
                self._idle += 1
            job = self._jobs.get()
            with self._lock:
                self._idle -= 1
            if job is None:
                return
            _run(*job)
            del job  # an idle thread holds nothing of its last job (TraceStore counts a held trace as in use)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._shutdown = True
            threads = list(self._threads)
        if cancel_futures:
            while True:
                try:
                    job = self._jobs.get_nowait()
                except queue.Empty:
                    break
                if job is not None:
                    job[0].cancel()
        for _ in threads:
            self._jobs.put(None)
        if wait:
            for thread in threads:
                thread.join()

    @property
    def is_shutdown(self) -> bool:
        return self._shutdown


def _run(future: Future, fn, args: tuple, kwargs: dict) -> None:
    """One job, its result or exception handed to its future; its frame (and the arrays it
    holds, the trace a build returns) goes when it returns."""
    if not future.set_running_or_notify_cancel():
        return  # cancelled while queued (its client left, or the server is stopping)
    try:
        result = fn(*args, **kwargs)
    except BaseException as exc:  # noqa: BLE001 - handed to whoever awaits the future
        future.set_exception(exc)
    else:
        future.set_result(result)
