"""Safe JSON, numbers tables and the step cache."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from app.encoding import array_to_list, json_safe
from app.figures.serialize import table
from app.traces.cache import LRU


def test_json_safe_turns_non_finite_into_null_and_numpy_into_python():
    value = {
        "a": float("nan"),
        "b": np.float32(np.inf),
        "c": np.array([1.5, -np.inf]),
        "d": (np.int64(3), np.bool_(True)),
        "e": np.array([[1, 2]]),
    }
    safe = json_safe(value)
    assert safe == {"a": None, "b": None, "c": [1.5, None], "d": [3, True], "e": [[1, 2]]}
    json.dumps(safe, allow_nan=False)


def test_array_to_list_rounds_to_significant_digits():
    assert array_to_list(np.array([[0.123456789, 12345.6789]]), digits=4) == [[0.1235, 12350.0]]
    assert array_to_list(np.array(2.5)) == 2.5


def test_table_truncates_and_says_so():
    matrix = np.arange(12.0).reshape(4, 3)
    tab, note = table(matrix, ["a", "b", "c", "d"], ["x", "y", "z"], max_rows=2, max_cols=2)
    assert tab == {"columns": ["x", "y"], "index": ["a", "b"], "rows": [[0.0, 1.0], [3.0, 4.0]]}
    assert "2 of 4 rows" in note and "2 of 3 columns" in note
    tab, note = table(np.array([1.0, np.nan]), None, None, 10, 10)
    assert tab["rows"] == [[1.0], [None]] and tab["columns"] == ["value"] and note is None


def test_lru_is_bounded_by_entries_and_bytes():
    cache = LRU(max_entries=2)
    for key in "abc":
        cache.put(key, key)
    assert len(cache) == 2 and cache.get("a") is None and cache.get("c") == "c"
    sized = LRU(max_entries=100, max_bytes=10, sizeof=len)
    sized.put("x", b"12345")
    sized.put("y", b"123456")
    assert sized.get("x") is None and sized.nbytes == 6
    sized.put("huge", b"x" * 11)  # larger than the whole cache: not stored
    assert sized.get("huge") is None and sized.get("y") == b"123456"
    assert sized.get_or_compute("z", lambda: b"1") == b"1" and sized.get("z") == b"1"


def test_lru_computes_a_key_once_while_others_wait():
    """A second thread asking for a key being computed gets that result, not a second
    computation (the first step's check started after the POST, then asked for by the view);
    a computation that raises leaves the key free to be computed again."""
    cache: LRU[str] = LRU(max_entries=4)
    started, release, calls = threading.Event(), threading.Event(), []

    def compute(value: str) -> str:
        calls.append(value)
        started.set()
        release.wait(10)
        return value

    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(cache.get_or_compute, "a", lambda: compute("a"))
        started.wait(10)  # the first is computing: the second waits for it (or, if late, finds it cached)
        second = pool.submit(cache.get_or_compute, "a", lambda: compute("again"))
        release.set()
        assert first.result(10) == second.result(10) == "a"
    assert calls == ["a"]

    def boom() -> str:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        cache.get_or_compute("b", boom)
    assert cache.get_or_compute("b", lambda: "ok") == "ok"
