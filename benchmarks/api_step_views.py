"""Payload size and server time of every step view for the class config (4 layers, 8 heads,
width 256, 128 positions of byte-tokenized text). Not part of the test run:

    .venv/bin/python benchmarks/api_step_views.py [--steps N]

Server time is the route's own Server-Timing (wall clock) (trace cached; the first view of a step
includes its gradient check, the second is served from the step cache). Also: the largest view of
each step kind against settings.max_step_bytes, and one enlarged head (the head route) at full
resolution."""

from __future__ import annotations

import argparse
import gzip
import statistics
import sys
import time
from pathlib import Path

from fastapi.testclient import TestClient

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.main import create_app  # noqa: E402
from app.settings import Settings  # noqa: E402
from tests.helpers.specs import class_spec  # noqa: E402


def server_ms(response) -> float:
    return float(response.headers["server-timing"].split("dur=")[1])


def summary(label: str, values: list[float], unit: str) -> str:
    return (
        f"{label:<22} median {statistics.median(values):>10,.0f} {unit}   mean {statistics.mean(values):>10,.0f} {unit}"
        f"   max {max(values):>10,.0f} {unit}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=None, help="only the first N steps")
    args = parser.parse_args()
    client = TestClient(create_app(Settings()), base_url="http://127.0.0.1")  # an allowed host
    started = time.perf_counter()
    trace = client.post("/api/traces", json=class_spec()).json()
    print(f"POST /api/traces: T = {trace['T']}, {len(trace['steps'])} steps, {time.perf_counter() - started:.2f} s")
    steps = trace["steps"][: args.steps]
    rows = []
    for step in steps:
        url = f"/api/traces/{trace['id']}/steps/{step['index']}"
        cpu = time.process_time()
        cold = client.get(url, headers={"Accept-Encoding": "identity"})
        cpu_ms = (time.process_time() - cpu) * 1000  # all threads of this process: robust on a busy machine
        cached = client.get(url, headers={"Accept-Encoding": "gzip"})
        raw, zipped = len(cold.content), len(gzip.compress(cold.content, 5))
        step = {**step, "kind": cold.json().get("kind") or step["phase"]}
        rows.append((step, raw, zipped, server_ms(cold), server_ms(cached), cpu_ms))
    print(summary("bytes (raw JSON)", [r[1] for r in rows], "B"))
    print(summary("bytes (gzip)", [r[2] for r in rows], "B"))
    print(summary("server ms, first view", [r[3] for r in rows], "ms"))
    print(summary("server ms, cached", [r[4] for r in rows], "ms"))
    print(summary("process CPU ms, first", [r[5] for r in rows], "ms"))
    by_kind(rows, client.app.state.settings.max_step_bytes)
    enlarged_head(client, trace)
    print("largest steps:")
    for step, raw, zipped, cold_ms, _, _ in sorted(rows, key=lambda r: -r[1])[:5]:
        print(
            f"  {step['index']:>4} {step['name']:<32} {step['phase']:<8} {raw:>10,} B  gzip {zipped:>9,} B  {cold_ms:>7.0f} ms"
        )
    print("slowest steps:")
    for step, raw, zipped, cold_ms, _, _ in sorted(rows, key=lambda r: -r[3])[:5]:
        print(
            f"  {step['index']:>4} {step['name']:<32} {step['phase']:<8} {raw:>10,} B  gzip {zipped:>9,} B  {cold_ms:>7.0f} ms"
        )


def by_kind(rows: list, limit: int) -> None:
    """The largest view of each (phase, kind): where the payload budget binds."""
    largest: dict[tuple[str, str], tuple] = {}
    for row in rows:
        key = (row[0]["phase"], row[0]["kind"])
        if key not in largest or row[1] > largest[key][1]:
            largest[key] = row
    print(f"largest view per step kind (limit max_step_bytes = {limit:,} B raw):")
    for (phase, kind), (step, raw, zipped, *_) in sorted(largest.items(), key=lambda kv: -kv[1][1]):
        flag = "  OVER" if raw >= limit else ""
        print(f"  {phase:<8} {kind:<12} {raw:>10,} B  gzip {zipped:>9,} B  ({step['name']}){flag}")


def enlarged_head(client: TestClient, trace: dict) -> None:
    """One head at full resolution, as the page fetches it when a head is enlarged."""
    step = next((s for s in trace["steps"] if s["name"].endswith("attention.probs")), None)
    if step is None:
        return
    url = f"/api/traces/{trace['id']}/steps/{step['index']}/head"
    response = client.get(url, params={"head": 0}, headers={"Accept-Encoding": "identity"})
    raw = len(response.content)
    print(f"enlarged head ({step['name']}, head 0, every value): {raw:,} B raw, "
          f"gzip {len(gzip.compress(response.content, 5)):,} B, {server_ms(response):.0f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
