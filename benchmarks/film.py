"""Recording a training run and opening its steps (docs/film.md). Not part of the test run:

    .venv/bin/python benchmarks/film.py [--steps 1500] [--every 500] [--out DIR]

Records the induction task (batch 16, warm-up 100, AdamW lr 3e-3) as `xt train --record` does: its
wall and CPU seconds, its size on disk beside the estimate the bound was checked against. Then
opens steps as the server does: a checkpoint's step, the step after the steepest fall, and the step
farthest from the checkpoint before it, each rebuilt (`rebuild_step`, the same bits checked) and each
to its first figure (POST /api/traces {"run", "run_step"}, then GET its first step view, on a new
app in this process). Wall and CPU seconds of this process (on a shared machine wall time also
counts waiting for a core), one BLAS thread.
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
from xt_core.film.plan import RunPlan  # noqa: E402
from xt_core.film.rebuild import rebuild_step, replayed_steps  # noqa: E402
from xt_core.film.record import record  # noqa: E402


def clocked(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    value = fn()
    return value, time.perf_counter() - wall, time.process_time() - cpu


def first_figure(runs_dir: Path, name: str, step: int) -> tuple[float, float]:
    """Seconds (wall, CPU) from POSTing a run's step to its first step view answered."""
    from fastapi.testclient import TestClient

    from app.main import create_app
    from app.settings import Settings

    settings = Settings(runs_dir=runs_dir, allowed_hosts=("testserver", "127.0.0.1"))
    with TestClient(create_app(settings, warm_up=False)) as client:

        def opened():
            summary = client.post("/api/traces", json={"run": name, "run_step": step}).json()
            view = client.get(f"/api/traces/{summary['id']}/steps/0")
            assert view.status_code == 200 and view.json()["figures"], view.text[:200]

        _, wall, cpu = clocked(opened)
    return wall, cpu


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--every", type=int, default=500)
    parser.add_argument("--max-mb", type=float, default=20.0)
    parser.add_argument("--out", type=Path, default=None, help="a new folder to keep the run in")
    args = parser.parse_args(argv)
    runs_dir = Path(tempfile.mkdtemp(prefix="xt-film-")) if args.out is None else args.out.parent
    folder = args.out or runs_dir / "induction"
    plan = RunPlan(steps=args.steps, every=args.every, warmup=min(100, args.steps), max_bytes=int(args.max_mb * 1e6))
    print(f"CPU: {cpu_name()}; load average {load_average():.1f}; one BLAS thread")
    with threadpool_limits(limits=1, user_api="blas"):
        _, wall, cpu = clocked(lambda: record(plan, folder))
        run = read_run(folder)
        print(
            f"recorded {plan.steps} steps in {wall:.1f} s wall / {cpu:.1f} s CPU; {folder_bytes(folder) / 1e6:.2f} MB "
            f"on disk (estimated {plan.estimated_bytes() / 1e6:.2f} MB, limit {plan.max_bytes / 1e6:g} MB); "
            f"checkpoints {run.checkpoints}, the steepest fall at step {run.steepest['step']}"
        )
        farthest = max(range(plan.steps), key=lambda s: replayed_steps(run, s))
        for step in dict.fromkeys((run.checkpoints[-1], run.steepest["step"] + 1, farthest)):
            trace, wall, cpu = clocked(lambda step=step: rebuild_step(run, step))
            same = trace.loss == run.log.loss[step]
            figure = first_figure(folder.parent, folder.name, step)
            print(
                f"step {step:5d} ({replayed_steps(run, step):4d} replayed): rebuilt in {wall:6.2f} s wall / "
                f"{cpu:6.2f} s CPU (the recorded loss: {same}); its first figure {figure[0]:6.2f} s / {figure[1]:6.2f} s"
            )
    print(f"load average {load_average():.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
