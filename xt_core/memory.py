"""The allocator setting, and the reused large buffers, that keep a recorded step from paying
for fresh pages.

A step records every tensor (class: ~60 MB, large: ~750 MB). With glibc's defaults, arrays
over its mmap threshold are mmapped and the heap's free top is trimmed, so a dropped trace
goes back to the kernel and the next step first-touches fresh pages: about 1 ms per MB, as
long as the rest of the class step (docs/performance.md). `forward_backward` calls
`keep_freed_memory` before and after each step; it is process-wide (PyTorch in the same
process benefits too, which is why benchmarks/step_vs_torch.py applies it to both sides)
and does nothing outside glibc. Arrays too large for the heap (>= 32 MB: a big vocabulary's
(V, C) gradients) come from `reusable_empty` instead.
"""

from __future__ import annotations

import ctypes
import functools
import sys
import threading

import numpy as np


@functools.cache
def _mallopt():
    """glibc's mallopt(param, value) -> 1 on success; None with another libc."""
    try:
        return ctypes.CDLL(None).mallopt  # the process's own libc
    except (OSError, AttributeError, TypeError):
        return None


_lock = threading.Lock()
_freed_bytes_kept = [0]  # the trim threshold set so far: only ever raised, up to the cap
_freed_bytes_most = [2**31 - 1]  # the cap (limit_freed_memory; mallopt takes an int)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's malloc.h


def limit_freed_memory(most: int) -> int:
    """From now on the allocator keeps at most `most` bytes freed (a setting made higher is lowered):
    a server's budget counts what its traces and jobs hold, not freed memory the heap keeps for the
    next step. Returns the threshold now in force (0: no glibc)."""
    mallopt = _mallopt()
    with _lock:
        _freed_bytes_most[0] = min(most, 2**31 - 1)
        if mallopt is not None and _freed_bytes_kept[0] > most and mallopt(M_TRIM_THRESHOLD, most):
            _freed_bytes_kept[0] = most
        return _freed_bytes_kept[0] if mallopt is not None else 0


def keep_freed_memory(step_bytes: int = 0) -> int:
    """Lets this process reuse the memory of dropped traces instead of faulting in fresh pages;
    returns the bytes of freed memory the allocator may now keep (0: unchanged, no glibc).

    A step records every tensor (class: 60 MB, large: 750 MB). With glibc's defaults, arrays over
    its mmap threshold are mmapped and the heap's free top is trimmed, so a dropped trace goes
    back to the kernel and the next step first-touches fresh pages: about 1 ms per MB, 50 MB of
    page faults per class step, as long as the rest of that step. With these settings arrays up
    to 32 MB come from the heap, and the heap keeps as much freed memory as the largest step so
    far held (at least 256 MB): RSS stays near its high-water mark instead of shrinking."""
    mallopt = _mallopt()
    with _lock:  # worker threads build steps at once: a smaller value must never land last
        want = min(max(256 << 20, step_bytes + step_bytes // 4), _freed_bytes_most[0])
        if mallopt is None or want <= _freed_bytes_kept[0]:
            return _freed_bytes_kept[0]
        if mallopt(M_MMAP_THRESHOLD, 32 << 20) and mallopt(M_TRIM_THRESHOLD, want):
            _freed_bytes_kept[0] = want
        return _freed_bytes_kept[0]


# glibc gives a thread that finds the arena it would use locked an arena of its own (up to 8 per
# core), and every arena keeps its own freed memory (up to the trim threshold above, at its top,
# plus what lies between live chunks), reused only by the threads bound to it: a server's worker
# threads (builds, views, the small lane, a check's replays, the event loop) each held hundreds of
# MB freed, ~1.1 GB beyond the traces and the jobs the server counts at the peak of a class's mix
# (benchmarks/memory_mix.py, docs/performance.md). One arena shared by every thread keeps freed
# memory once, for whichever thread allocates next; numpy allocates with the GIL held, so the
# arena's lock is seldom contended.
MALLOC_ARENAS = 1
M_ARENA_MAX = -8  # glibc's malloc.h


def share_arenas(arenas: int = MALLOC_ARENAS) -> bool:
    """At most `arenas` malloc arenas for the whole process (glibc; elsewhere nothing): whether it
    applied. Call it before worker threads start: a thread keeps the arena it was given, but a new
    thread gets one of the first `arenas`."""
    mallopt = _mallopt()
    return bool(mallopt is not None and mallopt(M_ARENA_MAX, arenas))


# Arrays from 32 MB up (glibc's mmap threshold cannot be raised past 32 MB) are mapped afresh and
# returned to the kernel when freed, whatever keep_freed_memory set: a (V, C) gradient of SmolLM2
# (113 MB) then costs ~28,000 page faults per step, 10-40 ms depending on the machine's load.
# The few arrays of that size a step makes come from here instead: the memory of a dropped one.
LARGE_ARRAY_BYTES = 32 << 20
# held at most: one step's two (V, C) arrays (226 MB for SmolLM2) and its (B, T, V) logits,
# probabilities and their gradient (50 MB each at 256 positions)
MAX_LARGE_BUFFERS = 5
_large_buffers: list[np.ndarray] = []
_buffers_lock = threading.Lock()
_pool_room: list = [None]  # what a new kept buffer may take (pool_within); None: no bound


def pool_within(room) -> None:
    """A new large buffer joins the pool only while `room()` (a server's free room in its budget:
    app.traces.store) has its bytes; without one (a notebook, the CLI) whenever the pool has a place.
    A buffer not pooled is an array like any other, its pages back to the kernel when it goes."""
    _pool_room[0] = room


def _pooled(nbytes: int) -> bool:  # with _buffers_lock held
    room = _pool_room[0]
    return len(_large_buffers) < MAX_LARGE_BUFFERS and (room is None or room() >= nbytes)


def reusable_empty(shape: tuple[int, ...], dtype) -> np.ndarray:
    """np.empty(shape, dtype); from LARGE_ARRAY_BYTES up, the memory of an earlier array of this
    shape and dtype once nothing refers to it any more (no view of it is alive), so that no fresh
    page is faulted in. The buffers stay with the process, as keep_freed_memory's heap does; with
    the pool full, a free one of another shape makes room for a new one."""
    shape, dtype = tuple(shape), np.dtype(dtype)
    if np.prod(shape, dtype=np.int64) * dtype.itemsize < LARGE_ARRAY_BYTES:
        return np.empty(shape, dtype)
    with _buffers_lock:  # worker threads build steps at once
        free = [i for i in range(len(_large_buffers)) if _is_free(_large_buffers[i])]
        for i in free:
            if _large_buffers[i].shape == shape and _large_buffers[i].dtype == dtype:
                return _large_buffers[i].view()
        if free and len(_large_buffers) >= MAX_LARGE_BUFFERS:  # room, else the step's other shapes churn
            del _large_buffers[free[0]]
        buffer = np.empty(shape, dtype)
        if _pooled(buffer.nbytes):
            _large_buffers.append(buffer)
        return buffer.view()


def kept_bytes() -> int:
    """Bytes of the large buffers kept and free (no view of them alive): memory this process holds
    that no trace or job counts (app.traces.store counts it in its budget and sheds it first)."""
    # Read without the lock: an estimate, as the store's free room it enters is; the recompute cache
    # asks for it holding its own lock, and a collection inside _buffers_lock may finalize a trace,
    # whose finalizer takes the cache's lock (two threads, each waiting for the other's).
    total = 0
    for i in range(len(_large_buffers)):
        try:
            total += _large_buffers[i].nbytes if _is_free(_large_buffers[i]) else 0
        except IndexError:  # dropped meanwhile by another thread
            break
    return total


def trim_kept(most: int) -> int:
    """Drops free kept buffers, largest first, until those left hold at most `most` bytes (their
    pages go back to the kernel at once: they are mmapped); returns the bytes dropped. The next
    array of that size is mapped afresh (its page faults: ~10-40 ms for SmolLM2's (V, C))."""
    with _buffers_lock:
        free = sorted(_free_indices(), key=lambda i: _large_buffers[i].nbytes, reverse=True)
        kept = sum(_large_buffers[i].nbytes for i in free)
        dropped = []
        for i in free:
            if kept <= most:
                break
            kept -= _large_buffers[i].nbytes
            dropped.append(i)
        freed = sum(_large_buffers[i].nbytes for i in dropped)
        for i in sorted(dropped, reverse=True):
            del _large_buffers[i]
        return freed


def _free_indices() -> list[int]:  # with _buffers_lock held; indices, so that no name adds a reference
    return [i for i in range(len(_large_buffers)) if _is_free(_large_buffers[i])]


def _is_free(buffer: np.ndarray) -> bool:
    """Nothing but the list refers to buffer (each view of it holds it as its base): 3 references,
    the list's, this function's parameter and getrefcount's argument."""
    return sys.getrefcount(buffer) == 3
