"""Memory of the trace cache: builds traces for many distinct specs through the app's TraceStore
with a small `cache_bytes` bound, in this one process, and reports the bytes each trace counts
(Trace.nbytes, which counts a float32 trace's float64 twin up front), the store's total, and the
process RSS (/proc/self/status VmRSS) after 50, 100 and 200 specs. Not part of the test run:

    .venv/bin/python benchmarks/memory.py [--specs 200] [--cache-mb 200]

Specs alternate tiny (the default config, char tokens) and class (4 layers, 8 heads, width 256,
T = 128, byte tokens), each with its own seed so every one is a new trace. No gradient checks run,
so no float64 twin is built: the bound counts memory that is not (yet) held."""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.settings import Settings  # noqa: E402
from app.spec import TraceSpec, resolve  # noqa: E402
from app.traces.store import TraceStore  # noqa: E402
from tests.helpers.server import rss_mb  # noqa: E402
from tests.helpers.specs import class_spec  # noqa: E402


def spec_for(i: int) -> tuple[str, TraceSpec]:
    if i % 2 == 0:
        return "tiny", TraceSpec(tokenizer="char", text="the cat sat on the mat. the dog sat on the log.", seed=i)
    return "class", TraceSpec(**class_spec(i))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--specs", type=int, default=200)
    parser.add_argument("--cache-mb", type=float, default=200.0)
    args = parser.parse_args()
    checkpoints = sorted({c for c in (50, 100, 200, args.specs) if c <= args.specs})
    threadpool_limits(limits=1, user_api="blas")  # as the server does
    settings = Settings(cache_bytes=int(args.cache_mb * 1e6))
    store = TraceStore(settings)
    start_rss = rss_mb()
    counted: dict[str, list[int]] = {"tiny": [], "class": []}
    seconds: dict[str, list[float]] = {"tiny": [], "class": []}
    print(f"cache_bytes = {settings.cache_bytes / 1e6:,.0f} MB; RSS before any trace: {start_rss:,.0f} MB\n")
    print("| specs built | traces cached | store bytes (counted) | RSS | RSS − start | RSS vs bound |")
    print("|---|---|---|---|---|---|")
    started = time.perf_counter()
    for i in range(args.specs):
        name, raw = spec_for(i)
        spec = resolve(raw, settings)
        t0 = time.perf_counter()
        trace = store.get(spec)
        seconds[name].append(time.perf_counter() - t0)
        counted[name].append(trace.nbytes())
        del trace
        if i + 1 in checkpoints:
            gc.collect()
            rss = rss_mb()
            print(
                f"| {i + 1} | {len(store)} | {store.nbytes / 1e6:,.0f} MB | {rss:,.0f} MB | {rss - start_rss:,.0f} MB "
                f"| {rss / (settings.cache_bytes / 1e6):.2f}× |"
            )
    print(f"\n({time.perf_counter() - started:.0f} s in all)\n")
    print("| config | traces | Trace.nbytes (counted, twin included) | held without the twin (÷3) | build time |")
    print("|---|---|---|---|---|")
    for name, sizes in counted.items():
        if sizes:
            size = statistics.median(sizes)
            print(
                f"| {name} | {len(sizes)} | {size / 1e6:,.1f} MB | {size / 3e6:,.1f} MB "
                f"| {statistics.median(seconds[name]) * 1000:,.0f} ms |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
