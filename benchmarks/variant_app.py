"""The app with one of issue 35's memory changes undone, named by XT_BENCH_VARIANT (a server's
import target for benchmarks/checks_job.py; never served otherwise): `notrim` (no malloc_trim while
a check job runs, app.traces.freed), `noshare` (a malloc arena per thread,
xt_core.memory.share_arenas), both, or `base` (as it is)."""

import os

from app.traces import freed
from xt_core import memory

VARIANT = os.environ.get("XT_BENCH_VARIANT", "base")
if "noshare" in VARIANT:
    memory.share_arenas = lambda *args: False
if "notrim" in VARIANT:
    freed.give_back = lambda: False

from app.main import app  # noqa: E402,F401 - made with the variant in place


def _sample_accounting(path: str) -> None:
    """Every 50 ms, a line: seconds, RSS MB, and what the server counts (MB): traces alive,
    reservations and holds, recomputed segments, kept large buffers; holds running, builds running;
    the heap (MB: mapped, in use, free between its chunks; glibc's mallinfo2); past the budget, the holds and builds waiting and the cached traces (id:MB, * in use)."""
    import threading
    import time

    from app.traces.freed import rss_bytes
    from xt_core.recompute import RECOMPUTED

    services, mb, started = app.state.services, 1 << 20, time.perf_counter()

    def sample() -> None:
        with open(path, "w") as out:
            while True:
                store, admission = services.store, services.admission
                counted = (store.live_bytes, store.reserved, RECOMPUTED.nbytes, memory.kept_bytes())
                mbs = " ".join(f"{n / mb:.0f}" for n in counted)
                out.write(f"{time.perf_counter() - started:.2f} {rss_bytes() / mb:.0f} {mbs} ")
                out.write(f"{admission.holding} {admission.builds + admission.small_builds} {_heap_mb()}")
                if sum(counted) > services.settings.cache_bytes:  # who holds what, past the budget
                    cached = " ".join(f"{i[:6]}:{n / mb:.0f}{'*' if used else ''}" for i, n, used in store.inventory())
                    out.write(f" | waiting holds {len(admission.working)} builds {admission.waiting} | {cached}")
                out.write("\n")
                out.flush()
                time.sleep(0.05)

    threading.Thread(target=sample, daemon=True).start()


def _heap_mb() -> str:
    """The heap (app.traces.freed.heap_bytes), MB: mapped apart, in use, free between its chunks."""
    heap = freed.heap_bytes()
    return "- - -" if heap is None else " ".join(f"{n / (1 << 20):.0f}" for n in heap)


if os.environ.get("XT_BENCH_SAMPLE"):
    _sample_accounting(os.environ["XT_BENCH_SAMPLE"])
