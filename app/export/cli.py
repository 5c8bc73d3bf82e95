"""`xt export` (xt_cli.py registers it): a walkthrough, a lesson or a recorded run's film as a static
directory or one HTML file, with a progress bar (docs/export.md)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def add_export(sub) -> None:
    export = sub.add_parser("export", help="a walkthrough, lesson or run's film as static files any web host serves")
    what = export.add_mutually_exclusive_group(required=True)
    what.add_argument("--spec", help='the spec as JSON, e.g. \'{"model": "induction", "text": "abcabc"}\'')
    what.add_argument("--lesson", metavar="NAME", help="a lesson of the lessons directory (its steps only)")
    what.add_argument("--run", dest="film_run", metavar="RUN", help="a recorded run's film: its folder (xt train --record), or its name in --runs")  # fmt: skip
    export.add_argument("--out", type=Path, metavar="DIR", help="write the export as a directory")
    export.add_argument("--single-file", type=Path, metavar="FILE.html", help="write the export as one HTML file")
    export.add_argument("--tensors", action="store_true", help="the directory also holds every tensor as .npy")
    export.add_argument("--lang", default="en", help="the page's language: en (default) or ru")
    export.add_argument("--run-steps", metavar="S,S,...", help="with --run: the steps whose walkthroughs the directory holds (default: the run's checkpoints, at most 8; '' for none)")  # fmt: skip
    export.add_argument("--runs", type=Path, metavar="DIR", help="the recorded runs' folder (default: XT_RUNS_DIR, else runs/; for --lesson, else the shipped runs)")  # fmt: skip
    export.set_defaults(run=run_export)


def run_export(args) -> int:
    from app.export import ExportError

    if args.out is None and args.single_file is None:
        print("xt export: give --out DIR, --single-file FILE.html or both", file=sys.stderr)
        return 2
    try:
        spec = None if args.spec is None else json.loads(args.spec)
    except json.JSONDecodeError as exc:
        print(f"xt export: --spec is not JSON: {exc}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    try:
        with _progress() as progress:
            said, left_out = _export_film(args, progress) if args.film_run else _export_walk(args, spec, progress)
    except ExportError as exc:
        print(f"xt export: {exc}", file=sys.stderr)
        return 1
    print(f"{said} in {time.perf_counter() - started:.1f} s")
    for target in (args.out, args.single_file):
        if target is not None:
            print(f"  {target}: {_size(target) / 1e6:.1f} MB")
    for part in left_out:
        print(f"  not in this export: {part}")
    return 0


class _progress:
    """A rich progress bar of the answers, as a callable (done, total, what)."""

    def __enter__(self):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        columns = (TextColumn("{task.description:<28}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        self.bar = Progress(*columns, transient=True)
        self.bar.__enter__()
        self.task = self.bar.add_task("answers", total=None)
        return self

    def __call__(self, done: int, total: int, what: str) -> None:
        self.bar.update(self.task, completed=done, total=total, description=what)

    def __exit__(self, *exc) -> None:
        self.bar.__exit__(*exc)


def _settings(runs: Path | None, shipped: bool = False):
    """The app's settings, its runs_dir `runs` when given; `shipped` (a lesson's export) without one (no
    XT_RUNS_DIR, no runs/): the shipped runs, as `xt serve --demo` (the lesson "Watch an induction head
    form" is about one; another export would check that lesson's claims for nothing, a second)."""
    from dataclasses import replace

    from app.films.runs import DEMO_RUNS
    from app.settings import get_settings

    settings = get_settings()
    if runs is None:
        return replace(settings, runs_dir=DEMO_RUNS) if shipped and not settings.runs_dir.is_dir() else settings
    return replace(settings, runs_dir=runs.expanduser().resolve())


def _export_walk(args, spec, progress) -> tuple[str, list[str]]:
    from app.export import export

    exported = export(
        spec,
        args.lesson,
        args.out,
        args.single_file,
        progress,
        settings=_settings(args.runs, shipped=args.lesson is not None),
        tensors=args.tensors,
        lang=args.lang,
    )
    if exported.films and exported.films[0].page == "index.html":  # a lesson about a run: its film is the page
        carried = exported.films[0]
        held = ", ".join(map(str, sorted(carried.pages)))
        said = f"the lesson {args.lesson} ({exported.steps} stops) on the film of the run {carried.run} and the walkthroughs of steps {held}"  # fmt: skip
        return f"{said}, {exported.answers} answers", exported.left_out
    return f"trace {exported.trace_id}: {exported.steps} steps, {exported.answers} answers", exported.left_out


def _export_film(args, progress) -> tuple[str, list[str]]:
    """--run: a folder holding run.json is that run (its parent the runs' folder); any other value is
    a run's name in --runs (XT_RUNS_DIR, runs/)."""
    from app.export import ExportError
    from app.export.film import export_film

    folder = Path(args.film_run).expanduser().resolve()
    runs, name = (folder.parent, folder.name) if (folder / "run.json").is_file() else (args.runs, args.film_run)
    if "/" in args.film_run and runs is args.runs:
        raise ExportError(f"--run {args.film_run}: no run.json there (xt train --record writes a run's folder)")
    try:
        steps = None if args.run_steps is None else [int(s) for s in args.run_steps.split(",") if s.strip()]
    except ValueError as exc:
        raise ExportError(f"--run-steps takes steps separated by commas, e.g. 0,500: {exc}") from exc
    exported = export_film(name, args.out, args.single_file, steps, progress, _settings(runs), args.lang)
    held = ", ".join(map(str, sorted(exported.pages))) or "none"
    return (
        f"the film of the run {name}: the walkthroughs of steps {held}, {exported.answers} answers",
        exported.left_out,
    )


def _size(path: Path) -> int:
    return path.stat().st_size if path.is_file() else sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
