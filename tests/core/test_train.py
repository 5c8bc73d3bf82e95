"""Optimizers, the recorded update, training runs and the line search."""

import numpy as np
import pytest

import xt_core
from tests.helpers.specs import make_batch
from xt_core.checks.gradcheck import check_record
from xt_core.training.loop import forward_loss, line_search, train, train_step
from xt_core.training.optim import SGD, AdamW, make_optimizer


@pytest.fixture(scope="module")
def setup():
    cfg = xt_core.PRESETS["tiny"]
    return cfg, xt_core.init_params(cfg, seed=0, dtype=np.float64), *make_batch(cfg, 2, 12)


def test_forward_loss_equals_the_traced_loss(setup):
    cfg, params, x, y = setup
    assert forward_loss(cfg, params, x, y) == xt_core.forward_backward(cfg, params, x, y).loss


@pytest.mark.parametrize("optimizer", [SGD(lr=0.5), SGD(lr=0.3, momentum=0.9), AdamW(lr=3e-3)])
def test_update_is_recorded_and_lowers_the_loss(setup, optimizer):
    cfg, params, x, y = setup
    trace = train_step(cfg, params, x, y, optimizer)
    last = trace.records[-1]
    assert last.phase == "update" and last.name == "update" and last.forward_latex
    update = trace.update
    assert update.loss_after < update.loss_before == trace.loss
    for name, p in params.items():
        np.testing.assert_array_equal(update.params[name], p + update.per_param[name].delta)
        assert update.per_param[name].update_ratio > 0
    assert check_record(trace, last.index).passed
    assert update.grad_norm == pytest.approx(np.sqrt(sum(np.sum(g**2) for g in trace.grads.values())))


def test_adamw_first_step_and_no_decay_on_gains(setup):
    cfg, params, x, y = setup
    trace = train_step(cfg, params, x, y, AdamW(lr=1e-2, weight_decay=0.5))
    per = trace.update.per_param
    # first Adam step: |Δ| = lr * |g| / (|g| + eps) ≈ lr for every entry of a gain
    np.testing.assert_allclose(np.abs(per["norm"].delta), 1e-2, rtol=1e-4)
    state = trace.update.state["norm"]
    assert state["t"] == 1 and set(state) == {"t", "m", "v"}


def test_training_is_deterministic_and_learns(setup):
    cfg, params, x, y = setup

    def batches():
        while True:
            yield x, y

    a = train(cfg, params, AdamW(lr=3e-3), batches(), 15)
    b = train(cfg, params, AdamW(lr=3e-3), batches(), 15)
    assert a[2] == b[2] and a[2][-1] < a[2][0] * 0.8
    for name in params:
        assert a[0][name].tobytes() == b[0][name].tobytes()


def test_line_search_matches_first_order_for_small_steps(setup):
    cfg, params, x, y = setup
    trace = xt_core.forward_backward(cfg, params, x, y)
    result = line_search(cfg, trace, params, [1e-5, 1e-1])
    small = result["loss"][0] - trace.loss
    predicted = result["first_order"][0] - trace.loss
    assert small == pytest.approx(predicted, rel=1e-3)
    assert result["grad_norm_sq"] > 0


def test_line_search_is_the_loss_of_each_moved_model(setup):
    """The lockstep replays, with only the looked-up rows of the embedding moved, give exactly
    the loss of a forward pass at θ - η g built whole."""
    cfg, params, x, y = setup
    trace = xt_core.forward_backward(cfg, params, x, y)
    etas = [1e-4, 3e-2, 1.0]
    result = line_search(cfg, trace, params, etas)
    for eta, loss in zip(etas, result["loss"], strict=True):
        moved = {n: params[n] - params[n].dtype.type(eta) * trace.grads[n] for n in params}
        assert loss == forward_loss(cfg, moved, x, y)
    assert result["grad_norm_sq"] == pytest.approx(
        sum(float(np.sum(np.square(g, dtype=np.float64))) for g in trace.grads.values())
    )


@pytest.mark.parametrize(
    "spec,message",
    [
        ({"name": "adam"}, "optimizer name"),
        ({"name": "sgd", "lr": -1}, "lr must be a positive"),
        ({"name": "adamw", "lr": float("nan")}, "lr must be"),
        ({"name": "adamw", "beta1": 1.0}, "beta1"),
        ({"name": "sgd", "nesterov": True}, "unknown sgd field"),
    ],
)
def test_optimizer_errors_name_the_field(spec, message):
    with pytest.raises(ValueError, match=message):
        make_optimizer(spec)


@pytest.mark.parametrize("optimizer", [SGD(lr=0.5), SGD(lr=0.3, momentum=0.9), AdamW(lr=3e-3)])
def test_training_steps_one_parameter_at_a_time_give_apply_updates_bits(setup, optimizer):
    """train() makes each new weight and lets the old one and its gradient go before the next
    (a real model's update holds one parameter's ΔW, not every ΔW and new weight beside the old):
    the same bits as apply_update, step after step, and the caller's weights untouched."""
    from xt_core.training.optim import apply_update

    cfg, params, x, y = setup
    before = {name: p.copy() for name, p in params.items()}
    trained, state, losses = train(cfg, params, optimizer, iter([(x, y)] * 3), 3)
    expected, expected_state, expected_losses = params, {}, []
    for _ in range(3):
        trace = xt_core.forward_backward(cfg, expected, x, y, keep_param_grads=True)
        update = apply_update(optimizer, expected, trace.grads, expected_state, trace.loss)
        expected, expected_state = update.params, update.state
        expected_losses.append(trace.loss)
    assert losses == expected_losses
    for name in params:
        assert trained[name].tobytes() == expected[name].tobytes(), name
        assert params[name].tobytes() == before[name].tobytes(), name
        for slot, value in expected_state[name].items():
            assert np.asarray(state[name][slot]).tobytes() == np.asarray(value).tobytes(), (name, slot)
