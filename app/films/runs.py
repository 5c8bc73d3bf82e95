"""The runs this server offers: the folders of settings.runs_dir holding a run.json, and those of
settings.recorded_runs_dir (recorded from the page: app/recording/recordings.py), read with every check
xt_core.film.files makes, and a run's steps answered as JSON, at most settings.max_run_points
of them at once (a stretch of steps and a stride)."""

from __future__ import annotations

import math
import re
from pathlib import Path

from fastapi import HTTPException

from app.errors import SpecError, check_between
from app.settings import ROOT, Settings
from app.words.said import Said
from xt_core.film.files import Run, RunError, folder_bytes, read_meta, read_run
from xt_core.film.plan import RunTooLarge

# The shipped recorded run (`make demo-models` records it; `xt serve --demo` offers this folder): the
# induction task's training, the home page's "watch an induction head form" (app/routes/home_ways.py).
DEMO_RUNS = ROOT / "xt_core" / "checkpoint" / "demos" / "runs"  # beside the demo models (shipped_models_dir)
DEMO_RUN = "induction"
RUN_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"  # a folder's name: no path, never a dot-name
MAX_LISTED = 100  # runs listed at once


def run_folders(settings: Settings) -> dict[str, Path]:
    """name -> folder: runs_dir's runs, then the page's (a name in both is runs_dir's), at most MAX_LISTED."""
    found: dict[str, Path] = {}
    for parent in (Path(settings.runs_dir), Path(settings.recorded_runs_dir)):
        if parent.is_dir():
            named = sorted(
                p.name for p in parent.iterdir() if re.match(RUN_NAME, p.name) and (p / "run.json").is_file()
            )
            found |= {name: parent / name for name in named if name not in found}
    return {name: found[name] for name in sorted(found)[:MAX_LISTED]}


def run_names(settings: Settings) -> list[str]:
    return list(run_folders(settings))


class RunNotOpened(Exception):
    """The run is not on this server, or cannot be read: `said` says which (the route's 404, a spec's 422)."""

    def __init__(self, said: Said):
        super().__init__(said)
        self.said = said


def open_run(settings: Settings, name: str) -> Run:
    """The run `name` of this server, read and checked (RunNotOpened naming the runs there are)."""
    folders = run_folders(settings)
    if name not in folders:
        known = ", ".join(entry["name"] for entry in listing(settings)["runs"]) or "-"
        raise RunNotOpened(Said("film-error-unknown-run", name=name, known=known))
    try:
        return read_run(folders[name])
    except (RunError, RunTooLarge, OSError, ValueError) as exc:
        raise RunNotOpened(Said("film-error-unreadable-run", name=name)) from exc


def opened(settings: Settings, name: str) -> Run:
    try:
        return open_run(settings, name)
    except RunNotOpened as exc:
        raise HTTPException(404, detail=exc.said) from exc


def listing(settings: Settings) -> dict:
    runs = []
    for name, folder in run_folders(settings).items():
        try:
            run = read_meta(folder)  # run.json and the size: no arrays read
        except (RunError, RunTooLarge, OSError, ValueError):
            continue  # a damaged run is not offered; GET /api/runs/{name} says it cannot be read
        runs.append({"name": name, "task": run.plan.task, "steps": run.plan.steps, "bytes": folder_bytes(run.folder)})
    return {"runs": runs}


def stretch(run: Run, start: int, stop: int | None, stride: int | None, most: int) -> range:
    """The steps an answer shows: start, start + stride, ... below stop; stride None: the least that
    keeps them within `most`. Each bound named when broken (422)."""
    steps = run.plan.steps
    stop = steps if stop is None else stop
    check_between(("query", "start"), start, 0, steps - 1)
    check_between(("query", "stop"), stop, start + 1, steps)
    least = math.ceil((stop - start) / most)
    if stride is None:
        stride = least
    if stride < least:
        said = Said("film-error-stride", least=least, most=most, start=start, stop=stop, value=stride)
        raise SpecError(("query", "stride"), said)
    return range(start, stop, stride)


def answer(settings: Settings, name: str, start: int, stop: int | None, stride: int | None) -> dict:
    run = opened(settings, name)
    shown = stretch(run, start, stop, stride, settings.max_run_points)
    picked = list(shown)
    log = run.log
    return {
        "name": name,
        **run.summary(),
        "bytes": folder_bytes(run.folder),
        "max_bytes": run.plan.max_bytes,
        "shown": {"start": shown.start, "stop": shown.stop, "stride": shown.step},
        "step": picked,
        "loss": log.loss[picked].tolist(),
        "grad_norm": log.grad_norm[picked].tolist(),
        "update_norm": log.update_norm[picked].tolist(),
        "induction": log.induction[picked].tolist(),
        "previous": log.previous[picked].tolist(),
    }
