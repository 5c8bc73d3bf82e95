"""GPT-2's ops beyond their finite-difference checks (tests/core/test_ops.py): LayerNorm without
its bias (nanoGPT's bias=False), and each op's forward and backward against torch autograd in
float64 (torch.nn.functional's own LayerNorm, GELU in both forms, linear, and the broadcast add
of a position table). Skips without torch, except in CI (XT_REQUIRE_TORCH=1)."""

import numpy as np
import pytest

from tests.core.test_ops import CASES
from tests.helpers.env import skip_unless_installed
from xt_core.ops import OPS

rng = np.random.default_rng(36)


def finite_difference_check(kind, inputs, attrs):
    """Each float input's gradient of <dout, forward(inputs)> by central differences."""
    op = OPS[kind]
    out, cache = op.forward(*inputs, **attrs)
    dout = rng.standard_normal(out.shape)
    grads = op.backward(dout, cache)
    assert len(grads) == len(inputs)
    for slot, x in enumerate(inputs):
        numeric = np.zeros_like(x)
        for i in range(x.size):
            total = 0.0
            for sign in (1, -1):
                bumped = x.copy()
                bumped.reshape(-1)[i] += sign * 1e-6
                args = [bumped if j == slot else a for j, a in enumerate(inputs)]
                total += sign * float(np.sum(op.forward(*args, **attrs)[0] * dout))
            numeric.reshape(-1)[i] = total / 2e-6
        np.testing.assert_allclose(grads[slot], numeric, rtol=1e-6, atol=1e-8, err_msg=f"{kind} input {slot}")


def test_layernorm_without_bias_has_two_gradients_and_passes_finite_differences():
    x, gain = rng.standard_normal((2, 3, 6)) * 2 + 1, rng.standard_normal(6)
    finite_difference_check("layernorm", (x, gain), {"eps": 1e-5})
    with_bias, _ = OPS["layernorm"].forward(x, gain, np.zeros(6), eps=1e-5)
    without, _ = OPS["layernorm"].forward(x, gain, eps=1e-5)
    np.testing.assert_array_equal(with_bias, without)


def test_the_layernorm_mean_term_is_needed():
    """Without the mean term the backward is RMSNorm's shape of rule: finite differences catch it."""
    x, gain, bias = CASES["layernorm"][0]
    n, cache = OPS["layernorm"].forward(x, gain, bias, eps=1e-5)
    dn = rng.standard_normal(n.shape)
    dx = OPS["layernorm"].backward(dn, cache)[0]
    xhat, r = cache[0], cache[1]
    dxhat = dn * gain
    no_mean = r * (dxhat - xhat * np.mean(dxhat * xhat, axis=-1, keepdims=True))
    assert np.max(np.abs(no_mean - dx)) > 1e-2 * np.max(np.abs(dx))
    np.testing.assert_allclose(np.sum(dx, axis=-1), 0, atol=1e-12)  # the mean term's mark: dx sums to 0 over C


def test_position_rows_past_the_batch_get_no_gradient_and_the_rest_sum_the_batch():
    e, table = CASES["positions"][0]
    dx = rng.standard_normal(e.shape)
    _, dtable = OPS["positions"].backward(dx, OPS["positions"].forward(e, table)[1])
    np.testing.assert_array_equal(dtable[e.shape[1] :], 0)
    np.testing.assert_allclose(dtable[: e.shape[1]], dx.sum(axis=0))


def test_the_two_gelus_differ():
    a = np.linspace(-4, 4, 81)
    exact, tanh = OPS["gelu"].forward(a)[0], OPS["gelu_tanh"].forward(a)[0]
    assert 1e-4 < np.max(np.abs(exact - tanh)) < 1e-3


# --------------------------------------------------------------------------- torch autograd


def torch_forms():
    import torch
    import torch.nn.functional as F

    return {
        "layernorm": lambda x, g, b: F.layer_norm(x, x.shape[-1:], g, b, eps=1e-5),
        "positions": lambda e, p: e + p[: e.shape[1]],
        "linear_bias": lambda x, w, b: F.linear(x, w.T, b),
        "gelu_tanh": lambda a: F.gelu(a, approximate="tanh"),
        "gelu": lambda a: F.gelu(a),
    }, torch


@pytest.mark.torch
@pytest.mark.parametrize("kind", ["layernorm", "positions", "linear_bias", "gelu_tanh", "gelu"])
def test_forward_and_backward_match_torch_autograd(kind):
    skip_unless_installed("torch", hint="optional extra: pip install torch==2.13.0")
    forms, torch = torch_forms()
    inputs, attrs = CASES[kind]
    out, cache = OPS[kind].forward(*inputs, **attrs)
    dout = rng.standard_normal(out.shape)
    grads = OPS[kind].backward(dout, cache)
    leaves = [torch.tensor(x, requires_grad=True) for x in inputs]
    reference = forms[kind](*leaves)
    reference.backward(torch.tensor(dout))
    np.testing.assert_allclose(out, reference.detach().numpy(), rtol=1e-12, atol=1e-12)
    for slot, (g, leaf) in enumerate(zip(grads, leaves, strict=True)):
        np.testing.assert_allclose(g, leaf.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=f"{kind} input {slot}")
