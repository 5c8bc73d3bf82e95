"""Any step of a recorded run, rebuilt: the nearest checkpoint at or before it, the training replayed
from there (deterministic: the same weights, state, batches and arithmetic give the same bits),
and the step itself recorded in full like any walkthrough's step.

trace = rebuild_step(read_run(folder), 120)   # train_step's Trace at step 120, update included
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from xt_core.config import Config
from xt_core.film.files import Run, RunError, digest, read_checkpoint, stream_at
from xt_core.model import forward_backward
from xt_core.trace import Trace
from xt_core.training.loop import train_step
from xt_core.training.optim import param_step


def advance(cfg: Config, params: dict, state: dict, optimizer, inputs, targets, seen: Callable | None = None):
    """One training step, as xt_core.training.loop.train makes it (the same ops in the same order:
    the same bits): (new weights, new state, loss, per-parameter ||g|| and ||ΔW||, in float64).
    seen(trace) reads the step's trace before the update takes its gradients. The caller's dicts
    are not changed."""
    trace = forward_backward(cfg, params, inputs, targets, keep_param_grads=True)
    if seen is not None:
        seen(trace)
    new_params, new_state, grad_norms, update_norms = {}, {}, [], []
    for name, p in params.items():
        g = trace.hand_over_param(name)
        delta, new_state[name] = param_step(optimizer, name, p, g, state)
        new_params[name] = p + delta
        grad_norms.append(_norm(g))
        update_norms.append(_norm(delta))
    return new_params, new_state, trace.loss, grad_norms, update_norms


def _norm(a: np.ndarray) -> float:
    return float(np.sqrt(np.sum(np.square(a, dtype=np.float64))))


def replay(run: Run, stop: int, progress: Callable[[int, float], None] | None = None):
    """(weights, optimizer state, batch) of step `stop`, replayed from the nearest checkpoint at or
    before it; progress(i, loss) after the i-th step replayed (0, 1, ...: replayed_steps of them).
    The weights are checked against the digest recorded at `stop`: RunError if a bit differs."""
    start = stop - replayed_steps(run, stop)
    params, state = read_checkpoint(run, start)
    batches = run.plan.stream(start, stream_at(run, start))
    for step in range(start, stop):
        inputs, targets = next(batches)
        params, state, loss, *_ = advance(run.cfg, params, state, run.plan.optimizer_at(step), inputs, targets)
        if progress:
            progress(step - start, loss)
    if digest(params) != int(run.log.digest[stop]):
        raise RunError(
            f"step {stop} rebuilt from checkpoint {start} differs from the recorded weights "
            "(another machine's arithmetic? a run is rebuilt exactly on the machine that recorded it)"
        )
    return params, state, next(batches)


def batch_at(run: Run, step: int) -> tuple[np.ndarray, np.ndarray]:
    """Step's (inputs, targets): the batch stream resumed at that step (no batch before it drawn)."""
    replayed_steps(run, step)  # the step checked
    return next(run.plan.stream(step, stream_at(run, step)))


def replayed_steps(run: Run, step: int) -> int:
    """The training steps rebuilding `step` replays: from the last checkpoint at or before it."""
    if isinstance(step, bool) or not isinstance(step, (int, np.integer)) or not 0 <= step < run.plan.steps:
        raise RunError(f"step must be an integer in [0, {run.plan.steps}), got {step!r}")
    return int(step) - max(c for c in run.checkpoints if c <= step)


def rebuild_step(run: Run, step: int, progress: Callable[[int, float], None] | None = None) -> Trace:
    """train_step's full Trace of `step`: the weights the recorded training held before it, its batch,
    its learning rate and optimizer state (the trace's update leads to the weights before step + 1).
    progress: replay's, for the steps replayed before it."""
    params, state, (inputs, targets) = replay(run, step, progress)
    return train_step(run.cfg, params, inputs, targets, run.plan.optimizer_at(step), state)
