"""Freed memory given back to the kernel (glibc's malloc_trim), so that RSS follows what the server
holds: xt_core.memory keeps freed memory for the next step (a trim threshold up to 1.25x the largest
step so far, per malloc arena: one for each worker thread), which is fast for one notebook but let
a class's mix sit ~0.5-1 GB over the stated bound, and stay there idle (issue 35, finding 7).

Once no job of a worker pool is pending (app.services.Services.run), and every second while a check
job runs with none pending (its steps run outside `run`), the light pool calls give_back: it trims
if the RSS grew by GROWTH_BYTES since the last trim. Never while a request's job runs: a trim
beside a build takes the arenas' locks and hands back pages the build is about to reuse.
Nothing happens outside glibc or Linux.
"""

from __future__ import annotations

import ctypes
import functools
import os
import threading

GROWTH_BYTES = 16 << 20  # RSS grown past the last trim's by this much: worth a trim

_lock = threading.Lock()
_after_last_trim = [0]  # RSS right after the last trim


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
