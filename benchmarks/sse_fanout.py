"""Fan-out of a classroom session: N students follow one presenter over Server-Sent Events.

One uvicorn server on 127.0.0.1 (in-process session store; --redis URL to go through Redis);
N follower streams (raw asyncio sockets, so the client stays light beside the server on the
same 2 cores); the presenter moves the class M times. For every move and follower: the time
from the presenter's POST to that follower's event (fan-out latency). Meanwhile /healthz is
probed every 20 ms from a process of its own. Targets: p95 < 250 ms, every /healthz < 100 ms.

    python benchmarks/sse_fanout.py --followers 200 --moves 20

With --film RUN the class is a film class on that recorded run (the shipped one: --film induction) and
each move is the presenter's scrubbing (`film_step`), one every 100 ms as a drag sends them at most
(static/js/film/class.js): the followers' films follow a drag.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.helpers.server import HOST, finish_prober, pct, running_server, start_prober  # noqa: E402

SPEC = {"model": "text", "text": "the cat sat on the mat."}


MOVED = "step"  # the field a move sets and an event is read by: "film_step" for a film class (--film)


async def follow(port: int, code: str, arrivals: dict[int, list[float]], connected: asyncio.Event, counter: list[int]):
    reader, writer = await asyncio.open_connection(HOST, port)
    # HTTP/1.0: the body streams unchunked until the server closes it
    writer.write(
        f"GET /api/sessions/{code}/events HTTP/1.0\r\nHost: {HOST}\r\nAccept: text/event-stream\r\n\r\n".encode()
    )
    await writer.drain()
    try:
        while True:
            line = await reader.readline()
            if not line:
                return
            if line.startswith(b"data:"):
                at = time.perf_counter()
                step = json.loads(line[5:])[MOVED]
                arrivals.setdefault(step, []).append(at)
                if step == 0:
                    counter[0] += 1
                    connected.set()
    finally:
        writer.close()


async def wait_followers(client: httpx.AsyncClient, code: str, key: str, count: int, timeout: float = 60) -> int:
    deadline = time.perf_counter() + timeout
    seen = 0
    while time.perf_counter() < deadline:
        answer = await client.get(f"/api/sessions/{code}", headers={"X-Presenter-Key": key})
        if answer.status_code != 200:
            raise RuntimeError(f"GET state answered {answer.status_code}: {answer.text}")
        seen = answer.json()["followers"]
        if seen >= count:
            break
        await asyncio.sleep(0.2)
    return seen


async def run(base: str, port: int, followers: int, moves: int, film: str) -> tuple[list[float], int, int]:
    async with httpx.AsyncClient(base_url=base, timeout=60) as client:
        created = (await client.post("/api/sessions", json={"run": film} if film else {"spec": SPEC})).json()
        code, key = created["code"], created["presenter_key"]
        arrivals: dict[int, list[float]] = {}
        connected, counter = asyncio.Event(), [0]
        tasks = [asyncio.create_task(follow(port, code, arrivals, connected, counter)) for _ in range(followers)]
        counted = await wait_followers(client, code, key, followers)
        latencies, missing = [], 0
        for move in range(1, moves + 1):
            step = 40 + move  # distinct steps: each move is recognisable
            sent = time.perf_counter()
            response = await client.post(
                f"/api/sessions/{code}/state", json={MOVED: step}, headers={"X-Presenter-Key": key}
            )
            response.raise_for_status()
            deadline = sent + 10
            while len(arrivals.get(step, [])) < followers and time.perf_counter() < deadline:
                await asyncio.sleep(0.002)
            got = arrivals.get(step, [])
            missing += followers - len(got)
            latencies += [at - sent for at in got]
            await asyncio.sleep(0.1 if film else 0.25)  # a drag's pace; a presenter talks between steps
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return latencies, counted, missing


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--followers", type=int, default=200)
    parser.add_argument("--moves", type=int, default=20)
    parser.add_argument("--redis", default="", help="XT_REDIS_URL for the server (default: in-process sessions)")
    parser.add_argument("--film", default="", help="a film class on this run of the shipped runs (induction)")
    args = parser.parse_args()
    env = {"XT_REDIS_URL": args.redis} if args.redis else {}
    if args.film:
        from app.films.runs import DEMO_RUNS

        global MOVED
        MOVED = "film_step"
        env["XT_RUNS_DIR"] = str(DEMO_RUNS)
    # every follower comes from 127.0.0.1: one address's share of streams is the class's here
    env["XT_MAX_CLIENT_STREAMS"] = str(args.followers + 16)
    with running_server(env) as server:
        prober = start_prober(server.port, 0.02)
        started = time.perf_counter()
        latencies, counted, missing = asyncio.run(run(server.base, server.port, args.followers, args.moves, args.film))
        elapsed = time.perf_counter() - started
        health, failures = finish_prober(prober)
    ms = [x * 1000 for x in latencies]
    print(f"{args.followers} followers ({counted} counted by the server), {args.moves} moves, {elapsed:.1f} s")
    print(f"fan-out latency: p50 {pct(ms, 50):.1f} ms, p95 {pct(ms, 95):.1f} ms, max {max(ms, default=0):.1f} ms, "
          f"mean {statistics.fmean(ms) if ms else 0:.1f} ms over {len(ms)} deliveries, {missing} missing")  # fmt: skip
    print(f"/healthz meanwhile: {len(health)} probes, p50 {pct(health, 50):.1f} ms, p95 {pct(health, 95):.1f} ms, "
          f"max {max(health, default=0):.1f} ms, {len(failures)} failures")  # fmt: skip
    ok = missing == 0 and pct(ms, 95) < 250 and max(health, default=0) < 100 and not failures
    print("targets (p95 < 250 ms, every /healthz < 100 ms, nothing missing):", "met" if ok else "MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
