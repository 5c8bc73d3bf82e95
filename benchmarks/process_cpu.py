"""The CPU a command's processes used, by kind (the pytest workers, chromium, the servers, node):
what `make test` spends its two cores on. benchmarks/suite_profile.py counts a worker's process
tree, which loses the chromium processes playwright's driver detaches; this samples every process
whose working directory is under the checkout once a second, keeps each one's last CPU time, and
sums them by kind when the command ends (a process living under a second may be missed).

    .venv/bin/python -m benchmarks.process_cpu -- make test
"""

import argparse
import collections
import os
import subprocess
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
KINDS = (  # (a word in the command line, the kind it names): the first that matches
    ("chromium", "chromium"),
    ("uvicorn", "servers"),
    ("xt serve", "servers"),
    ("xt_cli", "servers"),
    ("http.server", "servers"),
    ("redis-server", "servers"),
    ("node", "playwright's node"),
    ("exec(eval(", "pytest workers"),
)


def kind_of(command: str) -> str:
    return next((kind for word, kind in KINDS if word in command), "other")


def sample(seen: dict) -> None:
    """Each live process under the checkout: its CPU seconds so far, by (pid, start time)."""
    for process in psutil.process_iter(["pid", "create_time", "cwd", "cmdline", "cpu_times"]):
        info = process.info
        if not info["cwd"] or not info["cwd"].startswith(str(ROOT)) or info["cpu_times"] is None:
            continue
        times = info["cpu_times"]
        seen[(info["pid"], info["create_time"])] = (times.user + times.system, " ".join(info["cmdline"] or ()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command to run, after --")
    args = parser.parse_args()
    command = [word for word in args.command if word != "--"] or ["make", "test"]
    seen: dict = {}
    started = time.monotonic()
    running = subprocess.Popen(command, cwd=ROOT)
    while running.poll() is None:
        sample(seen)
        time.sleep(1.0)
    wall = time.monotonic() - started
    by_kind = collections.Counter()
    for cpu, line in seen.values():
        by_kind[kind_of(line)] += cpu
    print(f"{' '.join(command)}: exit {running.returncode}, {wall:.0f} s wall, {os.cpu_count()} CPUs")
    for kind, cpu in by_kind.most_common():
        print(f"  {cpu:7.1f} CPU-s  {kind}")
    print(f"  {sum(by_kind.values()):7.1f} CPU-s  in all")


if __name__ == "__main__":
    main()
