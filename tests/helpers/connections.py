"""A hostile client's connections against a real `xt serve` (tests/app/test_connections.py,
benchmarks/connections.py): the server under an open-file limit, raw sockets from 127.0.0.2 (another
loopback address than the class's 127.0.0.1), and the class probed meanwhile. Every loop is
bounded, every socket is closed at the end, everything stays on loopback."""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from tests.helpers.server import HOST, ROOT, Server, free_port, stop_server, wait_ready

SPEC = {"model": "text", "text": "the cat sat on the mat."}
HOSTILE = "127.0.0.2"
OPEN_FILES = 1024
STATUS_WAIT_S = 5.0
GIVE_UP_AFTER = 3


@contextmanager
def xt_serve(env: dict[str, str], open_files: int = OPEN_FILES, root: Path = ROOT):
    """`xt serve` from the checkout `root` on a free 127.0.0.1 port, its open-file limit (soft
    and hard) at open_files."""
    port = free_port()
    models = tempfile.mkdtemp(prefix="xt-test-models-")
    full_env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", XT_MODELS_DIR=models, **env)
    full_env["PYTHONPATH"] = str(root)
    log = tempfile.NamedTemporaryFile(prefix=f"xt-serve-{port}-", suffix=".log", delete=False)  # noqa: SIM115

    def limit_files() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

    cmd = [sys.executable, "-m", "xt_cli", "serve", "--host", HOST, "--port", str(port)]
    proc = subprocess.Popen(
        cmd,
        cwd=root,
        env=full_env,
        stdout=log,
        stderr=subprocess.STDOUT,
        preexec_fn=limit_files,
        start_new_session=True,
    )
    log.close()
    server = Server(proc, port, Path(log.name))
    try:
        wait_ready(server, timeout=90)
        yield server
    finally:
        stop_server(server)


def request(port: int, method: str, path: str, body: dict | None = None, headers: dict | None = None):
    """(status, body, ms) of one request on a new connection from 127.0.0.1."""
    conn = http.client.HTTPConnection(HOST, port, timeout=30)
    try:
        data = json.dumps(body).encode() if body is not None else None
        all_headers = {"Content-Type": "application/json", **(headers or {})} if data else dict(headers or {})
        started = time.perf_counter()
        conn.request(method, path, body=data, headers=all_headers)
        response = conn.getresponse()
        payload = response.read()
        return response.status, payload, (time.perf_counter() - started) * 1000
    finally:
        conn.close()


def class_is_served(port: int, code: str, key: str, step: int, probes: int = 20) -> dict:
    """/healthz `probes` times, a presenter's move to `step` and a new join, from 127.0.0.1:
    {"healthz_ms": latencies of the 200s, "failures": what else happened}."""
    latencies, failures = [], []

    def attempt(what: str, method: str, path: str, expected: int, **kwargs) -> bytes:
        try:
            status, payload, ms = request(port, method, path, **kwargs)
        except (OSError, http.client.HTTPException) as exc:
            failures.append(f"{what}: {type(exc).__name__}")
            return b""
        if status != expected:
            failures.append(f"{what}: {status} {payload[:120]!r}")
        elif what == "healthz":
            latencies.append(ms)
        return payload

    for _ in range(probes):
        attempt("healthz", "GET", "/healthz", 200)
    attempt("move", "POST", f"/api/sessions/{code}/state", 200, body={"step": step}, headers={"X-Presenter-Key": key})
    attempt("join", "GET", f"/join/{code}", 303)
    state = attempt("state", "GET", f"/api/sessions/{code}", 200)
    if state and json.loads(state).get("step") != step:
        failures.append(f"state: step {json.loads(state).get('step')}, not {step}")
    return {"healthz_ms": latencies, "failures": failures}


async def open_from(port: int, request: bytes | None, source: str = HOSTILE):
    """A connection from `source`: ((reader, writer) or None, outcome): with `request` sent, the
    status of its answer (or what failed); without, "open"."""
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(HOST, port, local_addr=(source, 0)), STATUS_WAIT_S
        )
    except (OSError, TimeoutError) as exc:
        return None, type(exc).__name__
    if request is None:
        return (reader, writer), "open"
    try:
        writer.write(request)
        line = await asyncio.wait_for(reader.readline(), STATUS_WAIT_S)
    except (OSError, TimeoutError) as exc:
        return (reader, writer), type(exc).__name__
    status = int(line.split()[1]) if line.startswith(b"HTTP/1.1 ") else f"closed {line[:20]!r}"
    return (reader, writer), status


async def hold(port: int, request: bytes | None, n: int, keep=lambda outcome: True) -> tuple[list, dict]:
    """n connections opened one after another (the caps see them in turn): those whose outcome
    `keep` accepts (the others are closed at once), and the count of each outcome. Stops after
    GIVE_UP_AFTER failures in a row (a server out of descriptors answers nothing)."""
    held, outcomes, failing = [], {}, 0
    for _ in range(n):
        pair, outcome = await open_from(port, request)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        failing = 0 if isinstance(outcome, int) or outcome == "open" else failing + 1
        if failing >= GIVE_UP_AFTER:
            outcomes["gave up"] = 1
            close_all([pair] if pair is not None else [])
            break
        if pair is not None:
            if keep(outcome):
                held.append(pair)
            else:
                pair[1].transport.abort()
    return held, outcomes


async def still_open(pairs: list, settle_s: float = 0.5) -> list:
    """The connections the server kept (a refused one reads its 429 and the end at once);
    the refused ones are closed."""
    await asyncio.sleep(settle_s)
    kept = []
    for reader, writer in pairs:
        try:
            await asyncio.wait_for(reader.read(1), 0.001)  # the refusal's first byte, or the end
        except TimeoutError:
            kept.append((reader, writer))
            continue
        except OSError:
            pass  # reset: not kept either
        writer.transport.abort()
    return kept


async def closed_by_server(pairs: list, within_s: float) -> int:
    """How many of the connections the server closes within within_s (their reads end)."""

    async def ends(reader) -> bool:
        try:
            while await asyncio.wait_for(reader.read(65536), within_s):
                pass
        except TimeoutError:
            return False
        except OSError:
            return True
        return True

    return sum(await asyncio.gather(*(ends(reader) for reader, _ in pairs)))


def close_all(pairs: list) -> None:
    for _, writer in pairs:
        writer.transport.abort()


def open_session(port: int) -> tuple[str, str]:
    status, payload, _ = request(port, "POST", "/api/sessions", {"spec": SPEC})
    assert status == 201, payload
    created = json.loads(payload)
    return created["code"], created["presenter_key"]


async def hostile_client(port: int, code: str, key: str, attempts: int, header_timeout_s: float) -> dict:
    """One client at HOSTILE opens `attempts` event streams one after another (keeping those
    answered 200), then `attempts` idle sockets (keeping those the server keeps); meanwhile and
    after, the class is probed (class_is_served). Everything it opened is closed at the end."""
    stream = f"GET /api/sessions/{code}/events HTTP/1.1\r\nHost: {HOST}:{port}\r\n\r\n".encode()
    streams, idle = [], []
    try:
        streams, stream_outcomes = await hold(port, stream, attempts, keep=lambda outcome: outcome == 200)
        while_streams = await asyncio.to_thread(class_is_served, port, code, key, 2)
        idle, idle_outcomes = await hold(port, None, attempts)
        idle = await still_open(idle)
        while_idle = await asyncio.to_thread(class_is_served, port, code, key, 3)
        timed_out = await closed_by_server(idle, header_timeout_s + 3)
    finally:
        close_all(streams)
        close_all(idle)
    return {
        "streams_held": len(streams),
        "stream_outcomes": stream_outcomes,
        "while_streams": while_streams,
        "idle_kept": len(idle),
        "idle_outcomes": idle_outcomes,
        "while_idle": while_idle,
        "idle_closed_by_timeout": timed_out,
    }
