"""The trace-size estimate the server checks before building a trace: an upper bound of
Trace.nbytes(), and a close one (so the limit refuses only what is really too big)."""

from __future__ import annotations

import numpy as np
import pytest

import xt_core
from xt_core.names import estimate_trace_bytes

CASES = [  # (config, n_seq, T, dtype)
    (xt_core.PRESETS["tiny"], 1, 16, np.float32),
    (xt_core.PRESETS["tiny"], 2, 32, np.float64),
    (
        xt_core.Config(vocab_size=40, n_layer=3, n_head=6, n_kv_head=2, n_embd=48, ffn_hidden=100, seq_len=24),
        3,
        24,
        np.float32,
    ),
    (
        xt_core.Config(
            vocab_size=300, n_layer=1, n_head=2, n_kv_head=1, n_embd=32, ffn_hidden=40, seq_len=64, tie_embeddings=False
        ),
        1,
        64,
        np.float32,
    ),
    (xt_core.PRESETS["class"], 1, 128, np.float32),
    # tied, one position, a large vocabulary: the embedding's contributions dominate
    (
        xt_core.Config(vocab_size=2048, n_layer=1, n_head=2, n_kv_head=2, n_embd=32, ffn_hidden=40, seq_len=4),
        1,
        1,
        np.float32,
    ),
    (
        xt_core.Config(vocab_size=2048, n_layer=1, n_head=2, n_kv_head=2, n_embd=32, ffn_hidden=40, seq_len=4),
        1,
        1,
        np.float64,
    ),
    # Qwen's parts: q/k/v biases and QK-norm, their rows recorded, heads wider than C / H
    (
        xt_core.Config(
            vocab_size=60,
            n_layer=2,
            n_head=4,
            n_kv_head=2,
            n_embd=32,
            head_dim=24,
            ffn_hidden=40,
            qkv_bias=True,
            qk_norm=True,
        ),
        2,
        16,
        np.float32,
    ),  # fmt: skip
]


@pytest.mark.parametrize("shared", [False, True], ids=["own weights", "a checkpoint's weights"])
@pytest.mark.parametrize(("cfg", "n_seq", "T", "dtype"), CASES)
def test_the_estimate_bounds_the_trace_bytes_closely(cfg, n_seq, T, dtype, shared):
    params = xt_core.init_params(cfg, seed=0, dtype=dtype)
    for value in params.values():
        value.flags.writeable = not shared  # a loaded checkpoint's weights are read-only, borrowed
    tokens = np.random.default_rng(0).integers(0, cfg.vocab_size, (n_seq, T))
    actual = xt_core.forward_backward(cfg, params, tokens, tokens).nbytes()
    estimate = estimate_trace_bytes(cfg, n_seq, T, np.dtype(dtype).itemsize, shared_params=shared)
    assert actual <= estimate <= 1.3 * actual, (actual, estimate)


@pytest.mark.parametrize(("cfg", "n_seq", "T", "dtype"), CASES)
def test_the_build_estimate_bounds_what_a_build_holds_at_its_peak(cfg, n_seq, T, dtype):
    import tracemalloc

    from xt_core.names import estimate_build_bytes

    params = xt_core.init_params(cfg, seed=0, dtype=dtype)
    tokens = np.random.default_rng(0).integers(0, cfg.vocab_size, (n_seq, T))
    tracemalloc.start()
    try:
        xt_core.forward_backward(cfg, params, tokens, tokens)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= estimate_build_bytes(cfg, n_seq, T, np.dtype(dtype).itemsize)
