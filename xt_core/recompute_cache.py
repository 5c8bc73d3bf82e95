"""The process's one bounded cache of recomputed segments (RECOMPUTED), shared by every trace and
float64 twin (xt_core.recompute): an LRU by bytes whose budget the trace store counts
(app.traces.store). Its bound is a floor (max_bytes) and, where an owner counts the process's
memory (a server's store), the room that owner says is free: it grows into it and gives it back."""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable


class RecomputeCache:
    """Recomputed segments by (trace, kind, segment) in an LRU bounded by bytes (max_bytes), the most
    recent always kept (one segment may be larger than the bound: it is still served), a segment's
    forward alone evicted after the other entries (_shrink). Concurrent requests for one entry
    compute it once.

    `room`: the bytes an owner's budget leaves free for these entries now (a server's store: its
    budget less every trace alive, the reservations and the kept buffers, app.traces.store); the
    bound is then the larger of max_bytes and that, so reading a step in order keeps every forward
    until its gradients are read while nothing else wants the memory. The owner takes the room back
    (trim) before it counts new work. Without one (a notebook, the CLI) max_bytes alone. Called
    with this cache's lock held: it must take no lock that is held while calling into this cache."""

    def __init__(self, max_bytes: int, room: Callable[[], int] | None = None):
        self.max_bytes = max_bytes  # the floor: held whatever the owner's room
        self._room = room
        self._entries: OrderedDict[tuple, tuple[object, int]] = OrderedDict()
        self._bytes = 0
        # reentrant: a trace's finalizer drops its entries (Trace, Float64Step), and it may run
        # while this thread holds the lock (an entry freed, or a garbage collection, inside drop)
        self._lock = threading.RLock()
        self._computing: dict[tuple, threading.Lock] = {}
        self.hits = self.misses = 0

    @property
    def nbytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def bound(self) -> int:
        """The bytes the entries may hold now: max_bytes, or the owner's free room if larger."""
        return self.max_bytes if self._room is None else max(self.max_bytes, self._room())

    def get(self, key: tuple, compute: Callable[[], tuple[object, int]]):
        """The entry for key, or compute() -> (entry, its bytes), cached."""
        hit = self._lookup(key)
        if hit is not None:
            return hit
        with self._lock:
            lock = self._computing.setdefault(key, threading.Lock())
        try:
            with lock:
                hit = self._lookup(key)
                if hit is not None:
                    return hit
                entry, size = compute()
                with self._lock:
                    self.misses += 1
                    self._entries[key] = (entry, size)
                    self._bytes += size
                    self._shrink()
                return entry
        finally:
            with self._lock:
                if self._computing.get(key) is lock:
                    del self._computing[key]

    def peek(self, key: tuple):
        """The entry for key if cached (counted as a hit, made the most recent), else None."""
        return self._lookup(key)

    def take(self, key: tuple):
        """Removes the entry for key and returns it, or None: an entry that another one is made
        from and then held by (a segment's forward, by its whole replay), so counted once."""
        with self._lock:
            hit = self._entries.pop(key, None)
            if hit is None:
                return None
            self._bytes -= hit[1]
            return hit[0]

    def grew(self, key: tuple, size: int) -> None:
        """An entry made `size` bytes more after it was cached (a replay's parameter gradient made
        when read: recompute.DeferredParams): counted, and the bound kept (the entry, just read, is
        the newest). Nothing if it was evicted meanwhile (its reader holds it until done)."""
        with self._lock:
            hit = self._entries.get(key)
            if hit is None or size <= 0:
                return
            self._entries[key] = (hit[0], hit[1] + size)
            self._bytes += size
            self._shrink()

    def _lookup(self, key: tuple):
        with self._lock:
            hit = self._entries.get(key)
            if hit is None:
                return None
            self.hits += 1
            self._entries.move_to_end(key)
            return hit[0]

    def _shrink(self) -> None:  # with self._lock held
        """Oldest first, the newest entry kept; a segment's forward alone (kind "forward") only once
        no other entry but the newest is left: it waits for its backward (a gradient read turns it
        into the whole replay), while a whole replay has served its reads (reading a step in order,
        the values down the tape then the gradients back up, reads none of them again)."""
        bound = self.bound()
        if self._bytes <= bound:
            return
        newest = next(reversed(self._entries))
        for key in [k for k in self._entries if k[1] != "forward" and k != newest]:
            if self._bytes <= bound:
                return
            self._bytes -= self._entries.pop(key)[1]
        while self._bytes > bound and len(self._entries) > 1:
            _, (_, size) = self._entries.popitem(last=False)
            self._bytes -= size

    def trim(self, room: int) -> None:
        """Evicts the oldest entries until they hold at most `room` bytes (a build needs the rest)."""
        with self._lock:
            while self._bytes > max(0, room) and self._entries:
                _, (_, size) = self._entries.popitem(last=False)
                self._bytes -= size

    def resize(self, max_bytes: int, room: Callable[[], int] | None = None) -> None:
        """A new floor and owner's room (None: the floor alone, as a process without a server has)."""
        with self._lock:
            self.max_bytes, self._room = max_bytes, room
            self._shrink()

    def drop(self, owner: int) -> None:
        """Forgets every entry of one trace (it was collected)."""
        with self._lock:
            gone = [self._entries.pop(k) for k in [k for k in self._entries if k[0] == owner]]
            self._bytes -= sum(size for _, size in gone)
        del gone  # freed with the lock released: a finalizer their freeing runs may drop another trace's

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0


RECOMPUTE_BYTES = 256 << 20  # the default bound; the server sets its own (settings.recompute_bytes)
RECOMPUTED = RecomputeCache(RECOMPUTE_BYTES)
_owners = itertools.count()


def new_owner() -> int:
    """A key no other trace of this process has had (ids of collected objects are reused)."""
    return next(_owners)
