"""The load driver of the concurrency tests: N clients on loopback for a bounded time, mixing
cold requests (new specs: trace builds, first step views with their gradient check) and
cached ones (step views already rendered, tensors as .npy and JSON, pages, listings), while a
separate process probes /healthz every 20 ms. `run_load` returns the tally (errors, unexpected
4xx, latencies by kind) and the probes; `summary` prints them as a table.

Used by tests/app/test_load.py (short) and benchmarks/loadtest.py (`make loadtest`, long)."""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field
from urllib.parse import urlencode

import httpx

from tests.helpers.aio import run_async
from tests.helpers.server import cpu_seconds, finish_prober, pct, rss_mb, start_prober

PROBE_INTERVAL_S = 0.02
# Warm traces (viewed before the load starts): the default tiny model, a GQA one with two
# sequences, and a demo checkpoint when the server ships it.
WARM_SPECS = [
    {"text": "the cat sat on the mat. the dog sat on the log.", "seed": 1},
    {"config": {"n_layer": 1, "n_head": 4, "n_kv_head": 2, "n_embd": 32, "ffn_hidden": 48, "vocab_size": 16},
     "tokens": [[1, 2, 3, 4, 5, 6, 7, 8, 9], [9, 8, 7, 6, 5, 4, 3, 2, 1]]},
]  # fmt: skip
COLD_TEXTS = ["the cat sat on the mat.", "abcabcabcabcabc", "To be, or not to be, that is the question."]
# What a client does next, by weight: mostly cached reads, about one request in eight cold.
ACTIONS = {"step": 40, "tensor": 15, "tensor_json": 5, "page": 10, "listing": 5, "repost": 8, "cold": 12}


@dataclass
class Warm:
    """URLs that answer from caches: step views already rendered, tensors of built traces."""

    specs: list[dict] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)
    tensors: list[str] = field(default_factory=list)
    pages: list[str] = field(default_factory=list)


@dataclass
class Tally:
    latencies: dict[str, list[float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)  # 5xx (503 included) and transport failures
    unexpected: list[str] = field(default_factory=list)  # 4xx to requests that are all valid
    cold_seeds: int = 0

    def record(self, kind: str, ms: float) -> None:
        self.latencies.setdefault(kind, []).append(ms)

    @property
    def requests(self) -> int:
        return sum(len(v) for v in self.latencies.values()) + len(self.errors)


async def prepare(client: httpx.AsyncClient) -> Warm:
    """POSTs the warm specs and renders a few steps of each (finding their tensor names), the
    specs side by side."""
    warm = Warm()
    specs = list(WARM_SPECS)
    models = (await client.get("/api/models")).raise_for_status().json()["models"]
    if any(m["name"] == "induction" for m in models):
        specs.append({"model": "induction", "text": "xkqvbmxkqvbmxkqvbmxkqvbm"})
    warm.specs = specs
    await asyncio.gather(*(warm_up(client, spec, warm) for spec in specs))
    warm.tensors = sorted(set(warm.tensors))
    warm.pages += ["/", "/api/faults"]
    return warm


async def warm_up(client: httpx.AsyncClient, spec: dict, warm: Warm) -> None:
    trace = (await client.post("/api/traces", json=spec)).raise_for_status().json()
    tid, n = trace["id"], len(trace["steps"])
    warm.pages.append("/walk?" + urlencode({**trace["query"], "step": str(n // 2)}))
    for index in sorted({0, n // 3, n // 2, n - 1}):
        url = f"/api/traces/{tid}/steps/{index}"
        view = (await client.get(url)).raise_for_status().json()
        warm.steps.append(url)
        names = [name for name in view["shapes"] if name not in ("tokens", "targets")]
        warm.tensors += [f"/api/traces/{tid}/tensors/{name}" for name in names[:2]]


def cold_spec(seed: int) -> dict:
    """A new spec: 1 or 2 layers, one of a few texts, a seed no one used yet."""
    return {"config": {"n_layer": 1 + seed % 2}, "text": COLD_TEXTS[seed % len(COLD_TEXTS)], "seed": 10_000 + seed}


async def cold(client: httpx.AsyncClient, tally: Tally, rng: random.Random) -> None:
    """A new trace, then one of its steps (rendered and gradient-checked on demand)."""
    tally.cold_seeds += 1
    trace = await request(client, tally, "cold_post", "POST", "/api/traces", cold_spec(tally.cold_seeds))
    if trace is not None:
        index = rng.randrange(len(trace["steps"]))
        await request(client, tally, "cold_step", "GET", f"/api/traces/{trace['id']}/steps/{index}")


async def request(client: httpx.AsyncClient, tally: Tally, kind: str, method: str, url: str, body=None):
    """One request, timed and classified; the JSON answer of a cold POST (else None)."""
    started = time.perf_counter()
    try:
        response = await client.request(method, url, json=body, headers={"Accept-Encoding": "gzip"})
    except httpx.HTTPError as exc:
        tally.errors.append(f"{kind} {method} {url}: {exc!r}")
        return None
    ms = (time.perf_counter() - started) * 1000
    if response.status_code >= 500:
        tally.errors.append(f"{kind} {method} {url}: {response.status_code} {response.text[:200]}")
        return None
    if response.status_code >= 400:
        tally.unexpected.append(f"{kind} {method} {url}: {response.status_code} {response.text[:200]}")
        return None
    tally.record(kind, ms)
    return response.json() if kind == "cold_post" else None


async def client_loop(client: httpx.AsyncClient, warm: Warm, tally: Tally, deadline: float, seed: int) -> None:
    rng = random.Random(seed)
    kinds, weights = list(ACTIONS), list(ACTIONS.values())
    while time.perf_counter() < deadline:
        kind = rng.choices(kinds, weights)[0]
        if kind == "cold":
            await cold(client, tally, rng)
        elif kind == "step":
            await request(client, tally, kind, "GET", rng.choice(warm.steps))
        elif kind == "tensor":
            await request(client, tally, kind, "GET", rng.choice(warm.tensors))
        elif kind == "tensor_json":
            await request(client, tally, kind, "GET", rng.choice(warm.tensors) + "?format=json")
        elif kind == "page":
            await request(client, tally, kind, "GET", rng.choice(warm.pages))
        elif kind == "listing":
            await request(client, tally, kind, "GET", "/api/models")
        else:
            await request(client, tally, kind, "POST", "/api/traces", rng.choice(warm.specs))


async def drive(base: str, clients: int, seconds: float, seed: int) -> tuple[Tally, float]:
    """`clients` independent users, each with its own connection (as 50 browsers would have).
    Idle connections expire after 2 s, before uvicorn closes them (5 s): a request sent on a
    connection the server is closing at that instant fails, whoever's timeout is first."""
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1, keepalive_expiry=2.0)
    opts = {"base_url": base, "limits": limits, "timeout": 60, "trust_env": False}
    async with httpx.AsyncClient(**opts) as client:
        warm = await prepare(client)
    tally = Tally()
    users = [httpx.AsyncClient(**opts) for _ in range(clients)]
    try:
        started = time.perf_counter()
        deadline = started + seconds
        await asyncio.gather(*(client_loop(user, warm, tally, deadline, seed + i) for i, user in enumerate(users)))
        return tally, time.perf_counter() - started
    finally:
        await asyncio.gather(*(user.aclose() for user in users))


def run_load(base: str, port: int, pid: int, clients: int = 50, seconds: float = 30.0, seed: int = 0) -> dict:
    """The load, with /healthz probed from another process meanwhile. Every request still in
    flight at the deadline finishes (60 s timeout each)."""
    prober = start_prober(port, PROBE_INTERVAL_S)
    try:
        server_cpu = cpu_seconds(pid)
        # A cold request is two requests of at most 60 s each: no run outlives this deadline.
        tally, wall = run_async(asyncio.wait_for(drive(base, clients, seconds, seed), seconds + 180))
        server_cpu = cpu_seconds(pid) - server_cpu
    finally:
        health, health_failures = finish_prober(prober)
    return {"tally": tally, "wall": wall, "server_cpu": server_cpu, "health": health,
            "health_failures": health_failures, "clients": clients, "rss_mb": rss_mb(pid)}  # fmt: skip


def summary(result: dict) -> str:
    tally, wall, health = result["tally"], result["wall"], result["health"]
    lines = [
        f"{result['clients']} clients, {wall:.1f} s: {tally.requests} requests ({tally.requests / wall:,.0f} req/s), "
        f"{len(tally.errors)} errors, {len(tally.unexpected)} unexpected 4xx, {tally.cold_seeds} new specs; "
        f"server CPU {result['server_cpu']:.1f} s ({result['server_cpu'] / wall:.2f} cores), RSS {result['rss_mb'] or 0:,.0f} MB",
        "",
        "| requests | n | p50 | p95 | p99 | max |",
        "|---|---|---|---|---|---|",
    ]
    groups = {"**all cached**": [k for k in tally.latencies if not k.startswith("cold")],
              "**all cold**": [k for k in tally.latencies if k.startswith("cold")]}  # fmt: skip
    rows = sorted(tally.latencies.items()) + [
        (g, sum((tally.latencies[k] for k in ks), [])) for g, ks in groups.items()
    ]
    for kind, values in rows:
        if values:
            lines.append(
                f"| {kind} | {len(values)} | {pct(values, 50):.1f} ms | {pct(values, 95):.1f} ms "
                f"| {pct(values, 99):.1f} ms | {max(values):.1f} ms |"
            )
    rows = [("/healthz under this load", health), ("/healthz of an idle server meanwhile", result.get("control"))]
    for label, probes in rows:
        if probes:
            lines.append(
                f"| {label} (every {PROBE_INTERVAL_S * 1000:.0f} ms) | {len(probes)} | {pct(probes, 50):.1f} ms "
                f"| {pct(probes, 95):.1f} ms | {pct(probes, 99):.1f} ms | {max(probes):.1f} ms |"
            )
    for message in (tally.errors + tally.unexpected + result["health_failures"])[:10]:
        lines.append(f"  ! {message}")
    return "\n".join(lines)
