"""The rounding model as a policy of the tape: every op's precision stated, a low-precision trace's
recomputed layers the build's bits, its tensors on the format's grid, its checks in exact float64."""

import numpy as np
import pytest

import xt_core
from tests.helpers.specs import make_batch
from xt_core.checks.gradcheck import check_record
from xt_core.ops import OPS
from xt_core.precision import FORMATS, OP_PRECISION, ROUNDED, Precision
from xt_core.tape import EveryGradient, run_backward, run_forward

CFG = xt_core.Config(vocab_size=40, n_layer=2, n_head=4, n_kv_head=2, n_embd=32, ffn_hidden=48, seq_len=8)


@pytest.fixture(scope="module")
def step():
    params = xt_core.init_params(CFG, seed=3)
    inputs, targets = make_batch(CFG, 2, 8, seed=4)
    return params, inputs, targets


def test_every_op_has_its_precision_stated():
    assert set(OP_PRECISION) == set(OPS)


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_a_recomputed_layer_has_the_bits_of_a_full_recording(name, step):
    params, inputs, targets = step
    policy = Precision.of(name, loss_scale=2.0**8)
    trace = xt_core.forward_backward(CFG, params, inputs, targets, precision=policy)
    nodes = policy.bind(xt_core.build_tape(CFG))
    env = {**params, "tokens": inputs, "targets": targets}
    caches = run_forward(nodes, env)
    grads, _ = run_backward(nodes, caches, np.ones((), np.float32), keep=EveryGradient(range(len(nodes))))
    for node in nodes:
        assert np.array_equal(trace[node.name], env[node.name]), node.name
        assert np.array_equal(trace.grad(node.name), grads[node.name]), node.name
    for param in params:
        assert np.array_equal(trace.grads[param], grads[param]), param


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_a_rounded_op_s_output_and_gradient_lie_on_the_format_s_grid(name, step):
    """A gradient with one contribution lies on the grid; several (the residual stream's) are summed
    in float32 and rounded where the tensor's own op reads them."""
    params, inputs, targets = step
    policy = Precision.of(name)
    trace = xt_core.forward_backward(CFG, params, inputs, targets, precision=policy)
    fmt = FORMATS[name]
    readers = {n.name: sum(n.name in m.inputs for m in trace.nodes) for n in trace.nodes}
    for node in trace.nodes:
        value, grad = trace[node.name], trace.grad(node.name)
        if OP_PRECISION[node.kind] == ROUNDED:
            assert np.array_equal(fmt.round(value), value), node.name
            assert np.array_equal(fmt.round(grad), grad) == (readers[node.name] == 1), node.name
    assert all(p.dtype == np.float32 for p in params.values())  # the master weights


def test_the_trace_s_checks_run_the_exact_math_of_its_float64_twin(step):
    """The verdict is about the backward's math (the float64 twin, no rounding); the bfloat16
    gradient on screen is reported beside it, its round-off far above float32's."""
    params, inputs, targets = step
    trace = xt_core.forward_backward(CFG, params, inputs, targets, precision=Precision.of("bfloat16"))
    assert all(node.precision is None for node in trace.nodes)
    index = next(r.index for r in trace.records if r.name == "layers.0.feed_forward.swiglu" and r.phase == "backward")
    result = check_record(trace, index)
    assert result.max_rel_error < result.tolerance
    assert max(c.roundoff for c in result.checks) > 1e-4


def test_the_loss_is_float32_and_near_the_float32_step_s(step):
    params, inputs, targets = step
    exact = xt_core.forward_backward(CFG, params, inputs, targets).loss
    for name, fmt in FORMATS.items():
        loss = xt_core.forward_backward(CFG, params, inputs, targets, precision=Precision.of(name)).loss
        assert loss != exact
        assert abs(loss - exact) / exact < 20 * fmt.unit_roundoff


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"name": "float8"}, "precision must be one of bfloat16, float16"),
        ({"name": "float16", "loss_scale": 3.0}, "loss_scale must be a power of two in [1, 2^32]"),
        ({"name": "float16", "loss_scale": 0.5}, "loss_scale must be a power of two"),
        ({"name": "float16", "loss_scale": 2.0**33}, "got 8589934592.0"),
        ({"name": "float16", "loss_scale": float("inf")}, "loss_scale must be a power of two"),
        ({"name": "float16", "loss_scale": True}, "loss_scale must be a power of two"),
    ],
)
def test_a_bad_precision_is_refused_naming_the_field_and_the_limit(kwargs, says):
    with pytest.raises(ValueError, match=None) as refused:
        Precision.of(**kwargs)
    assert says in str(refused.value)


def test_a_low_precision_step_keeps_float32_master_weights(step):
    params, inputs, targets = step
    as64 = {k: v.astype(np.float64) for k, v in params.items()}
    with pytest.raises(ValueError, match="a bfloat16 step keeps float32 master weights"):
        xt_core.forward_backward(CFG, as64, inputs, targets, precision=Precision.of("bfloat16"))


def test_flush_to_zero_drops_the_subnormals():
    x = np.array([2.0**-20, -(2.0**-15), 2.0**-14, 1.0], dtype=np.float32)
    assert Precision.of("float16").round(x).tolist() == [2.0**-20, -(2.0**-15), 2.0**-14, 1.0]
    flushed = Precision.of("float16", flush_to_zero=True).round(x)
    assert flushed.tolist() == [0.0, -0.0, 2.0**-14, 1.0]
    assert np.signbit(flushed[1])
