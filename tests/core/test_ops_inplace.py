"""The ops compute in place where they can (fewer passes, fewer buffers); these tests pin that
they never write into what they read, and that RoPE's complex-multiply form takes any layout."""

import numpy as np
import pytest

import xt_core
from xt_core import memory
from xt_core.memory import keep_freed_memory
from xt_core.ops import OPS
from xt_core.recompute import arrays_in
from xt_core.tape import run_backward, run_forward

from .test_ops import CASES, randn


def _frozen(value):
    """value with writing disabled, so an in-place write into it raises."""
    if isinstance(value, np.ndarray):
        value = value.copy()
        value.flags.writeable = False
    return value


@pytest.mark.parametrize("kind", sorted(CASES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward_and_backward_leave_their_inputs_alone(kind, dtype):
    """...and backward leaves its cache alone: a build hands its forward's caches to the cache of
    recomputed segments after its backward read them (xt_core.recompute.built_forwards)."""
    inputs, attrs = CASES[kind]
    inputs = [_frozen(x.astype(dtype) if x.dtype.kind == "f" else x) for x in inputs]
    out, cache = OPS[kind].forward(*inputs, **attrs)
    before = [a.copy() for a in arrays_in(cache)]
    dout = _frozen(np.asarray(randn(*np.shape(out)), dtype=dtype))
    OPS[kind].backward(dout, cache)  # raises "assignment destination is read-only" on a write
    after = list(arrays_in(cache))
    assert len(after) == len(before) and all(
        np.array_equal(a, b, equal_nan=True) for a, b in zip(after, before, strict=True)
    )


def test_rope_takes_strided_input():
    x = randn(2, 5, 32)
    strided = np.asfortranarray(x)
    for n_heads in (1, 4):
        np.testing.assert_array_equal(
            OPS["rope"].forward(strided, n_heads=n_heads, theta=10.0)[0],
            OPS["rope"].forward(x, n_heads=n_heads, theta=10.0)[0],
        )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rope_backward_undoes_forward(dtype):
    x = randn(2, 5, 16).astype(dtype)
    y, cache = OPS["rope"].forward(x, n_heads=2, theta=10.0)
    assert y.dtype == dtype
    (back,) = OPS["rope"].backward(y, cache)
    np.testing.assert_allclose(back, x, rtol=0, atol=1e-6 if dtype == np.float32 else 1e-14)


def test_recorded_step_writes_no_recorded_tensor_twice():
    """Backward computes in place only in its own buffers: the forward values, read-only
    after the forward, survive the backward unchanged."""
    cfg = xt_core.Config()
    params = xt_core.init_params(cfg, seed=0)
    ids = np.random.default_rng(0).integers(0, cfg.vocab_size, (2, 9))
    trace = xt_core.forward_backward(cfg, params, ids[:, :-1], ids[:, 1:])
    nodes = trace.nodes
    env = {name: _frozen(np.asarray(v)) for name, v in trace.values.items() if name not in trace.tensor_names()}
    caches = run_forward(nodes, env)
    for name in trace.tensor_names():
        if isinstance(env[name], np.ndarray):
            env[name].flags.writeable = False
    grads, _ = run_backward(nodes, caches, np.ones((), dtype=trace.dtype))
    for name in trace.tensor_names():
        np.testing.assert_array_equal(env[name], trace[name], err_msg=name)
        np.testing.assert_array_equal(grads[name], trace.grad(name), err_msg=name)


def test_keep_freed_memory_only_grows(monkeypatch):
    monkeypatch.setattr(memory, "_freed_bytes_most", [2**31 - 1])  # a notebook's process: no server's cap
    kept = keep_freed_memory()
    assert isinstance(kept, int) and kept >= 0
    assert keep_freed_memory(0) == kept  # never lowered
    if kept:  # glibc: a larger step raises it, up to what mallopt's int holds
        assert keep_freed_memory(kept + (1 << 20)) > kept
        assert keep_freed_memory(1 << 40) == 2**31 - 1
