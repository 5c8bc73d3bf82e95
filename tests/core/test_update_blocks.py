"""The optimizer step made block by block (xt_core/training/update_blocks.py) against the whole step:
the same bits, the same statistics. Blocks of 16 entries here, so each parameter of the tiny
model is many blocks (a real model's embedding is 108 of 2^18 entries)."""

import numpy as np
import pytest

import xt_core
from tests.helpers.specs import make_batch
from xt_core import memory
from xt_core.training import update_blocks
from xt_core.training.loop import forward_loss, train_step
from xt_core.training.optim import SGD, AdamW, apply_update, param_step

OPTIMIZERS = [SGD(lr=0.3, momentum=0.9, weight_decay=0.1), AdamW(lr=3e-3, weight_decay=0.1)]


@pytest.fixture
def small_blocks(monkeypatch):
    monkeypatch.setattr(update_blocks, "BLOCK", 16)


@pytest.fixture(scope="module")
def setup():
    cfg = xt_core.PRESETS["tiny"]
    params = xt_core.init_params(cfg, seed=1, dtype=np.float32)
    x, y = make_batch(cfg, 2, 12)
    trace = xt_core.forward_backward(cfg, params, x, y)
    return cfg, params, x, y, trace.grads


def second_step(optimizer, params, grads):
    """The state after one held step, so momentum / m / v / t take part."""
    return apply_update(optimizer, params, grads, None, 1.0).state


@pytest.mark.parametrize("optimizer", OPTIMIZERS)
def test_blocked_step_is_the_whole_step_bit_for_bit(setup, small_blocks, optimizer):
    cfg, params, x, y, grads = setup
    state = second_step(optimizer, params, grads)
    rows = np.array([0, 5, 17, 95])
    for name, p in params.items():
        delta, _ = param_step(optimizer, name, p, grads[name], state)
        assert len(update_blocks.row_blocks(p.shape)) > 1
        blocked = update_blocks.stepped(optimizer, name, params, grads, state, plus_weights=False)
        assert blocked.tobytes() == delta.tobytes(), name
        new = update_blocks.stepped(optimizer, name, params, grads, state)
        assert new.tobytes() == (p + delta).tobytes(), name
        if p.ndim == 2 and p.shape[0] > rows.max():
            some = update_blocks.stepped(optimizer, name, params, grads, state, rows=rows)
            assert some.tobytes() == (p + delta)[rows].tobytes(), name


@pytest.mark.parametrize("optimizer", OPTIMIZERS)
def test_unheld_update_keeps_the_held_statistics(setup, small_blocks, optimizer):
    cfg, params, x, y, grads = setup
    grads = dict(grads)
    grads["norm"] = grads["norm"].copy()
    grads["norm"][[1, 7]] = [np.inf, np.nan]  # nonfinite new weights are counted
    with np.errstate(invalid="ignore"):  # inf - inf in AdamW's step: the NaN is the point
        state = second_step(optimizer, params, grads)
        held = apply_update(optimizer, params, grads, state, 2.0)
        unheld = apply_update(optimizer, params, grads, state, 2.0, hold=False)
    assert not unheld.held and unheld.nbytes() == 0
    for name in params:
        a, b = held.per_param[name], unheld.per_param[name]
        assert b.new_nonfinite == a.new_nonfinite
        assert b.shape == a.shape
        for field in ("grad_norm", "weight_rms", "update_rms"):
            assert getattr(b, field) == pytest.approx(getattr(a, field), rel=1e-12, nan_ok=True), (name, field)
        with np.errstate(invalid="ignore"):
            assert b.delta.tobytes() == a.delta.tobytes()
            assert unheld.params[name].tobytes() == held.params[name].tobytes()
    assert held.per_param["norm"].new_nonfinite == 2


@pytest.mark.parametrize("optimizer", OPTIMIZERS)
def test_loss_after_is_the_forward_loss_at_the_new_weights(setup, small_blocks, optimizer):
    cfg, params, x, y, grads = setup
    update = train_step(cfg, params, x, y, optimizer).update
    whole = {name: update.params[name] for name in params}
    assert update.loss_after == forward_loss(cfg, whole, x, y)


@pytest.mark.parametrize("optimizer", OPTIMIZERS)
def test_reused_memory_never_changes_an_array_still_held(setup, monkeypatch, optimizer):
    """With every parameter past the reuse threshold (a real model's embedding is): new weights
    and ΔW asked for while earlier ones are still held keep their values."""
    monkeypatch.setattr(memory, "LARGE_ARRAY_BYTES", 1024)
    cfg, params, x, y, grads = setup
    state = second_step(optimizer, params, grads)
    held = apply_update(optimizer, params, grads, state, 2.0)
    unheld = apply_update(optimizer, params, grads, state, 2.0, hold=False)
    names = [n for n in params if params[n].nbytes >= 1024]
    kept = [unheld.params[n] for n in names] + [unheld.per_param[n].delta for n in names]
    again = [unheld.params[n] for n in names]  # asked again while all of the above are alive
    for name, new, delta, twice in zip(names, kept[: len(names)], kept[len(names) :], again, strict=True):
        assert new.tobytes() == held.params[name].tobytes() == twice.tobytes(), name
        assert delta.tobytes() == held.per_param[name].delta.tobytes(), name


def test_the_line_search_in_reused_memory_is_the_same(setup, monkeypatch):
    from xt_core.training.loop import line_search

    cfg, params, x, y, grads = setup
    trace = xt_core.forward_backward(cfg, params, x, y)
    plain = line_search(cfg, trace, params, [1e-3, 1e-1])
    monkeypatch.setattr(memory, "LARGE_ARRAY_BYTES", 1024)
    assert line_search(cfg, trace, params, [1e-3, 1e-1]) == plain
