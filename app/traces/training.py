"""Training from the page: N deterministic training steps on the spec's own batch before the
recorded step, and their live progress (the optimizer's canonical form: app.spec.training).

Every training step uses the spec's own batch (its text or token rows): the model learns to
predict that text, and the loss curve shows it doing so ("overfit one batch", the first sanity
check of any training loop). Same spec, same bits: nothing here draws random numbers.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

import numpy as np

from app.checkpoints.registry import load_checkpoint
from xt_core.config import Config
from xt_core.film.files import read_run
from xt_core.film.rebuild import rebuild_step
from xt_core.lab.quiz_weights import hidden_weights
from xt_core.model import init_params
from xt_core.precision.scaling import recorded_scaled_step, train_in_precision
from xt_core.trace import Trace
from xt_core.training.loop import train, train_step
from xt_core.training.optim import make_optimizer


def run(
    cfg: Config,
    params: dict[str, np.ndarray],
    inputs: np.ndarray,
    targets: np.ndarray,
    optimizer: dict,
    steps: int,
    progress: Callable[[int, float], None] | None = None,
    scale_growth: int | None = None,
    **step_kwargs,
) -> Trace:
    """`steps` optimizer steps on the batch, then the recorded training step (its last
    record is the update; step_kwargs, e.g. bug-lab faults, apply to it alone). The
    trace's train_losses hold the loss of each earlier step. A low-precision step
    (step_kwargs["precision"]) trains in it, under the dynamic loss scaler given scale_growth
    (which skips the recorded step's update too, should its gradients overflow)."""
    opt = make_optimizer(optimizer)
    batches = itertools.repeat((inputs, targets))
    precision = step_kwargs.get("precision")
    if precision is None:
        params, state, losses = train(cfg, params, opt, batches, steps, progress)
    else:
        trained = train_in_precision(cfg, params, opt, batches, steps, precision, scale_growth, progress)
        params, state, losses, step_kwargs["precision"] = trained
    if precision is not None and scale_growth is not None:
        trace = recorded_scaled_step(cfg, params, inputs, targets, opt, state, **step_kwargs)
    else:
        trace = train_step(cfg, params, inputs, targets, opt, state, **step_kwargs)
    trace.train_losses = [float(x) for x in losses]
    return trace


def initial_params(spec) -> dict[str, np.ndarray]:
    """The weights a spec (app.spec.ResolvedSpec) starts from: its checkpoint's (the cached,
    read-only arrays themselves, shared by every trace of the model; converted when the spec's
    dtype differs), or a seeded random init; a quiz's, moved by its secret seed."""
    dtype = np.dtype(spec.dtype)
    if spec.checkpoint is None:
        params = init_params(spec.cfg, seed=spec.seed, dtype=dtype)
    else:
        checkpoint = load_checkpoint(spec.checkpoint)
        params = {name: np.asarray(value, dtype=dtype) for name, value in checkpoint.params.items()}
    if spec.hidden_weights is not None:  # a quiz runs on weights of its own (xt_core.lab.quiz_weights)
        params = hidden_weights(spec.cfg, params, spec.hidden_weights, random_init=spec.checkpoint is None)
    return params


def build(spec, params: dict[str, np.ndarray], progress: TrainingProgress | None = None, **step_kwargs) -> Trace:
    """A spec's training step, reporting the training before it to `progress`."""
    return _reported(
        spec.id, spec.train_steps, progress,
        lambda report: run(
            spec.cfg, params, spec.inputs, spec.targets, spec.optimizer, spec.train_steps, report,
            spec.loss_scale_growth, **step_kwargs,
        ),
    )  # fmt: skip


def rebuild(spec, progress: TrainingProgress | None = None) -> Trace:
    """A recorded run's step (app.spec.run_step), reporting the steps replayed before it to `progress`."""
    recorded = read_run(spec.run.folder)
    return _reported(spec.id, spec.run.replayed, progress, lambda report: rebuild_step(recorded, spec.run.step, report))


def _reported(trace_id: str, steps: int, progress: TrainingProgress | None, work: Callable) -> Trace:
    """work(report): report(i, loss) after each of `steps` training steps, told to `progress` (None: untold)."""
    report = progress.reporter(trace_id, steps) if progress is not None and steps else None
    try:
        trace = work(report)
    except BaseException:
        if report is not None:
            progress.finish(trace_id, failed=True)
        raise
    if report is not None:
        progress.finish(trace_id)
    return trace


def update_nbytes(trace: Trace) -> int:
    """Bytes the update holds beyond Trace.nbytes(): new weights, ΔW and optimizer state."""
    return 0 if trace.update is None else trace.update.nbytes()


class TrainingStopped(Exception):
    """The server is stopping: a training run ends at its next step instead of running on."""


class TrainingProgress:
    """Trainings in flight (and the last few finished), by trace id: what the walk page
    polls while its POST /api/traces is busy training. Written from worker threads.
    Setting `stop` ends every training at its next step (the server's shutdown)."""

    KEEP_FINISHED = 256

    def __init__(self):
        self._runs: OrderedDict[str, dict] = OrderedDict()
        self._lock = threading.Lock()
        self.stop = threading.Event()

    def reporter(self, trace_id: str, total: int) -> Callable[[int, float], None]:
        started = time.monotonic()
        with self._lock:
            self._runs[trace_id] = {"state": "training", "done": 0, "total": total, "loss": None, "seconds": 0.0}
            self._runs.move_to_end(trace_id)

        def report(step: int, loss: float) -> None:
            if self.stop.is_set():
                raise TrainingStopped(f"the server is stopping: training stopped after {step + 1} of {total} steps")
            with self._lock:
                run = self._runs.get(trace_id)
                if run is not None:
                    run.update(done=step + 1, loss=float(loss), seconds=round(time.monotonic() - started, 2))

        return report

    def finish(self, trace_id: str, failed: bool = False) -> None:
        with self._lock:
            run = self._runs.get(trace_id)
            if run is not None:
                run["state"] = "failed" if failed else "done"
            while len(self._runs) > self.KEEP_FINISHED:
                oldest = next(iter(self._runs))
                if self._runs[oldest]["state"] == "training":
                    break
                self._runs.popitem(last=False)

    def get(self, trace_id: str) -> dict | None:
        with self._lock:
            run = self._runs.get(trace_id)
            return dict(run) if run is not None else None
