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
