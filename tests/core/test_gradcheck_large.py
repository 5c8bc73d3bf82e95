"""Step checks of tensors beyond LARGE entries (a real model's (V, C) embedding): a direction of
windows of one random block, moved one side at a time, or only in the rows an embedding lookup
reads. With every tensor counted large, a clean trace passes every step and a wrong gradient is
still caught at its own step, including one outside the rows the lookup reads."""

import importlib

import numpy as np
import pytest

import xt_core
from tests.helpers.specs import make_batch
from xt_core.checks.gradcheck import check_record
from xt_core.checks.twin import twin_of
from xt_core.lab.faults import CATALOGUE, overrides

directional = importlib.import_module("xt_core.checks.directional")
gradcheck = importlib.import_module("xt_core.checks.gradcheck")
directions = importlib.import_module("xt_core.checks.directions")


@pytest.fixture
def every_tensor_large(monkeypatch):
    monkeypatch.setattr(directional, "LARGE", 16)
    monkeypatch.setattr(directions, "LARGE", 16)


@pytest.fixture(scope="module")
def setup():
    cfg = xt_core.PRESETS["tiny"]  # tied: the table is read by the lookup and by the LM head
    inputs, targets = make_batch(cfg, 2, 10, seed=4)
    inputs[1, 3] = inputs[0, 0]  # a token read twice
    return cfg, inputs, targets


def failing_steps(trace) -> list[str]:
    return [f"{r.phase} {r.name}" for r in trace.records if not check_record(trace, r.index).passed]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_clean_trace_passes_every_step(setup, every_tensor_large, dtype):
    cfg, inputs, targets = setup
    trace = xt_core.forward_backward(cfg, xt_core.init_params(cfg, dtype=dtype), inputs, targets)
    assert failing_steps(trace) == []
    lookup = check_record(trace, len(trace.records) - 1)  # the embedding lookup's backward
    assert lookup.checks[0].tensor == "tok_embeddings" and lookup.checks[0].analytic != 0


@pytest.mark.parametrize("name", ["tied_embedding_one_contribution", "batch_mean_twice", "linear_dw_transposed"])
def test_faults_are_still_caught_at_their_own_step(setup, every_tensor_large, name):
    cfg, inputs, targets = setup
    params = xt_core.init_params(cfg, dtype=np.float32)
    trace = xt_core.forward_backward(cfg, params, inputs, targets, backward_override=overrides(cfg, [name]))
    first = next(r for r in trace.records if r.phase == "backward" and not check_record(trace, r.index).passed)
    assert first.name == CATALOGUE[name].step_name(cfg.n_layer - 1)


def _rows_shifted(dx, cache, grads):
    """A wrong lookup backward: each token's gradient lands in the next row of the table."""
    tokens, shape = cache
    dtable = np.zeros(shape, dtype=dx.dtype)
    np.add.at(dtable, (tokens.reshape(-1) + 1) % shape[0], dx.reshape(-1, shape[1]))
    return None, dtable


def _assigned_not_added(dx, cache, grads):
    """A wrong lookup backward: fancy-index assignment keeps one row of a token read twice."""
    tokens, shape = cache
    dtable = np.zeros(shape, dtype=dx.dtype)
    dtable[tokens.reshape(-1)] = dx.reshape(-1, shape[1])
    return None, dtable


def _also_an_unread_row(dx, cache, grads):
    """A wrong lookup backward, right in every row a token reads: one more row, no token's, gets
    the first token's gradient too (only the dot product over every row can see it)."""
    tokens, shape = cache
    dtable = np.zeros(shape, dtype=dx.dtype)
    np.add.at(dtable, tokens.reshape(-1), dx.reshape(-1, shape[1]))
    unread = np.setdiff1d(np.arange(shape[0]), tokens)[0]
    dtable[unread] += dx.reshape(-1, shape[1])[0]
    return None, dtable


@pytest.mark.parametrize("large", [False, True])
@pytest.mark.parametrize("wrong", [_rows_shifted, _assigned_not_added, _also_an_unread_row])
def test_a_wrong_lookup_backward_fails_at_the_lookup(setup, monkeypatch, large, wrong):
    """The numeric side moves only the rows the tokens read; the analytic side dots every row,
    so gradient put in rows no token reads is still caught."""
    if large:
        monkeypatch.setattr(directional, "LARGE", 16)
        monkeypatch.setattr(directions, "LARGE", 16)
    cfg, inputs, targets = setup
    params = xt_core.init_params(cfg, dtype=np.float32)
    lookup = {node.name: wrong for node in xt_core.build_tape(cfg) if node.kind == "embedding"}
    trace = xt_core.forward_backward(cfg, params, inputs, targets, backward_override=lookup)
    assert failing_steps(trace) == ["backward embedding"]


def test_moving_only_the_looked_up_rows_gives_the_losses_of_the_whole_moved_table(setup, every_tensor_large):
    cfg, inputs, targets = setup
    trace = xt_core.forward_backward(cfg, xt_core.init_params(cfg, dtype=np.float32), inputs, targets)
    replays = gradcheck._Replays(trace.nodes, twin_of(trace).values)
    table = twin_of(trace).values["tok_embeddings"]
    direction = directions.Direction(5, {"tok_embeddings": table})
    rows = directions.lookup_rows(trace.nodes[0], {"tok_embeddings": table}, inputs, direction, 1e-4)
    by_rows = replays.losses(1, [{"embedding": y} for y in rows])
    whole = [directions.moved_whole(table, direction, "tok_embeddings", s) for s in (1e-4, -1e-4)]
    assert by_rows == replays.losses(0, [{}, {}], [(0, 1, w) for w in whole]) and by_rows[0] != by_rows[1]
