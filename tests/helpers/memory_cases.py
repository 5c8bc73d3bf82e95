"""The memory cases of issue 24 (finding 4), each against a fresh real server with the default
settings, its RSS polled every 50 ms: the peak and the RSS once idle, beside the stated bound
(cache_bytes + 512 MB, + the 538 MB of SmolLM2's weights once a case has loaded them). Run by
`benchmarks/memory_cases.py` (a table) and `tests/app/test_memory_cases.py` (under XT_LONG_TESTS=1:
every peak within its bound); they need the fetched model (`make real-model`).

    smollm2-longest      one SmolLM2 text at the most positions the server takes (GET /api/tokenize)
    checks-then-second   a SmolLM2 trace, then GET .../checks (its job holds the trace), then a second text
    diff                 4 clients each posting a ~0.5 GB float64 spec with a fault, then its diff
    updates              12 clients each posting a SmolLM2 text with SGD (an update step), then its view
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from app.settings import Settings
from tests.helpers.server import rss_mb, start_server, stop_server, wait_ready

MB = 1 << 20
SMOLLM2_WEIGHTS_MB = 538
TEXT = "The capital of France is Paris. The capital of Italy is Rome. The capital of Spain is Madrid."
WIDE = {"n_layer": 2, "n_head": 16, "n_kv_head": 1, "n_embd": 32, "ffn_hidden": 16, "vocab_size": 16, "seq_len": 256}


def wide_faulty(seed: int) -> dict:
    rows = [[(seed + 7 * r + i) % 16 for i in range(257)] for r in range(4)]
    return {"config": WIDE, "tokens": rows, "dtype": "float64", "seed": seed, "faults": ["softmax_missing_sum_term"]}


async def smollm2_longest(http: httpx.AsyncClient) -> dict:
    limits = (await http.get("/api/tokenize", params={"model": "smollm2-135m", "text": TEXT})).json()
    words = TEXT.split()
    text = " ".join(words * 4)
    while len(words) > 1:
        preview = (await http.get("/api/tokenize", params={"model": "smollm2-135m", "text": text})).json()
        if preview.get("positions", 10**9) <= limits["max_positions"]:
            break
        text = text.rsplit(" ", 1)[0]
    response = await http.post("/api/traces", json={"model": "smollm2-135m", "text": text})
    return {"positions": limits["max_positions"], "answers": [response.status_code]}


async def checks_then_second(http: httpx.AsyncClient) -> dict:
    first = await http.post("/api/traces", json={"model": "smollm2-135m", "text": TEXT})
    checks = await http.get(f"/api/traces/{first.json()['id']}/checks")
    await asyncio.sleep(1.0)  # the job runs, holding its trace
    second = await http.post("/api/traces", json={"model": "smollm2-135m", "text": TEXT + " And Germany?"})
    detail = second.json().get("detail", "") if second.status_code != 200 else ""
    return {"answers": [first.status_code, checks.status_code, second.status_code], "second": detail[:160]}


async def diff(http: httpx.AsyncClient) -> dict:
    async def one(seed: int) -> list[int]:
        posted = await http.post("/api/traces", json=wide_faulty(seed))
        if posted.status_code != 200:
            return [posted.status_code]
        backward = next(s["index"] for s in posted.json()["steps"] if s["phase"] == "backward")
        answer = await http.get(f"/api/traces/{posted.json()['id']}/steps/{backward}/diff")
        return [200, answer.status_code]

    return {"answers": await asyncio.gather(*(one(seed) for seed in range(4)))}


async def updates(http: httpx.AsyncClient) -> dict:
    async def one(i: int) -> list[int]:
        spec = {"model": "smollm2-135m", "text": f"{TEXT} {i}", "optimizer": {"name": "sgd"}}
        posted = await http.post("/api/traces", json=spec)
        if posted.status_code != 200:
            return [posted.status_code]
        last = posted.json()["steps"][-1]["index"]
        return [200, (await http.get(f"/api/traces/{posted.json()['id']}/steps/{last}")).status_code]

    return {"answers": await asyncio.gather(*(one(i) for i in range(12)))}


CASES = {"smollm2-longest": smollm2_longest, "checks-then-second": checks_then_second, "diff": diff, "updates": updates}


def run_case(name: str) -> dict:
    """One case against a fresh server: its answers, peak and idle RSS and the stated bound (MB)."""
    server = start_server({"XT_MODELS_DIR": "data/models"})
    try:
        wait_ready(server, 120)
        with rss_polled(server.pid) as peak:
            try:
                result = asyncio.run(_with_client(server.base, CASES[name]))
            finally:
                time.sleep(2.0)
        idle = rss_mb(server.pid)
    finally:
        stop_server(server)
    weights = 0 if name == "diff" else SMOLLM2_WEIGHTS_MB
    bound = Settings().cache_bytes / MB + 512 + weights
    return {"result": result, "peak": max(peak), "idle": idle, "bound": bound}


@contextmanager
def rss_polled(pid: int) -> Iterator[list[float]]:
    """The RSS samples (MB) of process `pid`, one every 50 ms while the block runs."""
    samples, stop = [rss_mb(pid) or 0.0], threading.Event()

    def poll():
        while not stop.is_set():
            samples.append(rss_mb(pid) or 0.0)
            time.sleep(0.05)

    poller = threading.Thread(target=poll)
    poller.start()
    try:
        yield samples
    finally:
        stop.set()
        poller.join()


async def _with_client(base: str, case) -> dict:
    async with httpx.AsyncClient(base_url=base, timeout=600, trust_env=False) as http:
        return await case(http)
