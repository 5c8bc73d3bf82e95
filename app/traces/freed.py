"""Freed memory given back to the kernel (glibc's malloc_trim), so that RSS follows what the server
holds: xt_core.memory keeps freed memory for the next step (a trim threshold up to 1.25x the largest
step so far, per malloc arena: one for each worker thread), which is fast for one notebook but let
a class's mix sit ~0.5-1 GB over the stated bound, and stay there idle (issue 35, finding 7).

Once no job of a worker pool is pending (app.services.Services.run), and every second while a check
job runs with none pending (its steps run outside `run`), the light pool calls give_back: it trims
if the RSS grew by GROWTH_BYTES since the last trim. Not otherwise beside a request's job, while the
heap's free memory between its live chunks stays within settings.kept_freed_bytes: a trim beside a
build takes the arena's lock and hands back pages the build is about to reuse.

Past that, whatever runs (`watch`: a thread of the process's own, every WATCH_S): the trim
threshold (xt_core.memory.limit_freed_memory) bounds only the free memory at the heap's top, and a
class's mix left 0.5-0.9 GB freed *between* live chunks, resident, beside the budget (glibc's
mallinfo2 and the RSS sampled at the peaks: benchmarks/memory_mix.py --sample) while new arrays
took fresh pages; malloc_trim hands those pages back too, and keeps the top's kept_freed_bytes.
mallinfo2 still counts free memory already handed back (its chunks stay free): after a trim, the
RSS growth is what tells that more was freed since.
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


def give_back(top: int = 0) -> bool:
    """Trims the malloc arenas if the RSS grew enough since the last trim (keeping `top` bytes free at
    the heap's top): whether it did."""
    trim = _malloc_trim()
    if trim is None:
        return False
    with _lock:  # one trim at a time; a job ending meanwhile finds the RSS already down
        if rss_bytes() - _after_last_trim[0] < GROWTH_BYTES:
            return False
        trim(top)
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


def heap_bytes() -> tuple[int, int, int] | None:
    """glibc's mallinfo2: bytes mapped apart from the heap (hblkhd), in use in it (uordblks) and free
    between its live chunks (fordblks less its top, keepcost: resident or already handed back); None
    where it cannot be read."""
    mallinfo2 = _mallinfo2()
    if mallinfo2 is None:
        return None
    info = mallinfo2()
    return int(info.hblkhd), int(info.uordblks), int(info.fordblks - info.keepcost)


def heap_free_bytes() -> int:
    """Bytes free between the malloc heap's live chunks (heap_bytes); 0 where it cannot be read."""
    heap = heap_bytes()
    return 0 if heap is None else heap[2]


def give_back_past(most: int) -> bool:
    """give_back, keeping `most` at the top, if more than `most` bytes are free between the heap's
    live chunks: whether it trimmed."""
    return heap_free_bytes() > most and give_back(most)


def watch(most: int) -> None:
    """From now on, every WATCH_S, the heap's free bytes past `most` go back to the kernel
    (give_back_past), whatever runs; one thread per process (none without glibc's mallinfo2), the
    latest `most` in force."""
    if _mallinfo2() is None or _malloc_trim() is None:
        return
    with _lock:
        started, _watched[0] = _watched[0] > 0, max(1, most)
    if not started:
        _start_watching()


def _start_watching() -> None:
    threading.Thread(target=_watch, name="xt-freed-watch", daemon=True).start()


def _watch() -> None:
    while True:
        time.sleep(WATCH_S)
        try:
            give_back_past(_watched[0])
        except Exception:  # noqa: BLE001 - a failed read or trim is tried again next time, never ends the watch
            continue
