"""A SmolLM2 trace's job of every step's gradient check (GET /api/traces/{id}/checks), alone on a
fresh real server: the steps checked in the first `--seconds` (or to the end), the server's CPU
seconds, its RSS. `--variant` serves the app with one of issue 35's memory changes undone, to see
whether it slows the job: `notrim` (no malloc_trim while the job runs, app.traces.freed),
`noshare` (a malloc arena per thread, xt_core.memory.share_arenas), both, or `base` (as it is):
benchmarks/variant_app.py.
Needs the fetched model (`make real-model`). Not part of the test run:

    .venv/bin/python benchmarks/checks_job.py --variant base notrim noshare notrim-noshare --seconds 90
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.memory_mix import SMOL, text  # noqa: E402
from tests.helpers.server import rss_mb, start_server, stop_server, wait_ready  # noqa: E402

VARIANTS = ("base", "notrim", "noshare", "notrim-noshare")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_job(variant: str, seconds: float) -> str:
    env = {"XT_MODELS_DIR": "data/models", "XT_BENCH_VARIANT": variant}
    server = start_server(env, app="benchmarks.variant_app:app")
    try:
        wait_ready(server, 120)
        with httpx.Client(base_url=server.base, timeout=900, trust_env=False) as http:
            trace = http.post("/api/traces", json={"model": SMOL, "text": text(1)}).json()
            started, cpu = time.perf_counter(), cpu_seconds(server.pid)
            while True:
                job = http.get(f"/api/traces/{trace['id']}/checks").json()
                if job["complete"] or time.perf_counter() - started >= seconds:
                    break
                time.sleep(2.0)
            wall, cpu = time.perf_counter() - started, cpu_seconds(server.pid) - cpu
        per_step = cpu / max(1, job["done"])
        return f"| {variant} | {job['done']} of {job['total']} | {wall:.0f} | {cpu:.0f} | {per_step:.2f} | {rss_mb(server.pid):,.0f} |"
    finally:
        stop_server(server)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variant", nargs="+", choices=VARIANTS, default=["base"])
    parser.add_argument("--seconds", type=float, default=90.0, help="stop counting after this long (the job goes on)")
    args = parser.parse_args()
    print("| variant | steps checked | wall s | server CPU s | CPU s a step | RSS MB |\n|---|---|---|---|---|---|")
    for variant in args.variant:
        print(one_job(variant, args.seconds), flush=True)


if __name__ == "__main__":
    main()
