"""A tiny build's wait while SmolLM2 builds run (issue 35, finding 8): one student posts SmolLM2
texts back to back (each a new trace, from 127.0.0.2), another posts a tiny spec (a new seed each
time, from 127.0.0.3) every ~1 s; the tiny POST's time, counted only while a SmolLM2 build was in
flight, as p50/p95/max. A fresh real server with the default settings; needs the fetched model
(`make real-model`). Not part of the test run:

    .venv/bin/python benchmarks/load_small_wait.py [--tiny 20] [--repeat 12]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.helpers.memory_cases import TEXT  # noqa: E402
from tests.helpers.server import pct, start_server, stop_server, wait_ready  # noqa: E402
from tests.helpers.specs import SMALL_SPEC  # noqa: E402

TARGET_P95_S = 3.0


def client(base: str, address: str) -> httpx.AsyncClient:
    """A client from its own loopback address: the server counts it as another student."""
    transport = httpx.AsyncHTTPTransport(local_address=address)
    return httpx.AsyncClient(base_url=base, transport=transport, timeout=600, trust_env=False)


async def heavy(base: str, repeat: int, stop: asyncio.Event, spans: list[tuple[float, float, int]]) -> None:
    async with client(base, "127.0.0.2") as http:
        k = 0
        while not stop.is_set():
            started = time.perf_counter()
            posted = await http.post("/api/traces", json={"model": "smollm2-135m", "text": f"{TEXT * repeat} {k}"})
            spans.append((started, time.perf_counter(), posted.status_code))
            k += 1


async def tiny(base: str, samples: int, waits: list[tuple[float, float, int]]) -> None:
    async with client(base, "127.0.0.3") as http:
        await asyncio.sleep(2.0)  # the first SmolLM2 build is under way
        for seed in range(100, 100 + samples):
            started = time.perf_counter()
            posted = await http.post("/api/traces", json={**SMALL_SPEC, "seed": seed})
            waits.append((started, time.perf_counter() - started, posted.status_code))
            await asyncio.sleep(random.uniform(0.5, 1.5))


async def scenario(base: str, samples: int, repeat: int) -> tuple[list, list]:
    stop, spans, waits = asyncio.Event(), [], []
    heavy_task = asyncio.ensure_future(heavy(base, repeat, stop, spans))
    await tiny(base, samples, waits)
    stop.set()
    await heavy_task
    return spans, waits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tiny", type=int, default=20, help="tiny specs posted")
    parser.add_argument("--repeat", type=int, default=12, help="the SmolLM2 text is TEXT this many times")
    args = parser.parse_args()
    server = start_server({"XT_MODELS_DIR": "data/models"})
    try:
        wait_ready(server, 120)
        spans, waits = asyncio.run(scenario(server.base, args.tiny, args.repeat))
    finally:
        stop_server(server)
    builds = [end - start for start, end, status in spans if status == 200]
    during = [s for start, s, status in waits if status == 200 and any(a <= start <= b for a, b, _ in spans)]
    print(f"SmolLM2 builds: {len(builds)} (answers {sorted({s for *_, s in spans})}), p50 {pct(builds, 50):.1f} s")
    print(f"tiny answers: {sorted({s for *_, s in waits})}; {len(during)} of {len(waits)} during a SmolLM2 build")
    p95 = pct(during, 95)
    print(
        f"tiny build's wait: p50 {pct(during, 50):.2f} s, p95 {p95:.2f} s, max {max(during, default=0):.2f} s "
        f"(target p95 <= {TARGET_P95_S:.0f} s: {'met' if p95 <= TARGET_P95_S else 'NOT met'})"
    )


if __name__ == "__main__":
    main()
