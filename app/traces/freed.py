"""Freed memory given back to the kernel (glibc's malloc_trim), so that RSS follows what the server
holds: xt_core.memory keeps freed memory for the next step (a trim threshold up to 1.25x the largest
step so far, per malloc arena: one for each worker thread), which is fast for one notebook but let
a class's mix sit ~0.5-1 GB over the stated bound, and stay there idle (issue 35, finding 7).

Once no job of a worker pool is pending (app.services.Services.run), and every second while a check
job runs with none pending (its steps run outside `run`), the light pool calls give_back: it trims
if the RSS grew by GROWTH_BYTES since the last trim. Not while a request's job runs, as long as the
heap keeps at most settings.kept_freed_bytes freed: a trim beside a build takes the arena's lock
and hands back pages the build is about to reuse.

Past that, whatever runs (`watch`: a thread of the process's own, every WATCH_S): the trim
threshold (xt_core.memory.limit_freed_memory) bounds only the free memory at the heap's top, and a
class's mix left 0.5-0.9 GB freed *between* live chunks, resident, beside the budget (glibc's
mallinfo2 and the RSS sampled at the peaks: benchmarks/memory_mix.py --sample) while new arrays
took fresh pages; malloc_trim hands those pages back too.
Nothing happens outside glibc or Linux.
"""

from __future__ import annotations

import ctypes
import functools
import os
import threading
import time

GROWTH_BYTES = 16 << 20  # RSS grown past the last trim's by this much: worth a trim
WATCH_S = 0.25  # how often `watch` reads the heap's free bytes (mallinfo2: a walk of its free lists)

_lock = threading.Lock()
_after_last_trim = [0]  # RSS right after the last trim
_watched = [0]  # the free bytes `watch` lets the heap keep; 0 until it runs


@functools.cache
def _malloc_trim():
    try:
        return ctypes.CDLL(None).malloc_trim  # the process's own libc (ctypes drops the GIL in the call)
    except (OSError, AttributeError, TypeError):
        return None


def rss_bytes() -> int:
    """This process's resident bytes (/proc/self/statm); 0 where there is none."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def give_back() -> bool:
    """Trims the malloc arenas if the RSS grew enough since the last trim: whether it did."""
    trim = _malloc_trim()
    if trim is None:
        return False
    with _lock:  # one trim at a time; a job ending meanwhile finds the RSS already down
        if rss_bytes() - _after_last_trim[0] < GROWTH_BYTES:
            return False
        trim(0)
        _after_last_trim[0] = rss_bytes()
        return True


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks")
    ] + [("keepcost", ctypes.c_size_t)]


@functools.cache
def _mallinfo2():
    try:
        mallinfo2 = ctypes.CDLL(None).mallinfo2  # glibc 2.33 on
    except (OSError, AttributeError, TypeError):
        return None
    mallinfo2.restype = _MallInfo2
    return mallinfo2


def heap_free_bytes() -> int:
    """Bytes free inside the malloc heap (glibc's fordblks: resident or already handed back); 0 where
    it cannot be read."""
    mallinfo2 = _mallinfo2()
    return 0 if mallinfo2 is None else int(mallinfo2().fordblks)


def give_back_past(most: int) -> bool:
    """give_back, if the heap holds more than `most` bytes free: whether it trimmed."""
    return heap_free_bytes() > most and give_back()


def watch(most: int) -> None:
    """From now on, every WATCH_S, the heap's free bytes past `most` go back to the kernel
    (give_back_past), whatever runs; one thread per process, the latest `most` in force."""
    with _lock:
        started, _watched[0] = _watched[0] > 0, max(1, most)
    if not started:
        threading.Thread(target=_watch, name="xt-freed-watch", daemon=True).start()


def _watch() -> None:
    while True:
        time.sleep(WATCH_S)
        give_back_past(_watched[0])
