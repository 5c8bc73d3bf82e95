"""Following the presenter across processes: the presenter moves the class on server A, a
student streaming from server B receives each new state. With Redis (two uvicorn processes
sharing a redis-server) and without (one process, the in-process store): the same test.

Each move reaches the follower, in order, and `ended` closes its stream; how fast is a figure of
benchmarks/sse_fanout.py (`--redis URL` through Redis), never an assertion here (machines are
shared). The latencies are printed for a reader of the log."""

from __future__ import annotations

import asyncio
import statistics
import time

import httpx
import pytest

from tests.app.sessions.conftest import SPEC, servers, sse_events
from tests.helpers.aio import run_async

# Real servers: one at a time, in the `server` xdist group (tests/conftest.py).
pytestmark = pytest.mark.server

MOVES = (3, 7, 11, 19, 42)


async def _follow(base: str, code: str, seen: list, ready: asyncio.Event, ended: list) -> None:
    async with (
        httpx.AsyncClient(timeout=httpx.Timeout(30, read=60)) as client,
        client.stream("GET", f"{base}/api/sessions/{code}/events") as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        async for name, state in sse_events(response):
            if name == "ended":
                ended.append(time.perf_counter())
                return  # the server closes the stream after it
            seen.append((time.perf_counter(), state))
            ready.set()


async def _wait_for(seen: list, predicate, timeout: float = 10.0) -> float:
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        for at, state in seen:
            if predicate(state):
                return at
        await asyncio.sleep(0.005)
    raise AssertionError(f"no state matched within {timeout} s; seen: {[s['step'] for _, s in seen]}")


async def _scenario(presenter_base: str, follower_base: str) -> list[float]:
    async with httpx.AsyncClient(base_url=presenter_base, timeout=60) as client:
        created = (await client.post("/api/sessions", json={"spec": SPEC})).json()
        code, key = created["code"], created["presenter_key"]
        assert created["join_url"].endswith(f"/join/{code}")
        seen, ready, ended = [], asyncio.Event(), []
        follower = asyncio.create_task(_follow(follower_base, code, seen, ready, ended))
        await asyncio.wait_for(ready.wait(), 30)
        assert seen[0][1]["step"] == 0 and "presenter_key" not in seen[0][1]
        # the follower is counted (across processes) and the presenter sees it
        await _wait_for_followers(client, code, key, 1)
        # a wrong key moves nobody
        denied = await client.post(
            f"/api/sessions/{code}/state", json={"step": 60}, headers={"X-Presenter-Key": "nope"}
        )
        assert denied.status_code == 403
        latencies = []
        for step in MOVES:
            sent = time.perf_counter()
            moved = await client.post(
                f"/api/sessions/{code}/state", json={"step": step}, headers={"X-Presenter-Key": key}
            )
            assert moved.status_code == 200, moved.text
            arrived = await _wait_for(seen, lambda s, step=step: s["step"] == step)
            latencies.append(arrived - sent)
        steps = [state["step"] for _, state in seen]
        in_order = [step for i, step in enumerate(steps) if i == 0 or step != steps[i - 1]]
        assert in_order == [0, *MOVES], steps  # every move, in order; the denied one (60) never
        await _end_class(client, code, key, follower, ended)
        return latencies


async def _end_class(client, code: str, key: str, follower: asyncio.Task, ended: list) -> None:
    """End class: only with the key; the follower's stream says `ended` (from the other process
    too) and closes; no later move reaches anyone, the code is gone."""
    presenter = {"X-Presenter-Key": key}
    assert (await client.delete(f"/api/sessions/{code}", headers={"X-Presenter-Key": "nope"})).status_code == 403
    ended_answer = await client.delete(f"/api/sessions/{code}", headers=presenter)
    assert ended_answer.status_code == 200 and ended_answer.json() == {"code": code, "ended": True}
    await asyncio.wait_for(follower, 30)  # a deadline for a hung stream, not a measure of speed
    assert ended
    assert (await client.post(f"/api/sessions/{code}/state", json={"step": 5}, headers=presenter)).status_code == 404
    assert (await client.get(f"/api/sessions/{code}")).status_code == 404
    assert (await client.delete(f"/api/sessions/{code}", headers=presenter)).status_code == 404


async def _wait_for_followers(client, code: str, key: str, count: int) -> None:
    for _ in range(200):
        state = (await client.get(f"/api/sessions/{code}", headers={"X-Presenter-Key": key})).json()
        if state["followers"] == count:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the presenter never saw {count} follower(s): {state['followers']}")


def _run(presenter_base: str, follower_base: str) -> None:
    latencies = run_async(_scenario(presenter_base, follower_base))
    median = statistics.median(latencies)
    print(
        f"fan-out latency over {len(latencies)} moves: median {median * 1000:.1f} ms, max {max(latencies) * 1000:.1f} ms"
    )


@pytest.mark.long  # the same scenario as below on one process: tests/app/sessions/test_api.py covers the store
def test_one_process_without_redis():
    with servers(1, {}) as (base,):
        _run(base, base)


def test_two_processes_share_redis(redis_url):
    with servers(2, {"XT_REDIS_URL": redis_url}) as (a, b):
        _run(a, b)
