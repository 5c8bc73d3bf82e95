"""Freed memory given back to the kernel (app.traces.freed): once the RSS grew, when idle; and, past
kept_freed_bytes between the heap's live chunks, whatever runs. Fake clocks of RSS and heap."""

from __future__ import annotations

import pytest

from app.traces import freed

MB = 1 << 20


@pytest.fixture(autouse=True)
def no_watch(monkeypatch):
    """The process's own watch (started by any app made before) trims nothing during these tests."""
    monkeypatch.setattr(freed, "_watched", [1 << 62])


def test_freed_memory_is_given_back_once_grown_enough(monkeypatch):
    trims, rss = [], [0]
    monkeypatch.setattr(freed, "_malloc_trim", lambda: trims.append)
    monkeypatch.setattr(freed, "rss_bytes", lambda: rss[0])
    monkeypatch.setattr(freed, "_after_last_trim", [1000 * MB])
    rss[0] = 1010 * MB  # grown 10 MB: not worth a trim
    assert not freed.give_back() and trims == []
    rss[0] = 1100 * MB
    assert freed.give_back() and trims == [0]
    assert not freed.give_back() and trims == [0]  # nothing grew since


def test_freed_memory_past_the_kept_bytes_is_given_back_whatever_runs(monkeypatch):
    """The trim threshold bounds the heap's free top only: free memory between live chunks past
    kept_freed_bytes goes back too (a class's mix kept 0.5-0.9 GB of it, resident)."""
    trims, rss, free = [], [1100 * MB], [100 * MB]
    monkeypatch.setattr(freed, "_malloc_trim", lambda: trims.append)
    monkeypatch.setattr(freed, "rss_bytes", lambda: rss[0])
    monkeypatch.setattr(freed, "heap_free_bytes", lambda: free[0])
    monkeypatch.setattr(freed, "_after_last_trim", [1000 * MB])
    assert not freed.give_back_past(256 * MB) and trims == []  # within what the heap may keep
    free[0] = 300 * MB
    assert freed.give_back_past(256 * MB) and trims == [256 * MB]  # the top's kept bytes kept
    assert not freed.give_back_past(256 * MB) and trims == [256 * MB]  # the RSS has not grown since


def test_the_server_watches_the_heaps_free_memory_from_one_thread(monkeypatch):
    started = []
    monkeypatch.setattr(freed, "_watched", [0])
    monkeypatch.setattr(freed, "_start_watching", lambda: started.append("watch"))
    freed.watch(256 * MB)
    freed.watch(128 * MB)  # a second app in the process: the same thread, the latest bound
    assert started == ["watch"] and freed._watched == [128 * MB]
    assert freed.heap_free_bytes() >= 0  # glibc's mallinfo2 read: free bytes less the heap's top
