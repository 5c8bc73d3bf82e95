"""A run recorded from the page (POST /api/runs): its body checked against the settings' limits
before any work (a 422 naming the field and the limit), its cost by the cost model that admits every
build (app/spec/cost.py), a name the server makes (never a path from the client), and room made in
settings.recorded_runs_dir: the oldest page runs removed first, within a count and a byte bound, none
younger than min_recorded_run_seconds (docs/film.md, "Recording from the page")."""

from __future__ import annotations

import math
import secrets
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from app.errors import SpecError, check_between
from app.settings import Settings
from app.spec.cost import Cost, build_cost, step_seconds
from app.words.said import Fixed, Grouped, Said
from xt_core.film.files import folder_bytes
from xt_core.film.plan import MAX_CHECKPOINTS, RunPlan
from xt_core.lab.tasks import TASKS

BATCH = 16  # the sequences of every step: xt train's default, the docs' recipe
DEFAULT_CHECKPOINTS = 4  # `every` unless given: steps / 4, or fewer checkpoints if 4 would pass the bound
WARMUP_SHARE = 15  # `warmup` unless given: steps / 15 (the docs' recipe: 100 of 1,500)
OPTIMIZER = {"name": "adamw"}  # RunPlan.optimizer's, for the cost model


@dataclass(frozen=True)
class RecordCost:
    step_seconds: float  # one recorded step: a training step and the heads' probes
    slice_steps: int  # steps one turn of the build queue trains (settings.record_slice_seconds)
    nbytes: int  # held while a slice runs: one training step's peak with its optimizer state

    def of(self, steps: int) -> Cost:
        return Cost(self.nbytes, steps * self.step_seconds)


def record_cost(plan: RunPlan, settings: Settings) -> RecordCost:
    """The cost model's estimate (app/spec/cost.py) of one recorded step: a training step of the batch,
    and the probes' forward on probe_seqs sequences counted as a training step of them (an upper bound)."""
    cfg = plan.config()
    T = cfg.seq_len
    seconds = step_seconds(cfg, plan.batch, T, "float32") + step_seconds(cfg, plan.probe_seqs, T, "float32")
    nbytes = build_cost(cfg, plan.batch, T, "float32", 1, OPTIMIZER).nbytes
    return RecordCost(seconds, max(1, int(settings.record_slice_seconds / seconds)), nbytes)


def checked_plan(settings: Settings, body) -> RunPlan:
    """The body's RunPlan, every field within its limit (SpecError naming the field and the limit);
    nothing is written or trained here."""
    if body.task not in TASKS:
        raise SpecError(("body", "task"), Said("film-record-error-task", value=body.task, known=", ".join(TASKS)))
    most = settings.max_record_steps
    if not 1 <= body.steps <= most:
        raise SpecError(("body", "steps"), Said("film-record-error-steps", most=Grouped(most), value=body.steps))
    per_step = record_cost(RunPlan(task=body.task, steps=1, every=1, batch=BATCH), settings).step_seconds
    if body.steps * per_step > settings.max_record_seconds:
        fits = int(settings.max_record_seconds / per_step)
        said = Said(
            "film-record-error-seconds", task=body.task, seconds=Fixed(body.steps * per_step, 0),
            most=Fixed(settings.max_record_seconds, 0), steps=Grouped(fits), value=body.steps,
        )  # fmt: skip
        raise SpecError(("body", "steps"), said)
    warmup = body.steps // WARMUP_SHARE if body.warmup is None else body.warmup
    check_between(("body", "warmup"), warmup, 0, body.steps)
    if body.every is not None:
        check_between(("body", "every"), body.every, math.ceil(body.steps / (MAX_CHECKPOINTS - body.dense)), body.steps)
    fields = {
        "task": body.task, "steps": body.steps, "batch": BATCH, "seed": body.seed, "warmup": warmup,
        "decay": body.decay, "dense": body.dense, "max_bytes": settings.max_record_bytes,
    }  # fmt: skip
    for every in _every_choices(body.steps, body.every):
        plan = RunPlan(**fields, every=every)
        if plan.estimated_bytes() <= plan.max_bytes:
            return plan
    field = "every" if body.every is not None else "steps"
    need = Grouped(plan.estimated_bytes())
    raise SpecError(("body", field), Said("film-record-error-bytes", need=need, most=Grouped(plan.max_bytes)))


def _every_choices(steps: int, every: int | None) -> list[int]:
    """`every` as given, or steps / 4, / 3, / 2, / 1: the first whose run fits is taken."""
    if every is not None:
        return [every]
    return [math.ceil(steps / count) for count in range(DEFAULT_CHECKPOINTS, 0, -1)]


def new_name(settings: Settings, task: str) -> str:
    """A name the server makes: the task, the time (UTC) and a random tag, e.g. induction-20250614-101500-3fa9."""
    while True:
        name = f"{task}-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{secrets.token_hex(2)}"
        if not (Path(settings.runs_dir) / name).exists() and not (Path(settings.recorded_runs_dir) / name).exists():
            return name


class NoRoom(Exception):
    """The page runs kept fill their bound and none is old enough to remove: retry after `seconds`."""

    def __init__(self, seconds: float):
        super().__init__(seconds)
        self.seconds = seconds


def make_room(settings: Settings, need: int, busy: set[str], now: float | None = None) -> list[str]:
    """Removes the oldest page runs (by their run.json's time) until one more of `need` bytes fits
    within max_recorded_runs and max_recorded_bytes, the recordings under way (`busy`: their names,
    counted at their estimate by the caller in `need`) never; a folder left without run.json (a
    recording that failed or a server that stopped) goes first. NoRoom, removing nothing, when the
    runs that would have to go are younger than min_recorded_run_seconds. Returns the names removed."""
    folder = Path(settings.recorded_runs_dir)
    now = time.time() if now is None else now
    kept, leftovers = [], []
    for path in folder.iterdir() if folder.is_dir() else ():
        if not path.is_dir() or path.name in busy:
            continue
        meta = path / "run.json"
        if meta.is_file():
            kept.append((meta.stat().st_mtime, path.name, folder_bytes(path)))
        else:
            leftovers.append(path.name)
    kept.sort()
    count, total = len(kept) + len(busy), sum(size for _, _, size in kept) + need
    going = []
    for written, name, size in kept:
        if count + 1 <= settings.max_recorded_runs and total <= settings.max_recorded_bytes:
            break
        if now - written < settings.min_recorded_run_seconds:
            raise NoRoom(settings.min_recorded_run_seconds - (now - written))
        going.append(name)
        count, total = count - 1, total - size
    if count + 1 > settings.max_recorded_runs or total > settings.max_recorded_bytes:
        raise NoRoom(settings.min_recorded_run_seconds)  # the recordings under way fill it alone
    for name in leftovers + going:
        shutil.rmtree(folder / name, ignore_errors=True)
    return going
