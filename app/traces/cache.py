"""A small thread-safe LRU bounded by entry count and by bytes (step views are computed in
worker threads and read from any request)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from typing import Generic, TypeVar

V = TypeVar("V")


class LRU(Generic[V]):
    def __init__(self, max_entries: int, max_bytes: int | None = None, sizeof: Callable[[V], int] = lambda v: 0):
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.sizeof = sizeof
        self._items: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self._running: dict[Hashable, Future] = {}  # keys being computed (get_or_compute)

    def __len__(self) -> int:
        return len(self._items)

    @property
    def nbytes(self) -> int:
        return self._bytes

    def get(self, key: Hashable) -> V | None:
        with self._lock:
            hit = self._items.get(key)
            if hit is None:
                return None
            self._items.move_to_end(key)
            return hit[0]

    def put(self, key: Hashable, value: V) -> None:
        size = self.sizeof(value)
        if self.max_bytes is not None and size > self.max_bytes:
            return  # larger than the whole cache: not worth evicting everything for
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            self._items[key] = (value, size)
            self._bytes += size
            while len(self._items) > self.max_entries or (self.max_bytes is not None and self._bytes > self.max_bytes):
                _, (_, evicted) = self._items.popitem(last=False)
                self._bytes -= evicted

    def pop(self, key: Hashable) -> V | None:
        with self._lock:
            hit = self._items.pop(key, None)
            if hit is None:
                return None
            self._bytes -= hit[1]
            return hit[0]

    def get_or_compute(self, key: Hashable, compute: Callable[[], V]) -> V:
        """Cached value or compute(), computed once: a thread asking for a key another thread
        is computing waits for that result (a step's check started in the background after
        the POST, then asked for by the first view) instead of computing it again."""
        value = self.get(key)
        if value is not None:
            return value
        with self._lock:
            running = self._running.get(key)
            owner = running is None
            if owner:
                running = self._running[key] = Future()
        if not owner:
            return running.result()  # the computing thread's exception, if it raised
        try:
            value = compute()
            self.put(key, value)
            running.set_result(value)
            return value
        except BaseException as exc:
            running.set_exception(exc)
            raise
        finally:
            with self._lock:
                self._running.pop(key, None)
