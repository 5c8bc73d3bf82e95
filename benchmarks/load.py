"""The server under load, over real HTTP: starts `uvicorn app.main:app` as a subprocess on
127.0.0.1 (a free port, loopback only), drives it with httpx async clients, prints a table, and
always stops the server. Not part of the test run:

    make loadbench                  # or: .venv/bin/python benchmarks/load.py [--requests N] [--concurrency C]

Measures, for the class config (4 layers, 8 heads, width 256, T = 128, byte tokens):
  * cold trace creation (POST /api/traces, several seeds, each a new trace);
  * payload bytes per step kind and phase (raw JSON and gzip on the wire), layer 0 and the
    layer-free steps (the other layers repeat layer 0's shapes);
  * p50/p95 latency of cached step views (many concurrent GETs of steps already viewed, gzip);
  * p50/p95 of /healthz while that load runs.
Every phase is bounded in requests and the whole run in time (--deadline)."""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.helpers.server import (  # noqa: E402
    Server,
    cpu_seconds,
    finish_prober,
    pct,
    rss_mb,
    start_prober,
    start_server,
    stop_server,
    wait_ready,
)
from tests.helpers.specs import class_spec  # noqa: E402

TARGETS = {"cached_p95_ms": 50.0, "payload_bytes": 300_000, "cold_trace_s": 1.0}


def server_ms(response: httpx.Response) -> float | None:
    timing = response.headers.get("server-timing")
    return float(timing.split("dur=")[1]) if timing and "dur=" in timing else None


async def post_trace(client: httpx.AsyncClient, seed: int) -> tuple[dict, float, float | None]:
    body = class_spec(seed)
    started = time.perf_counter()
    response = await client.post("/api/traces", json=body)
    elapsed = time.perf_counter() - started
    response.raise_for_status()
    return response.json(), elapsed, server_ms(response)


async def payloads(client: httpx.AsyncClient, trace: dict) -> tuple[list[dict], list[str]]:
    """Views every layer-0 and layer-free step once (cold: gradient check included), then again
    gzipped (from the step cache). Returns a row per step and the URLs now cached."""
    rows, urls = [], []
    for step in trace["steps"]:
        if step["layer"] not in (None, 0):
            continue
        url = f"/api/traces/{trace['id']}/steps/{step['index']}"
        started = time.perf_counter()
        cold = await client.get(url, headers={"Accept-Encoding": "identity"})
        cold_s = time.perf_counter() - started
        cold.raise_for_status()
        zipped = await client.get(url, headers={"Accept-Encoding": "gzip"})
        zipped.raise_for_status()
        view = cold.json()
        rows.append({"index": step["index"], "name": step["name"], "phase": step["phase"], "kind": view["kind"],
                     "raw": len(cold.content), "gzip": zipped.num_bytes_downloaded, "cold_s": cold_s,
                     "cold_server_ms": server_ms(cold)})  # fmt: skip
        urls.append(url)
    return rows, urls


async def cached_load(server: Server, urls: list[str], requests: int, concurrency: int, time_cap: float) -> dict:
    """`concurrency` clients GET cached step views (gzip, as browsers ask) until `requests` are
    done or `time_cap` seconds pass; another process polls /healthz every 50 ms meanwhile."""
    latencies: list[float] = []
    handler: list[float] = []
    remaining = [requests]
    deadline = time.perf_counter() + time_cap
    rng = random.Random(0)
    limits = httpx.Limits(max_connections=concurrency + 1, max_keepalive_connections=concurrency + 1)

    async def worker(client: httpx.AsyncClient) -> None:
        while remaining[0] > 0 and time.perf_counter() < deadline:
            remaining[0] -= 1
            url = rng.choice(urls)
            started = time.perf_counter()
            async with client.stream("GET", url, headers={"Accept-Encoding": "gzip"}) as response:
                async for _ in response.aiter_raw():  # the bytes as sent; no client-side gunzip
                    pass
            latencies.append((time.perf_counter() - started) * 1000)
            response.raise_for_status()
            handler.append(server_ms(response) or 0.0)

    async with httpx.AsyncClient(base_url=server.base, limits=limits, timeout=60, trust_env=False) as client:
        prober = start_prober(server.port, 0.05)  # its own process: no queueing behind this event loop
        started, server_cpu, client_cpu = time.perf_counter(), cpu_seconds(server.pid), time.process_time()
        await asyncio.gather(*(worker(client) for _ in range(concurrency)))
        wall = time.perf_counter() - started
        server_cpu, client_cpu = cpu_seconds(server.pid) - server_cpu, time.process_time() - client_cpu
        health, _ = finish_prober(prober)
    n = len(latencies)
    return {"latencies": latencies, "handler": handler, "health": health, "wall": wall, "n": n,
            "server_cpu_ms": server_cpu / n * 1000, "client_cpu_ms": client_cpu / n * 1000}  # fmt: skip


def kb(n: float) -> str:
    return f"{n / 1000:,.0f} kB" if n >= 1000 else f"{n:.0f} B"


def report_payloads(rows: list[dict]) -> None:
    by_kind: dict[tuple[str, str], list[dict]] = {}
    for row in rows:
        phase = "backward" if row["phase"] == "backward" else "forward"
        by_kind.setdefault((row["kind"], phase), []).append(row)
    print("\n| step kind | phase | steps | largest step | raw | gzip | < 300 KB raw / gzip | first view |")
    print("|---|---|---|---|---|---|---|---|")
    for kind, phase in sorted(by_kind, key=lambda k: (k[1] != "forward", min(r["index"] for r in by_kind[k]))):
        group = by_kind[(kind, phase)]
        big = max(group, key=lambda r: r["raw"])
        ok = " / ".join("yes" if big[k] < TARGETS["payload_bytes"] else "**no**" for k in ("raw", "gzip"))
        print(
            f"| {kind} | {phase} | {len(group)} | {big['name']} | {kb(big['raw'])} | {kb(big['gzip'])} | {ok} "
            f"| {big['cold_s'] * 1000:,.0f} ms |"
        )
    raws, zips = [r["raw"] for r in rows], [r["gzip"] for r in rows]
    print(
        f"\nall {len(rows)} steps viewed: raw median {kb(statistics.median(raws))}, max {kb(max(raws))}; "
        f"gzip median {kb(statistics.median(zips))}, max {kb(max(zips))}; "
        f"{sum(z >= TARGETS['payload_bytes'] for z in zips)} steps >= 300 KB gzipped, "
        f"{sum(r >= TARGETS['payload_bytes'] for r in raws)} raw"
    )


async def run(args: argparse.Namespace, server: Server) -> None:
    async with httpx.AsyncClient(base_url=server.base, timeout=120, trust_env=False) as client:
        await client.post("/api/traces", json={"text": "warm up the imports"})  # tiny default config
        colds = []
        for seed in range(1, args.cold + 1):  # distinct seeds: distinct ids, each built cold
            trace, elapsed, srv = await post_trace(client, seed)
            colds.append((elapsed, srv))
        rows, urls = await payloads(client, trace)
    loads = []
    for concurrency in args.concurrency:
        load = await cached_load(server, urls, args.requests, concurrency, args.load_seconds)
        loads.append((concurrency, load))

    cold_s = [c[0] for c in colds]
    print(f"\nclass config: {len(trace['steps'])} steps, T = {trace['T']}")
    print("\n| measure | p50 | p95 | max | target | met |")
    print("|---|---|---|---|---|---|")
    for concurrency, load in loads:
        lat, p95 = load["latencies"], pct(load["latencies"], 95)
        print(
            f"| cached step view, gzip: {concurrency} concurrent, {load['n']} requests, {load['n'] / load['wall']:,.0f} req/s "
            f"| {pct(lat, 50):.1f} ms | {p95:.1f} ms | {max(lat):.1f} ms | p95 < 50 ms "
            f"| {'yes' if p95 < TARGETS['cached_p95_ms'] else '**no**'} |"
        )
        health = load["health"]
        print(
            f"| /healthz during that load ({len(health)} probes) | {pct(health, 50):.1f} ms | {pct(health, 95):.1f} ms "
            f"| {max(health):.1f} ms | | |"
        )
    cold_p50 = statistics.median(cold_s)
    print(
        f"| cold class trace, POST /api/traces ({len(colds)} seeds) | {cold_p50:.2f} s | {pct(cold_s, 95):.2f} s "
        f"| {max(cold_s):.2f} s | < 1 s | {'yes' if max(cold_s) < TARGETS['cold_trace_s'] else '**no**'} |"
    )
    print("\nwhere cached-view time goes (per request; both processes share the machine's cores):")
    for concurrency, load in loads:
        print(
            f"  {concurrency:>3} concurrent: handler (Server-Timing) p50 {pct(load['handler'], 50):.2f} ms "
            f"p95 {pct(load['handler'], 95):.2f} ms; server process CPU {load['server_cpu_ms']:.1f} ms; "
            f"client process CPU {load['client_cpu_ms']:.1f} ms; wall per request at this rate "
            f"{load['wall'] / load['n'] * 1000:.1f} ms"
        )
    srv = [c[1] for c in colds if c[1] is not None]
    if srv:
        print(f"\ncold POST server time (Server-Timing): median {statistics.median(srv):,.0f} ms")
    report_payloads(rows)
    rss = rss_mb(server.pid)
    if rss is not None:
        print(f"\nserver RSS at the end: {rss:,.0f} MB ({args.cold + 1} traces built)")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=1000, help="cached step views per load level")
    parser.add_argument("--concurrency", default="1,8,32", help="concurrent clients, one load phase per value")
    parser.add_argument("--load-seconds", type=float, default=60.0, help="cap on each load phase")
    parser.add_argument("--cold", type=int, default=5, help="cold class traces (distinct seeds)")
    parser.add_argument("--deadline", type=float, default=300.0, help="the whole run stops after this many seconds")
    args = parser.parse_args()
    args.requests = max(1, min(args.requests, 100_000))
    args.concurrency = [max(1, min(int(c), 256)) for c in args.concurrency.split(",")]
    server = start_server()
    try:
        ready = wait_ready(server)
        print(f"server up in {ready:.1f} s (pid {server.pid}, {server.base})")
        asyncio.run(asyncio.wait_for(run(args, server), timeout=args.deadline))
    except TimeoutError:
        print(f"stopped: the run passed its {args.deadline:.0f} s deadline", file=sys.stderr)
        return 1
    finally:
        stop_server(server)
    return 0


if __name__ == "__main__":
    sys.exit(main())
