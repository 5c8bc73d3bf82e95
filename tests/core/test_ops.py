"""Each op's backward against central finite differences of <dout, forward(x)> in float64."""

import numpy as np
import pytest

from xt_core.ops import OPS
from xt_core.ops.attention import causal_mask

rng = np.random.default_rng(1234)
B, T, C, H, K, hd, F, V = 2, 5, 8, 4, 2, 2, 6, 7


def randn(*shape):
    return rng.standard_normal(shape)


def causal_scores(h=H):
    s = randn(B, h, T, T)
    s[..., causal_mask(T)] = -np.inf
    return s


CASES = {
    "embedding": ((rng.integers(0, V, (B, T)), randn(V, C)), {}),
    "rmsnorm": ((randn(B, T, C), randn(C)), {"eps": 1e-5}),
    "linear": ((randn(B, T, C), randn(C, F)), {}),
    "unembed": ((randn(B, T, C), randn(V, C)), {}),
    "residual": ((randn(B, T, C), randn(B, T, C)), {}),
    "swiglu": ((randn(B, T, F) * 3, randn(B, T, F)), {}),
    "rope": ((randn(B, T, H * hd * 2),), {"n_heads": H, "theta": 10.0}),
    "scores": ((randn(B, T, H * hd), randn(B, T, K * hd)), {"n_head": H, "n_kv_head": K}),
    "softmax": ((causal_scores(),), {}),
    "attend": ((np.abs(randn(B, H, T, T)), randn(B, T, K * hd)), {"n_kv_head": K}),
    "merge_heads": ((randn(B, H, T, hd),), {}),
    "bias": ((randn(B, T, H * hd), randn(H * hd)), {}),
    "qk_norm": ((randn(B, T, H * 4), randn(4)), {"n_heads": H, "eps": 1e-6}),
    "token_loss": ((np.abs(randn(B, T, V)) + 0.1, rng.integers(0, V, (B, T))), {}),
    "mean": ((randn(B, T),), {}),
    # GPT-2's
    "layernorm": ((randn(B, T, C) + 2, randn(C), randn(C)), {"eps": 1e-5}),
    "positions": ((randn(B, T, C), randn(T + 3, C)), {}),  # a table longer than the batch: rows past T get 0
    "linear_bias": ((randn(B, T, C), randn(C, F), randn(F)), {}),
    "gelu_tanh": ((randn(B, T, F) * 3,), {}),
    "gelu": ((randn(B, T, F) * 3,), {}),
}


def test_every_op_has_a_case():
    assert set(CASES) == set(OPS)


@pytest.mark.parametrize("kind", sorted(CASES))
def test_backward_matches_finite_differences(kind):
    op = OPS[kind]
    inputs, attrs = CASES[kind]
    out, cache = op.forward(*inputs, **attrs)
    out = np.asarray(out)
    dout = randn(*out.shape)
    dout[~np.isfinite(out)] = 0.0
    grads = op.backward(np.asarray(dout), cache)
    assert len(grads) == len(inputs)

    def objective(args):
        y = np.asarray(op.forward(*args, **attrs)[0])
        return float(np.sum(np.where(np.isfinite(y), y, 0.0) * dout))

    for slot, (x, g) in enumerate(zip(inputs, grads, strict=True)):
        if x.dtype.kind in "iu":
            assert g is None
            continue
        assert g.shape == x.shape and g.dtype == np.float64
        finite = np.isfinite(x)
        eps = 1e-6
        numeric = np.zeros_like(x)
        flat = x.reshape(-1)
        for i in np.flatnonzero(finite):
            args = list(inputs)
            for sign in (+1, -1):
                bumped = flat.copy()
                bumped[i] += sign * eps
                args[slot] = bumped.reshape(x.shape)
                numeric.reshape(-1)[i] += sign * objective(args) / (2 * eps)
        np.testing.assert_allclose(
            np.where(finite, g, 0), numeric, rtol=1e-6, atol=1e-8, err_msg=f"{kind} input {slot}"
        )


@pytest.mark.parametrize("kind", sorted(CASES))
def test_float32_in_float32_out(kind):
    """No silent float64 upcast in the hot path."""
    op = OPS[kind]
    inputs, attrs = CASES[kind]
    inputs32 = [x.astype(np.float32) if x.dtype.kind == "f" else x for x in inputs]
    out, cache = op.forward(*inputs32, **attrs)
    assert np.asarray(out).dtype == np.float32
    dout = np.ones(np.shape(out), dtype=np.float32)
    for g in op.backward(dout, cache):
        assert g is None or g.dtype == np.float32


def test_rope_is_a_rotation_by_the_documented_angles():
    x = randn(1, 3, 4)  # one head, hd = 4: pairs (0, 1) and (2, 3)
    y, _ = OPS["rope"].forward(x, n_heads=1, theta=100.0)
    for t in range(3):
        for i in range(2):
            angle = t * 100.0 ** (-2 * i / 4)
            c, s = np.cos(angle), np.sin(angle)
            a, b = x[0, t, 2 * i], x[0, t, 2 * i + 1]
            np.testing.assert_allclose(y[0, t, 2 * i : 2 * i + 2], [a * c - b * s, a * s + b * c])


def test_gqa_query_head_reads_kv_head_h_over_group():
    q, k = randn(1, T, 4 * hd), randn(1, T, 2 * hd)
    scores, _ = OPS["scores"].forward(q, k, n_head=4, n_kv_head=2)
    for h in range(4):
        kv = h // 2
        expected = q[0, :, h * hd : (h + 1) * hd] @ k[0, :, kv * hd : (kv + 1) * hd].T / np.sqrt(hd)
        keep = ~causal_mask(T)
        np.testing.assert_allclose(scores[0, h][keep], expected[keep])
        assert np.all(np.isneginf(scores[0, h][~keep]))


def test_qk_norm_normalises_each_head_on_its_own_with_one_shared_gain():
    x = randn(B, T, 3 * 4) * np.array([1.0, 10.0, 0.1]).repeat(4)  # three heads of hd = 4, far apart in scale
    gain = randn(4)
    y, _ = OPS["qk_norm"].forward(x, gain, n_heads=3, eps=0.0)
    for m in range(3):
        head = x[..., 4 * m : 4 * m + 4]
        expected = head / np.sqrt(np.mean(head**2, axis=-1, keepdims=True)) * gain
        np.testing.assert_allclose(y[..., 4 * m : 4 * m + 4], expected, rtol=1e-12)


def test_a_bias_gradient_is_the_sum_over_every_position():
    dy = randn(B, T, 6)
    _, dbias = OPS["bias"].backward(dy, None)
    np.testing.assert_allclose(dbias, dy.sum(axis=(0, 1)))
