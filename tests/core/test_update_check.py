"""The update step's check: the gradient the optimizer used, along one random direction of all
parameters, against float64 central differences; it fails where a parameter gradient is wrong."""

import importlib
import threading

import numpy as np
import pytest

import xt_core
from tests.helpers.specs import make_batch
from xt_core.checks.gradcheck import check_record
from xt_core.lab.faults import overrides
from xt_core.tape import replay_losses
from xt_core.training.loop import train_step
from xt_core.training.optim import SGD

directions = importlib.import_module("xt_core.checks.directions")
PARAMETER_FAULTS = ["linear_dw_transposed", "tied_embedding_one_contribution"]  # wrong dW, not wrong dX


@pytest.fixture(scope="module")
def setup():
    cfg = xt_core.PRESETS["tiny"]  # tied: the embedding's gradient has two contributions
    return cfg, *make_batch(cfg, 2, 10, seed=4)


def update_check(setup, dtype, faults=()):
    cfg, inputs, targets = setup
    params = xt_core.init_params(cfg, seed=0, dtype=dtype)
    trace = train_step(cfg, params, inputs, targets, SGD(lr=0.1), backward_override=overrides(cfg, faults))
    return check_record(trace, trace.records[-1].index)


@pytest.mark.parametrize("large", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_update_check_passes_and_catches_a_wrong_parameter_gradient(monkeypatch, setup, dtype, large):
    if large:  # every weight beyond LARGE: a direction of several windows, moved and dotted per window
        monkeypatch.setattr(directions, "LARGE", 16)
    check = update_check(setup, dtype)
    assert check.passed and check.checks[0].tensor == "parameters" and check.checks[0].analytic != 0
    if dtype == np.float32:
        assert check.float32_roundoff < 1e-3
    for fault in PARAMETER_FAULTS:
        wrong = update_check(setup, dtype, faults=(fault,))
        assert not wrong.passed and wrong.max_rel_error > 1e-3, fault


@pytest.mark.parametrize("large", [False, True])
def test_a_direction_is_the_same_whole_by_rows_and_in_its_dot_products(monkeypatch, large):
    if large:
        monkeypatch.setattr(directions, "LARGE", 16)
    rng = np.random.default_rng(1)
    params = {"table": rng.standard_normal((12, 5)).astype(np.float32), "bias": np.ones(3, np.float32)}
    direction = directions.Direction(7, params)
    u = direction("table")
    assert u.shape == (12, 5) and np.all(np.abs(u) <= 1) and np.unique(u).size == u.size
    rows = np.array([0, 3, 11])
    np.testing.assert_array_equal(direction.rows("table", rows), u[rows])
    exact = np.multiply(u, 1e-3, dtype=np.float64)  # h u in float64, never rounded to float32
    np.testing.assert_array_equal(directions._scaled(direction, "table", 1e-3), exact)
    grad = rng.standard_normal((12, 5))
    expected = float(np.sum(grad * u.astype(np.float64)))
    assert direction.dots("table", grad, params["table"])[0] == pytest.approx(expected, rel=1e-12)
    assert not np.array_equal(directions.Direction(8, params)("table"), u)  # seeded


def test_moving_only_the_looked_up_rows_replays_the_same_losses(setup):
    cfg, inputs, targets = setup
    params = xt_core.init_params(cfg, seed=0, dtype=np.float32)
    trace = xt_core.forward_backward(cfg, params, inputs, targets)
    nodes, ids, h = trace.nodes, {"tokens": inputs, "targets": targets}, 1e-4
    direction = directions.Direction(3, params)
    whole = replay_losses(nodes, ids, 0, list(directions.moved_pair(params, direction, h)), dtype=np.float64)
    looked_up = directions.lookup_rows(nodes[0], params, inputs, direction, h)
    sides = [
        {nodes[0].name: x, **side}
        for x, side in zip(looked_up, directions.moved_pair(params, direction, h), strict=True)
    ]
    assert replay_losses(nodes, ids, 1, sides, dtype=np.float64) == whole and whole[0] != whole[1]


def test_the_replays_move_no_large_weight_before_the_backward_has_dotted_its_own(monkeypatch, setup):
    """The replays run on a second thread; a weight beyond LARGE entries (SmolLM2's (V, C) table,
    226 MB in float64) is moved only once the float64 backward has dotted its first large gradient
    (the LM head's), so the two threads' largest arrays never coexist, even when the backward is late."""
    monkeypatch.setattr(directions, "LARGE", 16)  # every weight but the smallest is large
    update = importlib.import_module("xt_core.checks.update_check")
    order, real_dot, real_moved, real_pair = [], update.param_grad_dot, directions.moved_whole, update.moved_pair
    replays_waiting = threading.Event()

    def pair_telling_when_it_waits(params, direction, step, before_large):
        return real_pair(params, direction, step, lambda: replays_waiting.set() or before_large())

    def late_backward(*args):
        # the replays' thread is ahead, at its first large weight, and must wait
        assert replays_waiting.wait(timeout=30), "the replays never reached a large weight"
        return real_dot(*args[:-1], lambda name: order.append("dotted") or args[-1](name))

    monkeypatch.setattr(update, "moved_pair", pair_telling_when_it_waits)
    monkeypatch.setattr(update, "param_grad_dot", late_backward)
    monkeypatch.setattr(directions, "moved_whole", lambda *a, **k: order.append("moved") or real_moved(*a, **k))
    assert update_check(setup, np.float32).passed
    assert order.index("dotted") < order.index("moved")


def test_a_backward_that_raises_leaves_the_replay_thread_free(monkeypatch, setup):
    monkeypatch.setattr(directions, "LARGE", 16)  # the replays wait for the backward's large gradients

    def broken(dout, cache, grads):
        raise RuntimeError("a backward that raises")

    cfg, inputs, targets = setup
    params = xt_core.init_params(cfg, seed=0, dtype=np.float32)
    trace = train_step(cfg, params, inputs, targets, SGD(lr=0.1))
    trace.backward_override = {node.name: broken for node in trace.nodes if node.kind == "swiglu"}
    with pytest.raises(RuntimeError, match="a backward that raises"):
        check_record(trace, trace.records[-1].index)
    update = importlib.import_module("xt_core.checks.update_check")
    assert update._replay_thread().submit(lambda: "free").result(timeout=60) == "free"  # not left waiting
    assert update_check(setup, np.float32).passed


@pytest.mark.parametrize("fault", [(), ("linear_dw_transposed",)])
def test_the_update_checks_dot_has_the_same_bits_when_every_segments_forward_runs_again(setup, monkeypatch, fault):
    """param_grad_dot's forward keeps its latest segments up to KEPT_FORWARD_BYTES (all of a toy's);
    with none kept, the backward runs each segment's forward again: the same sums, bit for bit."""
    twin = importlib.import_module("xt_core.checks.twin")
    cfg, inputs, targets = setup
    params = xt_core.init_params(cfg, seed=0, dtype=np.float32)
    trace = train_step(cfg, params, inputs, targets, SGD(lr=0.1), backward_override=overrides(cfg, fault))
    ids, direction = {"tokens": trace.tokens, "targets": trace.targets}, directions.Direction(3, params)
    dotted = []

    def dot():
        return twin.param_grad_dot(
            trace.nodes, params, *ids.values(), direction, trace.grads, trace.backward_override, dotted.append
        )

    kept = dot()
    order = list(dotted)
    monkeypatch.setattr(twin, "KEPT_FORWARD_BYTES", 0)
    dotted.clear()
    assert dot() == kept and dotted == order and len(order) > len(params)  # the tied table twice
