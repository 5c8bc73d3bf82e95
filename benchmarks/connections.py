"""One hostile client against `xt serve` under an open-file limit (issue 24, finding 3): it opens
--attempts event streams, then --attempts idle sockets, from 127.0.0.2, while /healthz, a
presenter's move and a new join are asked from 127.0.0.1. Prints the streams and idle sockets
the server held, the /healthz latencies while they were held and what failed.

    python benchmarks/connections.py                          # this checkout
    python benchmarks/connections.py --root /tmp/xt-before     # another checkout (git archive)
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from app.connections import raise_open_file_limit  # noqa: E402
from tests.helpers.connections import OPEN_FILES, hostile_client, open_session, xt_serve  # noqa: E402
from tests.helpers.server import ROOT, pct  # noqa: E402


def _line(name: str, served: dict) -> str:
    ms = served["healthz_ms"]
    return (
        f"{name}: /healthz {len(ms)} of 20 answered, p50 {pct(ms, 50):.1f} ms, p95 {pct(ms, 95):.1f} ms; "
        f"failures: {served['failures'] or 'none'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose `xt serve` runs")
    parser.add_argument("--open-files", type=int, default=OPEN_FILES)
    parser.add_argument("--attempts", type=int, default=1_100)
    parser.add_argument("--header-timeout", type=float, default=2.0)
    args = parser.parse_args()
    raise_open_file_limit(4 * args.attempts)
    env = {"XT_HEADER_TIMEOUT_SECONDS": str(args.header_timeout)}
    with xt_serve(env, args.open_files, root=args.root.resolve()) as server:
        code, key = open_session(server.port)
        started = time.perf_counter()
        seen = asyncio.run(hostile_client(server.port, code, key, args.attempts, args.header_timeout))
        elapsed = time.perf_counter() - started
    print(f"root {args.root}, open-file limit {args.open_files}, {args.attempts} attempts each, {elapsed:.1f} s")
    print(f"streams held: {seen['streams_held']} ({seen['stream_outcomes']})")
    print(_line("while the streams were held", seen["while_streams"]))
    print(
        f"idle sockets kept: {seen['idle_kept']} ({seen['idle_outcomes']}); closed by the header timeout: "
        f"{seen['idle_closed_by_timeout']}"
    )
    print(_line("while the idle sockets were held", seen["while_idle"]))


if __name__ == "__main__":
    main()
