"""The update check's two replays in lockstep give the numbers of two separate replays."""

import importlib

import numpy as np
import pytest

import xt_core
from tests.helpers.specs import make_batch
from xt_core.checks.twin import twin_of
from xt_core.tape import replay_loss, replay_losses

directions = importlib.import_module("xt_core.checks.directions")


@pytest.mark.parametrize("large", [False, True])
def test_lockstep_replays_match_separate_replays_bit_for_bit(monkeypatch, large):
    if large:  # every weight beyond LARGE: each side built on its own, direction drawn per side
        monkeypatch.setattr(directions, "LARGE", 16)
    cfg = xt_core.PRESETS["tiny"]  # tied: the embedding is read twice per replay
    inputs, targets = make_batch(cfg, 2, 10, seed=4)
    params = xt_core.init_params(cfg, dtype=np.float32)
    trace = xt_core.forward_backward(cfg, params, inputs, targets)
    draws = []

    def direction(name: str) -> np.ndarray:
        draws.append(name)
        return np.random.default_rng(len(name)).random(np.shape(params[name]), dtype=np.float32) - 0.5

    env, h = twin_of(trace).values, 1e-4
    separate = []
    for step in (h, -h):
        moved = {n: np.multiply(direction(n), step, dtype=np.float64) + params[n] for n in params}
        separate.append(replay_loss(trace.nodes, env, 0, replace=moved, dtype=np.float64))
    draws.clear()
    lockstep = replay_losses(trace.nodes, env, 0, list(directions.moved_pair(params, direction, h)), dtype=np.float64)
    assert lockstep == separate and separate[0] != separate[1]
    reads = sum(name in node.inputs for node in trace.nodes for name in params)
    assert len(draws) == (2 * reads if large else reads)  # drawn once for both sides unless large


def test_lockstep_replays_of_one_readers_input_cast_each_weight_once_and_match_separate_replays(monkeypatch):
    """A backward step's check: the input of one reader moved two ways, replayed in lockstep; the
    float32 weights every replay reads are cast to float64 once per op, not once per replay."""
    tape = importlib.import_module("xt_core.tape")
    cfg = xt_core.PRESETS["tiny"]
    inputs, targets = make_batch(cfg, 2, 10, seed=4)
    trace = xt_core.forward_backward(cfg, xt_core.init_params(cfg, dtype=np.float32), inputs, targets)
    env, start = twin_of(trace).values, trace.node_index("layers.0.attention.q")
    x = env["layers.0.attention_norm.out"]
    values = [x + 1e-3, x - 1e-3]
    separate = [replay_loss(trace.nodes, env, start, replace_input=(start, 0, v), dtype=np.float64) for v in values]
    casts = []
    cast = tape._as_float
    monkeypatch.setattr(tape, "_as_float", lambda a, *rest: casts.append(np.asarray(a).dtype) or cast(a, *rest))
    lockstep = replay_losses(trace.nodes, env, start, [{}, {}], np.float64, [(start, 0, v) for v in values])
    assert lockstep == separate and separate[0] != separate[1]
    weights_read = sum(env[n].dtype == np.float32 for node in trace.nodes[start:] for n in node.inputs if n in env)
    assert casts.count(np.dtype(np.float32)) == weights_read  # once per op, for both replays


def test_a_real_vocabularys_head_reads_its_float32_weight_uncast_with_the_bits_of_a_cast_one(monkeypatch):
    """A vocabulary past VOCAB_BLOCK: the twin and the checks' replays hand the LM head its float32
    weight (no float64 (V, C) copy); each block is cast inside its product, the same bits."""
    from xt_core.checks.twin import _args
    from xt_core.ops import basic

    monkeypatch.setattr(basic, "VOCAB_BLOCK", 16)  # a "real" vocabulary of 65 rows: four blocks and a part
    cfg = xt_core.PRESETS["tiny"]
    inputs, targets = make_batch(cfg, 1, 6, seed=1)
    trace = xt_core.forward_backward(cfg, xt_core.init_params(cfg, dtype=np.float32), inputs, targets)
    head = next(node for node in trace.nodes if node.kind == "unembed")
    args = _args(head, twin_of(trace).values)
    assert args[0].dtype == np.float64 and args[1].dtype == np.float32
    cast = [np.asarray(a, dtype=np.float64) for a in args]
    logits, cache = basic.unembed_forward(*args)
    assert np.array_equal(logits, basic.unembed_forward(*cast)[0])
    dlogits = np.random.default_rng(0).standard_normal(logits.shape)
    assert np.array_equal(
        basic.unembed_input_backward(dlogits, cache)[0], basic.unembed_input_backward(dlogits, cast)[0]
    )
    start = trace.nodes.index(head)
    env = twin_of(trace).values
    uncast = replay_loss(trace.nodes, env, start, dtype=np.float64)
    whole = {head.inputs[1]: cast[1]}  # the weight cast whole first
    assert replay_loss(trace.nodes, env, start, replace=whole, dtype=np.float64) == uncast
