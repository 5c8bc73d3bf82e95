"""Real servers for the session tests: Debian's redis-server on a free loopback port (no
persistence; started and stopped by the fixture), uvicorn processes from tests/helpers/server.py,
and a small Server-Sent Events reader.

Without redis-server the Redis tests skip, unless XT_REQUIRE_REDIS=1 (CI) makes them fail."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
from contextlib import ExitStack, contextmanager

import pytest

from tests.helpers.env import required
from tests.helpers.server import start_server, stop_server, wait_ready

SPEC = {"model": "text", "text": "the cat sat on the mat."}
QUIZ_SPEC = {**SPEC, "quiz": 7}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory):
    binary = shutil.which("redis-server")
    if binary is None:
        message = "redis-server is missing: apt-get install redis-server to run the Redis session tests"
        if required("XT_REQUIRE_REDIS"):
            pytest.fail(message)
        pytest.skip(message)
    port = _free_port()
    workdir = tmp_path_factory.mktemp("redis")
    args = [
        binary,
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        str(workdir),
    ]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as conn:
                    conn.sendall(b"PING\r\n")
                    if conn.recv(16).startswith(b"+PONG"):
                        break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError(f"redis-server did not start on port {port}") from None
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@contextmanager
def servers(count: int, env: dict[str, str]):
    """`count` uvicorn processes with the same settings; their base URLs."""
    with ExitStack() as stack:
        running = []
        for _ in range(count):
            server = start_server(env)
            stack.callback(stop_server, server)
            running.append(server)
        for server in running:
            wait_ready(server)
        yield [server.base for server in running]


async def sse_events(response):
    """(event name, JSON data) of each event of an httpx streaming response; comments skipped."""
    name, data = "message", []
    async for line in response.aiter_lines():
        if line == "":
            if data:
                yield name, json.loads("\n".join(data))
            name, data = "message", []
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())
        elif line.startswith("event:"):
            name = line[6:].strip()
