"""The numbers' health: what a format did to each tensor against the float64 twin, and the rule
for where a step first loses information."""

import numpy as np
import pytest

import xt_core
from tests.helpers.specs import make_batch
from xt_core.precision import BFLOAT16, FLOAT16, Precision
from xt_core.precision.formats import FLOAT32
from xt_core.precision.health import first_losing, health, param_health, trace_health, update_losses
from xt_core.precision.scaling import update_loss
from xt_core.training.loop import train_step
from xt_core.training.optim import SGD

CFG = xt_core.Config(vocab_size=40, n_layer=1, n_head=2, n_kv_head=2, n_embd=16, ffn_hidden=24, seq_len=8)


def test_the_fractions_and_exponents_of_a_crafted_tensor():
    reference = np.array([1e-9, 3e-6, 1.0, 1e6, 0.0, -2.0, 0.75, 5.0], dtype=np.float64)
    held = FLOAT16.round(reference.astype(np.float32))  # 1e-9 -> 0, 3e-6 subnormal, 1e6 -> inf
    got = health(held, reference, FLOAT16)
    assert (got.flushed, got.subnormal, got.overflowed) == (1 / 8, 1 / 8, 1 / 8)
    assert got.loses_information  # an overflow
    # exponents of the finite nonzero entries: 3e-6 -> -19, 0.75 -> -1, 1 -> 0, -2 -> 1, 5 -> 2
    assert got.exponents == {"lowest": -19, "counts": [1] + [0] * 17 + [1, 1, 1, 1]}
    assert got.range == {"subnormal": -24, "normal": -14, "largest": 15}


def test_the_rule_for_losing_information():
    reference = np.linspace(1.0, 2.0, 1000)
    within = reference * (1 + 5 * FLOAT16.unit_roundoff)
    past = reference * (1 + 11 * FLOAT16.unit_roundoff)
    assert not health(within, reference, FLOAT16).loses_information
    assert health(past, reference, FLOAT16).loses_information
    flushed = reference.copy()
    flushed[:11] = 0  # 1.1 % of entries: past the 1 %, though the norm-wise error is small
    assert health(flushed, reference, FLOAT16).loses_information
    # a float32 tensor of a float16 step is judged by float16's round-off
    assert not health(within, reference, FLOAT32, FLOAT16).loses_information


@pytest.fixture(scope="module")
def batch():
    return make_batch(CFG, 2, 8, seed=2)


def test_a_float16_step_first_loses_information_where_its_gradients_flush(batch):
    params = xt_core.init_params(CFG, seed=1)
    params["norm"] = np.full_like(params["norm"], 1e-9)
    trace = xt_core.forward_backward(CFG, params, *batch, precision=Precision.of("float16"))
    summary = trace_health(trace)
    assert set(summary) == {node.name for node in trace.nodes}
    assert summary["layers.0.ffn_residual"]["grad"].flushed == 1.0
    # the first to lose: the logits (~1e-9 after the quiet norm: flushed in the forward already)
    assert first_losing(summary) == ("logits", "value")
    assert summary["logits"]["value"].flushed > 0.9
    assert not any(summary[n]["value"].loses_information for n in list(summary)[: list(summary).index("logits")])
    scaled = xt_core.forward_backward(CFG, params, *batch, precision=Precision.of("float16", loss_scale=2.0**20))
    assert trace_health(scaled, ["layers.0.ffn_residual"])["layers.0.ffn_residual"]["grad"].flushed == 0.0


def test_the_parameters_gradients_flush_with_the_activations_and_the_gains_keep_float32(batch):
    params = xt_core.init_params(CFG, seed=1)
    params["norm"] = np.full_like(params["norm"], 1e-9)
    grads = param_health(xt_core.forward_backward(CFG, params, *batch, precision=Precision.of("float16")))
    assert set(grads) == set(params)
    assert grads["layers.0.feed_forward.w2"].held_in == "float16"
    assert grads["layers.0.feed_forward.w2"].flushed == 1.0  # every entry, as its activations' gradients
    assert grads["norm"].held_in == "float32" and grads["norm"].flushed == 0.0  # a float32 reduction's gain


def test_the_update_s_share_lost_in_bfloat16_weights(batch):
    """A step of SGD at a learning rate so small that ΔW sits below half bfloat16's spacing at
    most weights: most of each matrix's update would be lost; the master weights keep it."""
    params = xt_core.init_params(CFG, seed=1)
    trace = train_step(CFG, params, *batch, SGD(lr=1e-4), precision=Precision.of("bfloat16"))
    lost = update_losses(trace)
    assert set(lost) == set(params)
    w2 = "layers.0.feed_forward.w2"
    assert lost[w2] == update_loss(params[w2], trace.update.per_param[w2].delta, BFLOAT16) > 0.5
    assert update_losses(xt_core.forward_backward(CFG, params, *batch, precision=Precision.of("bfloat16"))) is None


def test_health_is_of_a_low_precision_step(batch):
    trace = xt_core.forward_backward(CFG, xt_core.init_params(CFG, seed=1), *batch)
    with pytest.raises(ValueError, match="this step is not one"):
        trace_health(trace)
    with pytest.raises(ValueError, match="this step is not one"):
        param_health(trace)
