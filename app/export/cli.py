"""`xt export` (xt_cli.py registers it): a walkthrough or a lesson as a static directory or one
HTML file, with a progress bar (docs/export.md)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def add_export(sub) -> None:
    export = sub.add_parser("export", help="a walkthrough or lesson as static files any web host serves")
    what = export.add_mutually_exclusive_group(required=True)
    what.add_argument("--spec", help='the spec as JSON, e.g. \'{"model": "induction", "text": "abcabc"}\'')
    what.add_argument("--lesson", metavar="NAME", help="a lesson of the lessons directory (its steps only)")
    export.add_argument("--out", type=Path, metavar="DIR", help="write the export as a directory")
    export.add_argument("--single-file", type=Path, metavar="FILE.html", help="write the export as one HTML file")
    export.add_argument("--tensors", action="store_true", help="the directory also holds every tensor as .npy")
    export.add_argument("--lang", default="en", help="the page's language: en (default) or ru")
    export.set_defaults(run=run_export)


def run_export(args) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from app.export import ExportError, export

    if args.out is None and args.single_file is None:
        print("xt export: give --out DIR, --single-file FILE.html or both", file=sys.stderr)
        return 2
    try:
        spec = None if args.spec is None else json.loads(args.spec)
    except json.JSONDecodeError as exc:
        print(f"xt export: --spec is not JSON: {exc}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    columns = (TextColumn("{task.description:<28}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, transient=True) as bar:
        task = bar.add_task("answers", total=None)

        def progress(done: int, total: int, what: str) -> None:
            bar.update(task, completed=done, total=total, description=what)

        try:
            exported = export(
                spec, args.lesson, args.out, args.single_file, progress, tensors=args.tensors, lang=args.lang
            )
        except ExportError as exc:
            print(f"xt export: {exc}", file=sys.stderr)
            return 1
    seconds = time.perf_counter() - started
    print(f"trace {exported.trace_id}: {exported.steps} steps, {exported.answers} answers in {seconds:.1f} s")
    for target in (args.out, args.single_file):
        if target is not None:
            print(f"  {target}: {_size(target) / 1e6:.1f} MB")
    for part in exported.left_out:
        print(f"  not in this export: {part}")
    return 0


def _size(path: Path) -> int:
    return path.stat().st_size if path.is_file() else sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
