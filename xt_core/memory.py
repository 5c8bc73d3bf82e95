"""The allocator setting that keeps a recorded step from paying for fresh pages.

A step records every tensor (class: ~60 MB, large: ~750 MB). With glibc's defaults, arrays
over its mmap threshold are mmapped and the heap's free top is trimmed, so a dropped trace
goes back to the kernel and the next step first-touches fresh pages: on these VMs ~1 ms per
MB, half of the class step (126 ms -> 70 ms without them). `forward_backward` calls
`keep_freed_memory` before and after each step; it is process-wide (PyTorch in the same
process benefits too, which is why benchmarks/step_vs_torch.py applies it to both sides)
and does nothing outside glibc.
"""

from __future__ import annotations

import ctypes
import functools
import threading


@functools.cache
def _mallopt():
    """glibc's mallopt(param, value) -> 1 on success; None with another libc."""
    try:
        return ctypes.CDLL(None).mallopt  # the process's own libc
    except (OSError, AttributeError, TypeError):
        return None


_lock = threading.Lock()
_freed_bytes_kept = [0]  # the trim threshold set so far: only ever raised


def keep_freed_memory(step_bytes: int = 0) -> int:
    """Lets this process reuse the memory of dropped traces instead of faulting in fresh pages;
    returns the bytes of freed memory the allocator may now keep (0: unchanged, no glibc).

    A step records every tensor (class: 60 MB, large: 750 MB). With glibc's defaults, arrays over
    its mmap threshold are mmapped and the heap's free top is trimmed, so a dropped trace goes
    back to the kernel and the next step first-touches fresh pages: on these VMs ~1 ms per MB,
    half of the class step (50 MB of page faults per step; 126 ms -> 70 ms without them). Arrays
    up to 32 MB now come from the heap, and the heap keeps as much freed memory as the largest
    step so far held (at least 256 MB): RSS stays near its high-water mark instead of shrinking."""
    mallopt = _mallopt()
    want = min(max(256 << 20, step_bytes + step_bytes // 4), 2**31 - 1)  # mallopt takes an int
    with _lock:  # worker threads build steps at once: a smaller value must never land last
        if mallopt is None or want <= _freed_bytes_kept[0]:
            return _freed_bytes_kept[0]
        M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's malloc.h
        if mallopt(M_MMAP_THRESHOLD, 32 << 20) and mallopt(M_TRIM_THRESHOLD, want):
            _freed_bytes_kept[0] = want
        return _freed_bytes_kept[0]
