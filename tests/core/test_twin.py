"""The update check's two replays in lockstep give the numbers of two separate replays."""

import importlib

import numpy as np
import pytest

import xt_core
from tests.helpers.specs import make_batch
from xt_core.tape import replay_loss, replay_losses

twin = importlib.import_module("xt_core.twin")


@pytest.mark.parametrize("large", [False, True])
def test_lockstep_replays_match_separate_replays_bit_for_bit(monkeypatch, large):
    if large:  # every weight beyond LARGE: each side built on its own, direction drawn per side
        monkeypatch.setattr(twin, "LARGE", 16)
    cfg = xt_core.PRESETS["tiny"]  # tied: the embedding is read twice per replay
    inputs, targets = make_batch(cfg, 2, 10, seed=4)
    params = xt_core.init_params(cfg, dtype=np.float32)
    trace = xt_core.forward_backward(cfg, params, inputs, targets)
    draws = []

    def direction(name: str) -> np.ndarray:
        draws.append(name)
        return np.random.default_rng(len(name)).random(np.shape(params[name]), dtype=np.float32) - 0.5

    env, h = trace.twin.values, 1e-4
    separate = []
    for step in (h, -h):
        moved = {n: np.multiply(direction(n), step, dtype=np.float64) + params[n] for n in params}
        separate.append(replay_loss(trace.nodes, env, 0, replace=moved, dtype=np.float64))
    draws.clear()
    lockstep = replay_losses(trace.nodes, env, 0, list(twin.moved_pair(params, direction, h)), dtype=np.float64)
    assert lockstep == separate and separate[0] != separate[1]
    reads = sum(name in node.inputs for node in trace.nodes for name in params)
    assert len(draws) == (2 * reads if large else reads)  # drawn once for both sides unless large
