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
    recording = Recording(plan, folder, progress)
    while not recording.advance(plan.steps):
        pass
    return recording.run


def new_folder(folder) -> Path:
    """`folder` as a Path, if it is absent or an empty directory (FileExistsError otherwise)."""
    folder = Path(folder)
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise FileExistsError(f"{folder} exists and is not empty: a run is never written over another")
    return folder


class Recording:
    """A run being recorded a slice at a time: advance(n) trains up to n more steps, and once every
    step is trained the next call finishes it (the second pass, then run.json). The same ops in the
    same order as one record() call, so the same bits; a server records a page's run this way, a
    slice per turn of its build queue (app/films/recording.py). Its bound is checked before anything
    is written (RunTooLarge)."""

    def __init__(self, plan: RunPlan, folder, progress: Callable[[int, float], None] | None = None):
        self.need = plan.check_bound()
        folder = new_folder(folder)
        cfg = plan.config()
        self.params = init_params(cfg, seed=plan.seed, dtype=PARAM_DTYPE)
        self.run = Run(folder, plan, cfg, list(self.params), plan.checkpoint_steps(), [], {}, None)
        self.run.log = StepLog.empty(plan.steps, len(self.params), cfg)
        (folder / "checkpoints").mkdir(parents=True, exist_ok=True)
        self.progress, self.probe = progress, attention.probe_tokens(plan, cfg)
        self.regular, self.framed = set(self.run.checkpoints), set(attention.regular_steps(plan))
        self.rng = plan.first_rng()
        self.batches = plan.stream(0, self.rng)
        self.state: dict = {}
        self.frames: dict[int, np.ndarray] = {}
        self.step = 0  # the next step to train
        self.finished = False

    def next_steps(self, most: int) -> int:
        """The training steps the next advance(most) runs, the second pass's replays included."""
        plan = self.run.plan
        if self.step < plan.steps:
            return min(most, plan.steps - self.step)
        return 0 if self.finished else self.finishing_replays()

    def advance(self, most: int) -> bool:
        """Trains up to `most` more steps; with every step trained, finishes the run. True once written."""
        plan = self.run.plan
        if self.step < plan.steps:
            for _ in range(min(most, plan.steps - self.step)):
                self._train_step()
            if self.step == plan.steps:
                self.run.log.digest[plan.steps] = digest(self.params)
            return False
        if not self.finished:
            self._finish()
        return True

    def _train_step(self) -> None:
        run, step, log = self.run, self.step, self.run.log
        plan, cfg = run.plan, run.cfg
        if step in self.regular:
            write_checkpoint(run.folder, step, self.params, self.state)
        log.digest[step] = digest(self.params)
        log.induction[step], log.previous[step] = head_scores(
            cfg, self.params, plan.probe_period, plan.probe_seqs, PROBE_SEED
        )
        if step in self.framed:
            self.frames[step] = attention.frame_of(cfg, self.params, self.probe)
        log.stream[step] = stream_row(self.rng)  # before it draws step's batch
        inputs, targets = next(self.batches)
        self.params, self.state, log.loss[step], log.grad_norm[step], log.update_norm[step] = advance(
            cfg, self.params, self.state, plan.optimizer_at(step), inputs, targets
        )
        self.step += 1
        if self.progress:
            self.progress(step, float(log.loss[step]))

    def _second_pass(self) -> tuple[list[int], list[int]]:
        """(the dense checkpoints, the frames taken after the run): known once the loss is."""
        run = self.run
        run.steepest = steepest(run.log.loss)
        dense = dense_steps(run.plan, run.steepest, sorted(self.regular))
        if not run.plan.attention_frames:
            return dense, []
        return dense, attention.dense_steps(run.plan, run.steepest, sorted(self.frames))

    def finishing_replays(self) -> int:
        """The steps the second pass replays: to each dense checkpoint, and over the frames' window."""
        dense, frames = self._second_pass()
        starts = sorted(self.regular)
        replays = sum(s - max(c for c in starts if c <= s) for s in dense)
        if frames:
            replays += frames[-1] - max(c for c in sorted({*starts, *dense}) if c <= frames[0])
        return replays

    def _finish(self) -> None:
        run, folder = self.run, self.run.folder
        dense, frame_steps = self._second_pass()
        run.dense = dense
        for step in run.dense:  # the second pass: each replayed from the checkpoint before it, digest checked
            weights, state, _ = replay(run, step)
            write_checkpoint(folder, step, weights, state)
            run.checkpoints = sorted({*run.checkpoints, step})
        if run.plan.attention_frames:
            frames = self.frames | _dense_frames(run, frame_steps, self.probe)
            attention.write_frames(folder, frames, self.probe[0][0])
        write_run(run, self.need)
        size = folder_bytes(folder)
        if size > self.need:  # the estimate is an upper bound by construction: this is a bug, never a user's error
            raise RunError(f"{folder}: {size:,} bytes written, over the {self.need:,} estimated")
        self.finished = True


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
