"""Large arrays reuse the memory of dropped ones (xt_core.memory.reusable_empty) and the tape adds
a tied embedding's two (V, C) contributions by rows: neither may change a number of a live trace."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import xt_core
from xt_core import memory, tape
from xt_core.ops import OPS

LARGE = (memory.LARGE_ARRAY_BYTES // 4 // 1024, 1024)  # float32 rows x columns: just over the threshold


@pytest.fixture
def empty_pool(monkeypatch):
    monkeypatch.setattr(memory, "_large_buffers", [])
    monkeypatch.setattr(memory, "_pool_room", [None])  # a notebook's: no server's budget
    return memory._large_buffers


def test_small_arrays_are_plain(empty_pool):
    a = memory.reusable_empty((4, 5), np.float32)
    assert a.shape == (4, 5) and a.dtype == np.float32 and not empty_pool


def test_a_buffer_is_reused_only_once_no_view_of_it_lives(empty_pool, monkeypatch):
    monkeypatch.setattr(memory, "MAX_LARGE_BUFFERS", 3)
    first = memory.reusable_empty(LARGE, np.float32)
    assert first.shape == LARGE and first.dtype == np.float32
    second = memory.reusable_empty(LARGE, np.float32)
    assert not np.shares_memory(first, second)  # first is alive
    row = first[3]
    del first
    third = memory.reusable_empty(LARGE, np.float32)
    assert not np.shares_memory(row, third)  # a slice of it still is
    del row
    fourth = memory.reusable_empty(LARGE, np.float32)
    assert len(empty_pool) == 3 and not np.shares_memory(fourth, second) and not np.shares_memory(fourth, third)
    assert np.shares_memory(fourth, empty_pool[0])  # the first one's memory, free again


def test_other_shapes_and_dtypes_get_their_own_buffers(empty_pool, monkeypatch):
    monkeypatch.setattr(memory, "MAX_LARGE_BUFFERS", 2)
    a = memory.reusable_empty(LARGE, np.float32)
    b = memory.reusable_empty(LARGE, np.float64)
    assert b.dtype == np.float64 and not np.shares_memory(a, b)
    c = memory.reusable_empty(LARGE, np.float32)  # the pool is full and busy: a plain array
    assert len(empty_pool) == 2 and not any(np.shares_memory(c, buffer) for buffer in empty_pool)
    del b
    d = memory.reusable_empty((LARGE[0] + 1, LARGE[1]), np.float32)  # replaces the free float64 one
    assert len(empty_pool) == 2 and np.shares_memory(d, empty_pool[1]) and d.shape == (LARGE[0] + 1, LARGE[1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tied_embedding_sums_by_rows_exactly_and_live_traces_keep_their_numbers(empty_pool, monkeypatch, dtype):
    """With every array "large", a tied toy model's table gradient goes through the reused buffers
    and the by-rows sum: it equals the plain sum of its two recorded contributions, and a second
    step (other tokens, the first trace alive) leaves the first trace's gradients as they were."""
    monkeypatch.setattr(tape, "LARGE_ARRAY_BYTES", 0)
    monkeypatch.setattr(memory, "LARGE_ARRAY_BYTES", 0)
    cfg = xt_core.PRESETS["tiny"]
    assert cfg.tie_embeddings
    params = xt_core.init_params(cfg, seed=0, dtype=dtype)
    ids = np.random.default_rng(0).integers(0, cfg.vocab_size, (2, 9))
    ids[0, :4] = 5  # a token used several times
    first = xt_core.forward_backward(cfg, params, ids[:, :-1], ids[:, 1:])
    parts = [r.contributions["tok_embeddings"] for r in first.records if "tok_embeddings" in r.contributions]
    assert len(parts) == 2
    np.testing.assert_array_equal(first.grads["tok_embeddings"], parts[0] + parts[1])
    kept = {name: g.copy() for name, g in first.grads.items()}
    xt_core.forward_backward(cfg, params, ids[::-1, 1:], ids[::-1, :-1])
    for name, g in first.grads.items():
        np.testing.assert_array_equal(g, kept[name], err_msg=name)


def test_only_free_buffers_count_as_kept_and_the_largest_go_first(empty_pool, monkeypatch):
    """kept_bytes: the free buffers' bytes, memory no trace counts (app.traces.store counts it and
    sheds it first); trim_kept drops free ones, largest first, never one a live array still uses."""
    monkeypatch.setattr(memory, "MAX_LARGE_BUFFERS", 3)
    small, large, busy = (memory.reusable_empty((LARGE[0] * k, LARGE[1]), np.float32) for k in (1, 2, 3))
    sizes = {k: LARGE[0] * k * LARGE[1] * 4 for k in (1, 2, 3)}
    assert memory.kept_bytes() == 0  # all three in use
    del small, large
    assert memory.kept_bytes() == sizes[1] + sizes[2]
    assert memory.trim_kept(sizes[1]) == sizes[2]  # the larger free one went
    assert memory.kept_bytes() == sizes[1] and len(empty_pool) == 2
    assert memory.trim_kept(0) == sizes[1] and memory.kept_bytes() == 0
    assert len(empty_pool) == 1 and np.shares_memory(busy, empty_pool[0])  # in use: kept


def test_one_malloc_arena_is_shared_by_every_thread_started_after():
    """share_arenas before threads start: six threads allocating at once share one arena (glibc's
    malloc_info lists each arena as a heap); without it they had seven (one each, and the main one)."""
    probe = textwrap.dedent(
        """
        import ctypes, threading
        import numpy as np
        from xt_core import memory
        libc = ctypes.CDLL(None)
        if not hasattr(libc, "malloc_info") or not hasattr(libc, "open_memstream"):
            raise SystemExit(print("no glibc"))
        memory.share_arenas()
        barrier = threading.Barrier(6)

        def allocate():
            barrier.wait()
            kept = [np.ones(20_000) for _ in range(200)]
            barrier.wait()

        threads = [threading.Thread(target=allocate) for _ in range(6)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        text, size = ctypes.c_char_p(), ctypes.c_size_t()
        libc.open_memstream.restype = ctypes.c_void_p
        stream = ctypes.c_void_p(libc.open_memstream(ctypes.byref(text), ctypes.byref(size)))
        libc.malloc_info(0, stream)
        libc.fclose(stream)
        print(text.value.decode().count("<heap nr="))
        """
    )
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    if ran.stdout.strip() == "no glibc":
        pytest.skip("malloc arenas are glibc's")
    assert ran.stdout.strip() == "1"


def test_a_step_keeping_its_weights_gradients_lets_the_heap_keep_their_bytes(monkeypatch):
    """A training step holds a gradient per parameter until it ends: the heap keeps that much freed
    too, so the next step's gradients reuse it instead of faulting in fresh pages."""
    asked = []
    monkeypatch.setattr(xt_core.model, "keep_freed_memory", lambda step_bytes=0: asked.append(step_bytes))
    cfg = xt_core.Config()
    params = xt_core.init_params(cfg, seed=0)
    ids = np.random.default_rng(0).integers(0, cfg.vocab_size, (1, 9))
    xt_core.forward_backward(cfg, params, ids[:, :-1], ids[:, 1:])
    xt_core.forward_backward(cfg, params, ids[:, :-1], ids[:, 1:], keep_param_grads=True)
    build, step = asked[1], asked[3]  # each step asks once before its forward (0), once after
    assert step - build == sum(p.nbytes for p in params.values())


def test_a_pool_with_room_keeps_a_free_buffer_of_another_shape(empty_pool, monkeypatch):
    """A step's (V, C) gradients and its (B, T, V) probabilities take turns: neither evicts the other."""
    monkeypatch.setattr(memory, "MAX_LARGE_BUFFERS", 3)
    first = memory.reusable_empty(LARGE, np.float32)
    del first
    other = memory.reusable_empty((LARGE[0] + 1, LARGE[1]), np.float32)
    assert len(empty_pool) == 2 and not np.shares_memory(other, empty_pool[0])
    again = memory.reusable_empty(LARGE, np.float32)
    assert np.shares_memory(again, empty_pool[0])


def test_a_vocabularys_logits_probabilities_and_their_gradients_reuse_buffers(empty_pool, monkeypatch):
    """Each (B, T, V) array over the threshold comes from the pool, with the bits of the plain formula."""
    monkeypatch.setattr(memory, "MAX_LARGE_BUFFERS", 8)
    rng = np.random.default_rng(0)
    B, T, V, C = 1, LARGE[0] // 8, LARGE[1] * 8, 4  # (B, T, V) float32: just over the threshold
    x, weight = rng.standard_normal((B, T, C), dtype=np.float32), rng.standard_normal((V, C), dtype=np.float32)
    logits, _ = OPS["unembed"].forward(x, weight)
    probs, cache = OPS["softmax"].forward(logits)
    targets = rng.integers(0, V, (B, T))
    _, loss_cache = OPS["token_loss"].forward(probs, targets)
    (dprobs, _) = OPS["token_loss"].backward(np.full((B, T), 1 / T, dtype=np.float32), loss_cache)
    (dlogits,) = OPS["softmax"].backward(dprobs, cache)
    for made in (logits, probs, dprobs, dlogits):
        assert any(np.shares_memory(made, buffer) for buffer in empty_pool)
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    np.testing.assert_array_equal(probs, e / e.sum(axis=-1, keepdims=True))
    plain = np.zeros_like(dprobs)
    np.put_along_axis(plain, targets[..., None], (-np.float32(1 / T) / loss_cache[0])[..., None], axis=-1)
    np.testing.assert_array_equal(dprobs, plain)
    np.testing.assert_array_equal(dlogits, probs * (plain - np.sum(probs * plain, axis=-1, keepdims=True)))


def test_a_servers_cap_on_freed_memory_lowers_the_threshold_and_holds_it(monkeypatch):
    """limit_freed_memory (a server's kept_freed_bytes) lowers a threshold a large step set, and no
    later step raises it past the cap (glibc's mallopt, recorded here instead of set)."""
    calls = []
    monkeypatch.setattr(memory, "_mallopt", lambda: lambda param, value: calls.append((param, value)) or 1)
    monkeypatch.setattr(memory, "_freed_bytes_kept", [0])
    monkeypatch.setattr(memory, "_freed_bytes_most", [2**31 - 1])
    assert memory.keep_freed_memory(1 << 30) == (1 << 30) + (1 << 28)  # a notebook: 1.25x the step
    assert memory.limit_freed_memory(256 << 20) == 256 << 20
    assert calls[-1] == (memory.M_TRIM_THRESHOLD, 256 << 20)
    assert memory.keep_freed_memory(2 << 30) == 256 << 20  # past the cap: unchanged
    assert calls[-1] == (memory.M_TRIM_THRESHOLD, 256 << 20)


def test_a_new_buffer_joins_the_pool_only_within_the_room_it_is_given(empty_pool):
    """A server's store gives its budget's free room (app.traces.store): past it, a large array is a
    plain one, its pages back to the kernel when it goes, and no kept buffer grows uncounted."""
    room = [0]
    memory.pool_within(lambda: room[0])
    first = memory.reusable_empty(LARGE, np.float32)
    assert empty_pool == [] and first.shape == LARGE
    room[0] = first.nbytes
    second = memory.reusable_empty(LARGE, np.float32)
    assert len(empty_pool) == 1 and np.shares_memory(second, empty_pool[0])
