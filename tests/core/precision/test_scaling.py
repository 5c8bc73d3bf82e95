"""Loss scaling and the update in low precision, on crafted steps whose answers are known."""

import dataclasses

import numpy as np
import pytest

import xt_core
from tests.helpers.specs import make_batch
from xt_core.precision import BFLOAT16, FLOAT16, Precision
from xt_core.precision.scaling import DynamicLossScale, recorded_scaled_step, scaled_step, update_loss
from xt_core.training.optim import SGD

CFG = xt_core.Config(vocab_size=40, n_layer=1, n_head=2, n_kv_head=2, n_embd=16, ffn_hidden=24, seq_len=8)
LAST = "layers.0.ffn_residual"  # the stream into the final norm


@pytest.fixture(scope="module")
def quiet_model():
    """A model whose final norm's gain is 1e-9: every gradient before that norm is ~1e-9 times the
    logits' (~1/N), below float16's smallest subnormal (2^-24 ≈ 6e-8), far inside bfloat16's range."""
    params = xt_core.init_params(CFG, seed=1)
    params["norm"] = np.full_like(params["norm"], 1e-9)
    inputs, targets = make_batch(CFG, 2, 8, seed=2)
    exact = xt_core.forward_backward(CFG, params, inputs, targets)
    return params, inputs, targets, exact


def test_float16_without_scaling_flushes_the_small_gradients_to_zero(quiet_model):
    params, inputs, targets, exact = quiet_model
    assert 1e-14 < np.abs(exact.grad(LAST)).max() < 2.0**-25  # rounds to 0 in float16
    trace = xt_core.forward_backward(CFG, params, inputs, targets, precision=Precision.of("float16"))
    assert not np.any(trace.grad(LAST))
    assert not np.any(trace.grads["layers.0.feed_forward.w2"])  # and every gradient before it
    assert np.any(trace.grads["norm"])  # the norm's own gain, a float32 reduction's, survives


def test_bfloat16_keeps_them_unscaled(quiet_model):
    params, inputs, targets, exact = quiet_model
    trace = xt_core.forward_backward(CFG, params, inputs, targets, precision=Precision.of("bfloat16"))
    rel = np.linalg.norm(trace.grad(LAST) - exact.grad(LAST)) / np.linalg.norm(exact.grad(LAST))
    assert rel < 10 * BFLOAT16.unit_roundoff


def test_a_static_scale_restores_them(quiet_model):
    """2^20 lifts them into float16's range while dL/dlogits (up to 0.06) stays below 65,504 (at
    2^24 it overflows: the dynamic scaler's case)."""
    params, inputs, targets, exact = quiet_model
    trace = xt_core.forward_backward(
        CFG, params, inputs, targets, precision=Precision.of("float16", loss_scale=2.0**20)
    )
    w2 = "layers.0.feed_forward.w2"
    for got, want in ((trace.grad(LAST), exact.grad(LAST)), (trace.grads[w2], exact.grads[w2])):
        assert np.count_nonzero(got) == np.count_nonzero(want)
        assert np.linalg.norm(got - want) / np.linalg.norm(want) < 10 * FLOAT16.unit_roundoff


def test_the_dynamic_scaler_halves_on_overflow_and_skips_the_update():
    params = xt_core.init_params(CFG, seed=1)
    inputs, targets = make_batch(CFG, 2, 8, seed=2)
    policy = Precision.of("float16")
    too_high = DynamicLossScale(scale=2.0**30, growth_interval=3, clean_steps=2)  # ~1e-2 * 2^30 > 65,504
    done = scaled_step(CFG, params, inputs, targets, SGD(lr=0.1), {}, policy, too_high)
    assert done.skipped
    assert done.scaler == DynamicLossScale(scale=2.0**29, growth_interval=3, clean_steps=0)
    assert all(done.params[name] is params[name] for name in params)  # not one weight moved
    fine = scaled_step(
        CFG, params, inputs, targets, SGD(lr=0.1), {}, policy, dataclasses.replace(too_high, scale=2.0**8)
    )
    assert not fine.skipped
    assert fine.scaler.scale == 2.0**9  # the third clean step in a row doubles it
    assert not np.array_equal(fine.params["layers.0.feed_forward.w2"], params["layers.0.feed_forward.w2"])


def test_the_recorded_step_skips_an_update_that_overflowed():
    params = xt_core.init_params(CFG, seed=1)
    inputs, targets = make_batch(CFG, 2, 8, seed=2)
    trace = recorded_scaled_step(CFG, params, inputs, targets, SGD(lr=0.1), {}, Precision.of("float16", 2.0**30))
    update = trace.update
    assert update.skipped and update.loss_after == update.loss_before
    assert all(update.params[name] is params[name] for name in params)
    assert all(not np.any(p.delta) and p.update_rms == 0 for p in update.per_param.values())
    assert not np.isfinite(update.grad_norm)  # what made the scaler skip it
    fine = recorded_scaled_step(CFG, params, inputs, targets, SGD(lr=0.1), {}, Precision.of("float16", 2.0**8))
    assert not fine.update.skipped and fine.update.loss_after < fine.update.loss_before


def test_the_scaler_s_rule():
    scaler = DynamicLossScale(scale=2.0**4, growth_interval=2)
    assert scaler.after(True) == DynamicLossScale(2.0**4, 2, clean_steps=1)
    assert scaler.after(True).after(True) == DynamicLossScale(2.0**5, 2, clean_steps=0)
    assert scaler.after(True).after(False) == DynamicLossScale(2.0**3, 2, clean_steps=0)
    assert DynamicLossScale(scale=1.0).after(False).scale == 1.0
    assert DynamicLossScale(scale=2.0**32, growth_interval=1).after(True).scale == 2.0**32
    with pytest.raises(ValueError, match=r"growth_interval must be an integer in \[1, 100000\], got 0"):
        DynamicLossScale(growth_interval=0)


def test_a_bfloat16_weight_loses_a_known_share_of_a_small_update():
    """Weights in [1, 2), where bfloat16's spacing is 2^-7: half the entries move by 2^-9 (below
    half a spacing: lost whole), half by 2^-7 (one spacing: kept exactly). The lost share of ||ΔW||
    is sqrt(2^-18 / (2^-18 + 2^-14)) = 1/sqrt(17); float32 master weights lose none of it."""
    weight = np.full(1000, 1.0, dtype=np.float32)
    delta = np.where(np.arange(1000) % 2 == 0, 2.0**-9, 2.0**-7).astype(np.float32)
    assert update_loss(weight, delta, BFLOAT16) == pytest.approx(1 / np.sqrt(17), rel=1e-12)
    assert update_loss(weight, np.full(1000, 2.0**-9, np.float32), BFLOAT16) == 1.0
    assert np.array_equal((weight + delta) - weight, delta)  # the master weights keep all of it
