"""Recording a training run: every step's loss, per-parameter gradient and update norms, every
head's induction and previous-token scores (xt_core/lab/probes.py, on the same probe sequences
each step) and a digest of the weights; a checkpoint every `every` steps; then a second pass,
replayed from the nearest checkpoint, adds `dense` checkpoints where the loss fell fastest (known
only once the run is over). The folder's size is bounded by the plan and checked before anything
is trained or written (RunTooLarge).

run = record(RunPlan(task="induction", steps=400, every=100), "runs/induction")
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from xt_core.film import attention
from xt_core.film.files import (
    Run,
    RunError,
    StepLog,
    digest,
    folder_bytes,
    read_checkpoint,
    stream_at,
    stream_row,
    write_checkpoint,
    write_run,
)
from xt_core.film.plan import PARAM_DTYPE, PROBE_SEED, RunPlan
from xt_core.film.rebuild import advance, replay
from xt_core.lab.probes import head_scores
from xt_core.model import init_params

STEEPEST_WINDOW = 20  # the loss is smoothed over steps / this many steps to find its steepest fall


def record(plan: RunPlan, folder, progress: Callable[[int, float], None] | None = None) -> Run:
    """Trains `plan` and writes the run to `folder` (new or empty); progress(step, loss) after each step."""
    need = plan.check_bound()
    folder = new_folder(folder)
    cfg = plan.config()
    params = init_params(cfg, seed=plan.seed, dtype=PARAM_DTYPE)
    log = StepLog.empty(plan.steps, len(params), cfg)
    run = Run(folder, plan, cfg, list(params), plan.checkpoint_steps(), [], {}, log)
    (folder / "checkpoints").mkdir(parents=True, exist_ok=True)
    probe = attention.probe_tokens(plan, cfg)
    frames = _train(run, params, progress, probe)
    run.steepest = steepest(log.loss)
    run.dense = dense_steps(plan, run.steepest, run.checkpoints)
    for step in run.dense:  # the second pass: each replayed from the checkpoint before it, digest checked
        weights, state, _ = replay(run, step)
        write_checkpoint(folder, step, weights, state)
        run.checkpoints = sorted({*run.checkpoints, step})
    if plan.attention_frames:
        frames |= _dense_frames(run, attention.dense_steps(plan, run.steepest, sorted(frames)), probe)
        attention.write_frames(folder, frames, probe[0][0])
    write_run(run, need)
    size = folder_bytes(folder)
    if size > need:  # the estimate is an upper bound by construction: this is a bug, never a user's error
        raise RunError(f"{folder}: {size:,} bytes written, over the {need:,} estimated")
    return run


def new_folder(folder) -> Path:
    """`folder` as a Path, if it is absent or an empty directory (FileExistsError otherwise)."""
    folder = Path(folder)
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise FileExistsError(f"{folder} exists and is not empty: a run is never written over another")
    return folder


def _train(run: Run, params: dict, progress, probe) -> dict[int, np.ndarray]:
    """The run trained and logged; returns the attention frames taken on the way (attention.regular_steps)."""
    plan, cfg, log = run.plan, run.cfg, run.log
    regular, framed, frames = set(run.checkpoints), set(attention.regular_steps(plan)), {}
    rng = plan.first_rng()
    batches = plan.stream(0, rng)
    state: dict = {}
    for step in range(plan.steps):
        if step in regular:
            write_checkpoint(run.folder, step, params, state)
        log.digest[step] = digest(params)
        log.induction[step], log.previous[step] = head_scores(
            cfg, params, plan.probe_period, plan.probe_seqs, PROBE_SEED
        )
        if step in framed:
            frames[step] = attention.frame_of(cfg, params, probe)
        log.stream[step] = stream_row(rng)  # before it draws step's batch
        inputs, targets = next(batches)
        params, state, log.loss[step], log.grad_norm[step], log.update_norm[step] = advance(
            cfg, params, state, plan.optimizer_at(step), inputs, targets
        )
        if progress:
            progress(step, float(log.loss[step]))
    log.digest[plan.steps] = digest(params)
    return frames


def _dense_frames(run: Run, steps: list[int], probe) -> dict[int, np.ndarray]:
    """The frames at `steps` (sorted), in one replay from the last checkpoint at or before the first,
    each frame's weights checked against the recorded digest."""
    if not steps:
        return {}
    start = max(c for c in run.checkpoints if c <= steps[0])
    params, state = read_checkpoint(run, start)
    batches, frames = run.plan.stream(start, stream_at(run, start)), {}
    for step in range(start, steps[-1] + 1):
        if step in steps:
            if digest(params) != int(run.log.digest[step]):
                raise RunError(f"step {step} replayed from checkpoint {start} differs from the recorded weights")
            frames[step] = attention.frame_of(run.cfg, params, probe)
        if step < steps[-1]:
            inputs, targets = next(batches)
            params, state, *_ = advance(run.cfg, params, state, run.plan.optimizer_at(step), inputs, targets)
    return frames


def steepest(loss: np.ndarray) -> dict:
    """{"step": s, "drop": d, "window": w}: the step s where the mean loss over the w steps before it
    minus the mean over the w steps from it on (w = steps // STEEPEST_WINDOW, at least 1) is largest."""
    n = len(loss)
    window = max(1, n // STEEPEST_WINDOW)
    if n < 2 * window:
        return {"step": 0, "drop": 0.0, "window": window}
    sums = np.concatenate([[0.0], np.cumsum(loss, dtype=np.float64)])
    at = np.arange(window, n - window + 1)
    drop = (sums[at] - sums[at - window]) / window - (sums[at + window] - sums[at]) / window
    best = int(np.argmax(drop))
    return {"step": int(at[best]), "drop": float(drop[best]), "window": window}


def dense_steps(plan: RunPlan, fastest: dict, regular: list[int]) -> list[int]:
    """plan.dense steps spread evenly inside [step - window, step + window] of the steepest fall,
    the regular checkpoints left out (no step is kept twice)."""
    low = max(0, fastest["step"] - fastest["window"])
    high = min(plan.steps - 1, fastest["step"] + fastest["window"])
    picks = np.round(np.linspace(low, high, plan.dense + 2)[1:-1]).astype(int)
    return sorted({int(s) for s in picks} - set(regular))
