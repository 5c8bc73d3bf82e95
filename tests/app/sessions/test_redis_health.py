"""The Redis back end under a killed worker and a restarted Redis (issue 24, findings 2 and 6):
a SIGKILLed worker's streams stop counting within two heartbeats, and the first requests
after a Redis restart are answered (the pool's dropped connections are retried), not 503."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from app.sessions.service import Sessions
from app.settings import Settings
from app.spec import TraceSpec, resolve
from tests.app.sessions.conftest import SPEC, _free_port
from tests.helpers.aio import run_async

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

WORKER = textwrap.dedent(
    """
    import asyncio, sys
    from app.sessions.service import Sessions
    from app.settings import Settings

    async def main(url, code):
        sessions = Sessions(Settings(redis_url=url, follower_heartbeat_seconds=1))
        fields = await sessions.store.load(code)
        streams = [sessions.events(fields, f"learner {i}") for i in range(20)]
        for stream in streams:
            await anext(stream)
        print("ready", flush=True)
        await asyncio.sleep(3600)

    asyncio.run(main(sys.argv[1], sys.argv[2]))
    """
)


async def _new_session(sessions: Sessions) -> dict:
    spec = resolve(TraceSpec.model_validate(SPEC), Settings())
    code, _ = await sessions.create(spec, [], None, 0)
    return await sessions.store.load(code)


@pytest.mark.long  # a worker process killed, heartbeats waited out in real time: make test-long
def test_a_killed_workers_streams_stop_counting_within_two_heartbeats(redis_url):
    async def run() -> float:
        sessions = Sessions(Settings(redis_url=redis_url))
        fields = await _new_session(sessions)
        env = dict(os.environ, PYTHONPATH=ROOT)
        worker = subprocess.Popen(
            [sys.executable, "-c", WORKER, redis_url, fields["code"]], stdout=subprocess.PIPE, env=env, cwd=ROOT
        )
        try:
            assert worker.stdout.readline().strip() == b"ready"
            assert await sessions.store.followers(fields["code"]) == 20
            worker.send_signal(signal.SIGKILL)
            worker.wait(timeout=10)
            killed = time.monotonic()
            while await sessions.store.followers(fields["code"]) > 0:
                assert time.monotonic() - killed < 10, "the killed worker's streams still count"
                await asyncio.sleep(0.1)
            return time.monotonic() - killed
        finally:
            worker.kill()
            await sessions.close()

    assert run_async(run()) <= 2 * 1 + 2 + 0.5  # two missed beats of 1 s and 2 s of slack


def _start_redis(port: int, workdir) -> subprocess.Popen:
    args = ["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(workdir)]
    proc = subprocess.Popen([shutil.which("redis-server"), *args], stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True).stdout.strip() != b"PONG":
        assert time.monotonic() < deadline and proc.poll() is None, "redis-server did not start"
        time.sleep(0.05)
    return proc


@pytest.mark.long  # a Redis server of its own stopped and started again: make test-long
@pytest.mark.skipif(shutil.which("redis-cli") is None, reason="needs redis-cli")
def test_the_first_requests_after_a_redis_restart_are_answered(redis_url, tmp_path):
    port = _free_port()
    server = _start_redis(port, tmp_path)
    url = f"redis://127.0.0.1:{port}/0"

    async def run() -> tuple[list, list]:
        sessions = Sessions(Settings(redis_url=url, follower_heartbeat_seconds=1))
        fields = await _new_session(sessions)
        # every pooled connection used once, then Redis restarts under them
        await asyncio.gather(*(sessions.store.load(fields["code"]) for _ in range(30)))
        stream = sessions.events(fields, "a learner")
        await anext(stream)
        nonlocal server
        server.terminate()
        server.wait(timeout=10)
        server = _start_redis(port, tmp_path)
        loads = await asyncio.gather(*(sessions.store.load(fields["code"]) for _ in range(100)), return_exceptions=True)
        # the open stream: its session is gone with the restart (no persistence): a clean end
        ends = [event async for event in stream]
        await sessions.close()
        return loads, ends

    try:
        loads, ends = run_async(asyncio.wait_for(run(), 30))
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert [type(x).__name__ for x in loads if isinstance(x, BaseException)] == []
    assert [e.event for e in ends if e.event] == ["ended"]
