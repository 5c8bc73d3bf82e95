"""A real server for tests and benchmarks: `uvicorn app.main:app` as a subprocess on a free
127.0.0.1 port (loopback only), with XT_* settings passed through the environment, waited for
by polling /healthz (a timeout, never a fixed sleep) and always stopped (SIGINT, then SIGKILL).

    with running_server({"XT_CACHE_BYTES": "4000000"}) as server:
        httpx.get(server.base + "/healthz")

Also the /healthz prober the load test runs in its own process, and /proc readers (RSS, CPU)."""

from __future__ import annotations

import http.client
import multiprocessing
import os
import queue
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"  # loopback only
LIVE_QUIZ_SECRET = "xt live test server"  # the run's live server's XT_QUIZ_SECRET (tests/conftest.py)


@dataclass
class Server:
    proc: subprocess.Popen
    port: int
    log_path: Path

    @property
    def base(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log_tail(self, chars: int = 4000) -> str:
        """The end of the server's stdout and stderr (for a failing test's message)."""
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def start_server(
    env: Mapping[str, str] | None = None, port: int | None = None, app: str = "app.main:app", root: Path = ROOT
) -> Server:
    """Starts uvicorn serving `app` from the checkout `root` (not yet answering: see
    wait_ready). One BLAS thread, as docs/api.md recommends."""
    port = port or free_port()
    full_env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    full_env.update(env or {})
    log = tempfile.NamedTemporaryFile(prefix=f"xt-uvicorn-{port}-", suffix=".log", delete=False)  # noqa: SIM115
    cmd = [sys.executable, "-m", "uvicorn", app, "--host", HOST, "--port", str(port)]
    cmd += ["--log-level", "warning", "--no-access-log"]
    # Its own session: a signal to the test run (Ctrl-C) does not reach it first, stop_server does.
    proc = subprocess.Popen(cmd, cwd=root, env=full_env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    log.close()
    return Server(proc, port, Path(log.name))


def healthz_ms(conn: http.client.HTTPConnection) -> float:
    """One GET /healthz on a kept-alive connection: its latency in ms (raises unless 200)."""
    started = time.perf_counter()
    conn.request("GET", "/healthz")
    response = conn.getresponse()
    response.read()
    if response.status != 200:
        raise RuntimeError(f"/healthz answered {response.status}")
    return (time.perf_counter() - started) * 1000


def wait_ready(server: Server, timeout: float = 60.0) -> float:
    """Seconds until /healthz answers; RuntimeError (with the server's log) on exit or timeout.
    Polls every 50 ms: startup (imports) takes ~1-3 s, much longer on a loaded machine."""
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        if server.proc.poll() is not None:
            raise RuntimeError(f"the server exited with {server.proc.returncode}:\n{server.log_tail()}")
        conn = http.client.HTTPConnection(HOST, server.port, timeout=5)
        try:
            healthz_ms(conn)
            return time.perf_counter() - started
        except (OSError, RuntimeError, http.client.HTTPException):
            time.sleep(0.05)
        finally:
            conn.close()
    raise RuntimeError(f"the server did not answer /healthz within {timeout:.0f} s:\n{server.log_tail()}")


def stop_server(server: Server) -> None:
    """SIGINT (uvicorn's graceful shutdown), SIGKILL after 10 s; removes the log."""
    proc = server.proc
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
    server.log_path.unlink(missing_ok=True)


@contextmanager
def running_server(
    env: Mapping[str, str] | None = None, timeout: float = 60.0, app: str = "app.main:app", root: Path = ROOT
) -> Iterator[Server]:
    server = start_server(env, app=app, root=root)
    try:
        wait_ready(server, timeout)
        yield server
    finally:
        stop_server(server)


# ---------------------------------------------------------------------- measuring


def probe_health(port: int, interval: float, stop, out, ready=None) -> None:
    """GET /healthz every `interval` s until `stop` (an Event) is set; puts (latencies in ms,
    failures) on `out`; sets `ready` once probing. Run in its own process so the probes never
    queue behind the load generator's event loop or GIL; plain http.client keeps the client
    side negligible."""
    latencies: list[float] = []
    failures: list[str] = []
    conn = http.client.HTTPConnection(HOST, port, timeout=30)
    if ready is not None:
        ready.set()
    while not stop.is_set():
        try:
            latencies.append(healthz_ms(conn))
        except (OSError, RuntimeError, http.client.HTTPException) as exc:
            failures.append(repr(exc))
            conn.close()
            conn = http.client.HTTPConnection(HOST, port, timeout=30)
        stop.wait(interval)
    conn.close()
    out.put((latencies, failures))


def start_prober(port: int, interval: float):
    """probe_health in a new process (spawned: no fork of a process with threads), running
    when this returns; finish_prober(handle) stops it and returns (latencies, failures)."""
    ctx = multiprocessing.get_context("spawn")
    out, stop, ready = ctx.Queue(), ctx.Event(), ctx.Event()
    prober = ctx.Process(target=probe_health, args=(port, interval, stop, out, ready), daemon=True)
    prober.start()
    if not ready.wait(timeout=60):
        prober.kill()
        raise RuntimeError("the /healthz prober did not start within 60 s")
    return prober, stop, out


def finish_prober(handle) -> tuple[list[float], list[str]]:
    prober, stop, out = handle
    stop.set()
    try:
        return out.get(timeout=60)
    except queue.Empty:
        return [], ["the prober sent no results"]
    finally:
        prober.join(timeout=10)
        if prober.is_alive():
            prober.kill()


def rss_mb(pid: int | str = "self") -> float | None:
    """Resident memory of a process (/proc/<pid>/status VmRSS), None when it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far (/proc/<pid>/stat utime and stime)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(values: list[float], q: float) -> float:
    """The q-th percentile (nearest rank); 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def wait_until_idle(pid: int, timeout: float = 60.0, quiet: float = 0.25) -> float:
    """Seconds until a process has used under a tenth of a core for `quiet` seconds (its builds
    and checks done); AssertionError after `timeout` seconds of work."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        before = cpu_seconds(pid)
        time.sleep(quiet)
        if cpu_seconds(pid) - before < 0.1 * quiet:
            return time.monotonic() - started
    raise AssertionError(f"process {pid} was still working after {timeout:.0f} s")
