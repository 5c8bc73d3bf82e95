"""Issue 26's class: 30 simulated students against one server with the default settings (`make run`),
each joining the teacher's session (its learner identity: the queue's client), POSTing their own
~25-token text and opening 6 step views with human pauses. Not part of the test run; SmolLM2 needs
the fetched model (`make real-model`):

    .venv/bin/python benchmarks/class_of_30.py [--students 30] [--model smollm2-135m | --model toy]

Prints the CPU, every answer's status counted, the seconds from each student's POST to their first
step view (median, p95, max), the step views' seconds (p50, p95; those of a layer's step, which
replay that layer, apart from the embedding's and the head's), /healthz probed every 0.2 s from
another process meanwhile (p95, max: whether the event loop stalled) and the server's peak RSS.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.helpers.server import (  # noqa: E402
    finish_prober,
    rss_mb,
    start_prober,
    start_server,
    stop_server,
    wait_ready,
)

SUBJECTS = ["gradients", "the softmax", "attention", "a residual stream", "layer norms", "the loss", "embeddings"]
VERBS = ["flow backwards through", "sum over", "rescale", "are checked against", "depend on", "change"]


def text_of(student: int) -> str:
    """A student's own sentence, ~25 SmolLM2 tokens."""
    rng = random.Random(student)
    words = [rng.choice(SUBJECTS), rng.choice(VERBS), rng.choice(SUBJECTS)]
    return f"Student {student} wrote: in a transformer {words[0]} {words[1]} {words[2]}, one step at a time, say {rng.randint(0, 999)}."


def spec_of(model: str, student: int) -> dict:
    if model == "toy":  # the default random init: characters as tokens, up to 64 positions
        return {"text": text_of(student).split(": ", 1)[1][:60]}
    return {"model": model, "text": text_of(student)}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def student(base: str, code: str, model: str, i: int, codes: Counter, firsts: list, views: list) -> None:
    rng = random.Random(1000 + i)
    async with httpx.AsyncClient(base_url=base, timeout=900, trust_env=False) as http:
        await asyncio.sleep(rng.uniform(0, 3))  # they finish typing at different moments
        codes[(await http.get(f"/join/{code}", follow_redirects=False)).status_code] += 1  # an identity
        start = time.perf_counter()
        posted = await http.post("/api/traces", json=spec_of(model, i))
        codes[posted.status_code] += 1
        if posted.status_code != 200:
            return
        trace = posted.json()
        steps = trace["steps"]
        picks = [0] + rng.sample(range(1, len(steps)), 5)
        for k, index in enumerate(picks):
            if k:
                await asyncio.sleep(rng.uniform(2, 6))  # reading the view before the next
            began = time.perf_counter()
            view = await http.get(f"/api/traces/{trace['id']}/steps/{index}")
            codes[view.status_code] += 1
            views.append((time.perf_counter() - began, steps[index]["name"].startswith("layers.")))
            if k == 0:
                firsts.append(time.perf_counter() - start)


async def run_class(base: str, model: str, students: int) -> tuple[Counter, list, list]:
    async with httpx.AsyncClient(base_url=base, timeout=60, trust_env=False) as http:
        session = await http.post("/api/sessions", json={"spec": spec_of(model, -1)})
        assert session.status_code == 201, session.text
        code = session.json()["code"]
    codes, firsts, views = Counter(), [], []
    await asyncio.gather(*(student(base, code, model, i, codes, firsts, views) for i in range(students)))
    return codes, firsts, views


def shown_ms(seconds: list[float]) -> str:
    return f"p50 {pct(seconds, 0.5) * 1e3:.0f} ms, p95 {pct(seconds, 0.95) * 1e3:.0f} ms over {len(seconds)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--model", default="smollm2-135m", help="a model name, or `toy` (the default random init)")
    args = parser.parse_args()
    cpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    name = next((line.split(":", 1)[1].strip() for line in cpu.splitlines() if "Model name" in line), "?")
    print(f"CPU: {name}; {os.cpu_count()} cores; load {os.getloadavg()[0]:.1f}; model {args.model}")
    server = start_server({"XT_MODELS_DIR": "data/models"})
    try:
        wait_ready(server, 120)
        peak, stop = [rss_mb(server.pid) or 0.0], threading.Event()

        def poll() -> None:
            while not stop.is_set():
                peak.append(rss_mb(server.pid) or 0.0)
                time.sleep(0.1)

        poller = threading.Thread(target=poll, daemon=True)
        poller.start()
        prober = start_prober(server.port, 0.2)
        began = time.perf_counter()
        codes, firsts, views = asyncio.run(run_class(server.base, args.model, args.students))
        health, failures = finish_prober(prober)
        stop.set()
        poller.join()
    finally:
        stop_server(server)
    print(
        f"{len(firsts)} of {args.students} students served in {time.perf_counter() - began:.0f} s; answers {dict(codes)}"
    )
    print(
        f"POST -> first view: median {statistics.median(firsts):.1f} s, p95 {pct(firsts, 0.95):.1f} s, "
        f"max {max(firsts):.1f} s"
    )
    print(f"step views: {shown_ms([t for t, _ in views])}")
    print(f"  of a layer's step (a layer replayed): {shown_ms([t for t, in_layer in views if in_layer])}")
    print(f"  of the embedding's or the head's: {shown_ms([t for t, in_layer in views if not in_layer])}")
    print(
        f"/healthz meanwhile: p95 {pct(health, 0.95):.0f} ms, max {max(health, default=float('nan')):.0f} ms "
        f"over {len(health)} probes, {len(failures)} failed"
    )
    print(f"server peak RSS {max(peak):,.0f} MB (load {os.getloadavg()[0]:.1f} at the end)")


if __name__ == "__main__":
    main()
