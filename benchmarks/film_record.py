"""Recording the demo run from the page against recording it from the CLI (docs/film.md, "Recording
from the page"). Not part of the test run:

    .venv/bin/python benchmarks/film_record.py [--steps 1500]

The page's way: POST /api/runs {"task": "induction", "steps": N} to an app in this process (its
defaults: warm-up N / 15, a checkpoint every N / 3 when N / 4 would pass the 5 MB bound, one dense),
GET its progress until it is done: the run trained a slice at a time through the build queue. The
CLI's way: record() of the same plan, as `xt train --record` runs it. Wall and CPU seconds of this
process, one BLAS thread, one after the other; and whether the two runs have the same bits (and the
shipped run's, for the docs' recipe).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np  # noqa: F401  (loaded before the BLAS limit: threadpoolctl limits the BLAS loaded)
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.machine import cpu_name, load_average  # noqa: E402
from xt_core.film.files import folder_bytes, read_run  # noqa: E402
from xt_core.film.record import record  # noqa: E402


def clocked(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    value = fn()
    return value, time.perf_counter() - wall, time.process_time() - cpu


def from_the_page(folder: Path, steps: int) -> tuple[Path, int, float, float, float]:
    """(the run's folder, slices, the estimated seconds, wall and CPU seconds) recorded through POST
    /api/runs: from the POST to the progress answering done (the app's start not counted)."""
    from fastapi.testclient import TestClient

    from app.main import create_app
    from app.settings import Settings

    settings = Settings(recorded_runs_dir=folder, allowed_hosts=("testserver", "127.0.0.1"))
    with TestClient(create_app(settings, warm_up=False)) as client:
        wall, cpu = time.perf_counter(), time.process_time()
        started = client.post("/api/runs", json={"task": "induction", "steps": steps})
        assert started.status_code == 202, started.text
        name = started.json()["name"]
        while (progress := client.get(f"/api/runs/{name}/progress").json())["state"] not in ("done", "failed"):
            time.sleep(1.0)  # as the page polls (static/js/film/record.js)
        assert progress["state"] == "done", progress
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        slices = client.app.state.recordings.recorders[name].slices
    return folder / name, slices, started.json()["estimated_seconds"], wall, cpu


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1500)
    args = parser.parse_args(argv)
    print(f"CPU: {cpu_name()}; load average {load_average()}")
    with threadpool_limits(limits=1, user_api="blas"), tempfile.TemporaryDirectory() as tmp:
        page, slices, estimate, page_wall, page_cpu = from_the_page(Path(tmp) / "page", args.steps)
        run = read_run(page)
        print(f"page: {args.steps} steps in {slices} slices (estimated {estimate} s): {page_wall:.1f} s wall, "
              f"{page_cpu:.1f} s CPU, {folder_bytes(page) / 1e6:.2f} MB, every {run.plan.every}, checkpoints {run.checkpoints}")  # fmt: skip
        cli, cli_wall, cli_cpu = clocked(lambda: record(run.plan, Path(tmp) / "cli"))
        print(f"CLI:  {cli_wall:.1f} s wall, {cli_cpu:.1f} s CPU; page / CLI: wall {page_wall / cli_wall:.2f}, "
              f"CPU {page_cpu / cli_cpu:.2f}")  # fmt: skip
        same = (page / "steps.npz").read_bytes() == (cli.folder / "steps.npz").read_bytes()
        print(f"the same bits (steps.npz): {same}")
        from app.films.runs import DEMO_RUN, DEMO_RUNS

        shipped = read_run(DEMO_RUNS / DEMO_RUN)
        if shipped.plan == run.plan:
            print(f"the shipped run's bits: {(DEMO_RUNS / DEMO_RUN / 'steps.npz').read_bytes() == (page / 'steps.npz').read_bytes()}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
