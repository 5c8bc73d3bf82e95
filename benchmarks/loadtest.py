"""Concurrency load test (issue 7, item 4): N clients on loopback for a bounded time, mixing
cold requests (new specs: trace builds, first step views with their gradient check) and
cached ones (step views already rendered, tensors as .npy and JSON, pages, listings), while
a separate process probes /healthz every 20 ms. Passes with zero errors (no 5xx, no 503, no
connection failure, no unexpected 4xx) and every /healthz under 100 ms. A second, idle server
is probed alike meanwhile: its figures are what the machine alone costs (other jobs on a
shared machine take cores too), printed beside the loaded server's.

    make loadtest                    # or: .venv/bin/python benchmarks/loadtest.py [--clients 50] [--seconds 45]

The load itself is tests/helpers/load.py (run_load); tests/app/test_load.py runs a short
version of it against its own server in `make test`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.helpers.load import PROBE_INTERVAL_S, run_load, summary  # noqa: E402
from tests.helpers.server import finish_prober, running_server, start_prober  # noqa: E402

HEALTHZ_TARGET_MS = 100.0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument(
        "--seconds", type=float, default=45.0, help="duration of the load (then in-flight requests end)"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    clients, seconds = max(1, min(args.clients, 500)), max(1.0, min(args.seconds, 600.0))
    with running_server() as server, running_server() as idle:
        print(f"server pid {server.pid} on {server.base}; {clients} clients for {seconds:.0f} s ...", flush=True)
        # A second server, idle, probed alike: what this machine's scheduling alone costs a probe
        # (other jobs on a shared machine), to read the loaded server's figures against.
        control = start_prober(idle.port, PROBE_INTERVAL_S)
        try:
            result = run_load(server.base, server.port, server.pid, clients, seconds, args.seed)
        finally:
            result_control, _ = finish_prober(control)
    result["control"] = result_control
    print(summary(result))
    health = result["health"]
    ok = not (result["tally"].errors or result["tally"].unexpected or result["health_failures"])
    ok = ok and bool(health) and max(health) < HEALTHZ_TARGET_MS
    print(f"\n{'PASS' if ok else 'FAIL'}: zero errors and every /healthz < {HEALTHZ_TARGET_MS:.0f} ms")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
