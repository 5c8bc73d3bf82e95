"""Where `make test`'s time goes: each test's wall time and the CPU of its worker's whole process
tree (the worker, and the chromium, uvicorn and redis processes it started), summed by xdist group.

CPU-seconds say how much work a group is, whatever else the machine runs; wall time on a shared
machine does not. Run the suite with this module as a plugin, then summarise:

    XT_SUITE_PROFILE=/tmp/suite.jsonl .venv/bin/python -m pytest -q -n 2 --dist loadgroup \\
        --no-loadscope-reorder -p benchmarks.suite_profile
    .venv/bin/python -m benchmarks.suite_profile /tmp/suite.jsonl

A process that ends is counted through its parent's `children_*` times once the parent reaps it;
one reparented to init (a daemon) is lost, so the CPU figures are a lower bound.
"""

import collections
import json
import os
import sys
import time

import psutil
import pytest

OUT_VARIABLE = "XT_SUITE_PROFILE"


def tree_cpu_seconds(process: psutil.Process) -> float:
    """User and system CPU of a process, its live descendants and the ones they reaped."""
    total = 0.0
    for member in [process, *process.children(recursive=True)]:
        try:
            times = member.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system + times.children_user + times.children_system
    return total


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    out = os.environ.get(OUT_VARIABLE)
    if not out:
        yield
        return
    me = psutil.Process()
    start, cpu_before = time.time(), tree_cpu_seconds(me)
    yield
    row = {
        "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
        "id": item.nodeid,
        "start": start,
        "end": time.time(),
        "cpu": tree_cpu_seconds(me) - cpu_before,
    }
    with open(out, "a") as sink:
        sink.write(json.dumps(row) + "\n")


def group_of(node_id: str) -> str:
    """The xdist group `tests/conftest.py` appended to the node id, else the module."""
    return node_id.rsplit("@", 1)[1] if "@" in node_id else node_id.split("::")[0]


def summarise(rows: list[dict]) -> str:
    by_group = collections.defaultdict(lambda: [0.0, 0.0, 0])
    for row in rows:
        entry = by_group[group_of(row["id"])]
        entry[0] += row["end"] - row["start"]
        entry[1] += row["cpu"]
        entry[2] += 1
    lines = [f"{'group':60} {'wall s':>8} {'cpu s':>8} {'tests':>6}"]
    for group, (wall, cpu, count) in sorted(by_group.items(), key=lambda kv: -kv[1][1])[:40]:
        lines.append(f"{group[:60]:60} {wall:8.1f} {cpu:8.1f} {count:6d}")
    lines.append(workers_line(rows))
    return "\n".join(lines)


def workers_line(rows: list[dict]) -> str:
    """Each worker's span (first start to last end), time inside tests and CPU."""
    spans = collections.defaultdict(list)
    for row in rows:
        spans[row["worker"]].append(row)
    parts = []
    for worker, mine in sorted(spans.items()):
        span = max(r["end"] for r in mine) - min(r["start"] for r in mine)
        inside = sum(r["end"] - r["start"] for r in mine)
        cpu = sum(r["cpu"] for r in mine)
        parts.append(f"{worker}: span {span:.0f} s, in tests {inside:.0f} s, cpu {cpu:.0f} s")
    return "; ".join(parts)


if __name__ == "__main__":
    with open(sys.argv[1]) as source:
        print(summarise([json.loads(line) for line in source if line.strip()]))
