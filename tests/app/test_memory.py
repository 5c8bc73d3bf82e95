"""Bounded memory (issue 7, item 5): a real server with small cache bounds takes 1,000 distinct
specs (each a new trace, one in ten also a step view with its gradient check) and its RSS
stays under the bounds plus a baseline; the spec registry forgets the oldest ids (404, "POST
its spec again") instead of growing.

The baseline is the server's RSS once warm (imports, Plotly.js gzipped, the first traces and
step views built: every code path loaded), measured before the 1,000 specs: ~100 MB on this
class of machine (Python 3.11, numpy, FastAPI, plotly). Above it the server may hold the trace
cache (XT_CACHE_BYTES, counted with every trace's float64 twin, so the real bytes are fewer),
the step views (XT_STEP_CACHE_BYTES) and small bounded things: 200 remembered specs (~2 KB
each), 64 gradient checks, allocator pages kept after frees. Measured after 1,000 specs with
these bounds (4 + 1 MB): 2-3 MB above the baseline. With the bounds lifted (10 GB) the same
run grew by ~160 MB (~160 KB per trace), far past this test's limit."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import httpx
import pytest

from benchmarks._server import Server, rss_mb, running_server

CACHE_BYTES = 4_000_000  # a few traces of the spec below
STEP_CACHE_BYTES = 1_000_000
MAX_SPECS = 200
N_SPECS = 1_000
# Freed memory the allocator keeps (arenas of 3 threads, fragmentation) and the bounded small
# caches above: generous, yet 1,000 unbounded traces or step views would blow far past it.
SLACK_MB = 40
SETTINGS = {
    "XT_CACHE_BYTES": str(CACHE_BYTES),
    "XT_STEP_CACHE_BYTES": str(STEP_CACHE_BYTES),
    "XT_GRADCHECK_CACHE_ENTRIES": "64",
    "XT_MAX_SPECS": str(MAX_SPECS),
}
CONFIG = {"n_layer": 1, "n_head": 2, "n_kv_head": 1, "n_embd": 16, "ffn_hidden": 24, "seq_len": 32}


def spec(i: int) -> dict:
    return {"config": CONFIG, "text": "the cat sat on the mat.", "seed": i}


async def post_specs(base: str, seeds: range, clients: int = 4) -> list[str]:
    """POSTs a spec per seed (`clients` at a time; every 10th also views a step); the trace ids."""
    ids: dict[int, str] = {}
    pending = iter(seeds)  # shared: the specs go out in order

    async def worker(client: httpx.AsyncClient) -> None:
        for seed in pending:
            response = await client.post("/api/traces", json=spec(seed))
            assert response.status_code == 200, response.text
            trace = response.json()
            ids[seed] = trace["id"]
            if seed % 10 == 0:
                index = seed % len(trace["steps"])
                step = await client.get(f"/api/traces/{trace['id']}/steps/{index}")
                assert step.status_code == 200, step.text

    async with httpx.AsyncClient(base_url=base, timeout=60, trust_env=False) as client:
        await asyncio.gather(*(worker(client) for _ in range(clients)))
    return [ids[seed] for seed in seeds]


@dataclass
class Run:
    baseline_mb: float
    after_mb: float
    ids: list[str]  # in the order they were posted (4 at a time)


@pytest.fixture(scope="module")
def server() -> Server:
    with running_server(SETTINGS) as running:
        yield running


@pytest.fixture(scope="module")
def run(server) -> Run:
    """The server warmed up, then 1,000 specs (~25 s on 2 busy cores)."""
    asyncio.run(post_specs(server.base, range(100_000, 100_020)))  # every code path loaded
    baseline = rss_mb(server.pid)
    ids = asyncio.run(post_specs(server.base, range(N_SPECS)))
    return Run(baseline, rss_mb(server.pid), ids)


def test_rss_stays_under_the_bounds_for_1000_specs(run):
    assert len(set(run.ids)) == N_SPECS  # distinct specs, distinct traces
    bound_mb = (CACHE_BYTES + STEP_CACHE_BYTES) / 2**20
    print(
        f"\nRSS: baseline {run.baseline_mb:.0f} MB, after {N_SPECS} specs {run.after_mb:.0f} MB (bounds {bound_mb:.1f} MB)"
    )
    assert run.after_mb - run.baseline_mb < bound_mb + SLACK_MB


def test_the_spec_registry_is_bounded(server, run):
    """Only the latest MAX_SPECS ids are remembered: the first one is a 404 that says what to
    do, and POSTing its spec again brings it back (same id)."""
    ids = run.ids
    with httpx.Client(base_url=server.base, timeout=60, trust_env=False) as client:
        assert client.get(f"/api/traces/{ids[-1]}/tensors/loss").status_code == 200
        oldest = client.get(f"/api/traces/{ids[0]}/tensors/loss")
        assert oldest.status_code == 404
        assert "POST its spec to /api/traces again" in oldest.json()["detail"]
        again = client.post("/api/traces", json=spec(0))
        assert again.status_code == 200 and again.json()["id"] == ids[0]
        assert client.get(f"/api/traces/{ids[0]}/tensors/loss").status_code == 200
