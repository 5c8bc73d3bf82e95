"""The bug lab: every catalogue fault is caught by the per-step check at exactly its own op."""

import numpy as np
import pytest

import xt_core
from tests.helpers.specs import make_batch
from xt_core.checks.gradcheck import check_record
from xt_core.lab.faults import CATALOGUE, overrides
from xt_core.names import tensor_names


def planted(cfg, params, inputs, targets, names, layer=None):
    """The step with the named faults, handed in as the bug lab hands them: an override table."""
    return xt_core.forward_backward(cfg, params, inputs, targets, backward_override=overrides(cfg, names, layer))


def first_failing_backward_step(trace):
    for record in trace.records:
        if record.phase == "backward" and not check_record(trace, record.index).passed:
            return record
    return None


@pytest.fixture(scope="module")
def setup():
    cfg = xt_core.PRESETS["tiny"]  # tied and grouped-query: every fault applies
    inputs, targets = make_batch(cfg, 2, 10, seed=4)
    return cfg, inputs, targets


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_no_fault_every_step_passes(setup, dtype):
    cfg, inputs, targets = setup
    trace = xt_core.forward_backward(cfg, xt_core.init_params(cfg, dtype=dtype), inputs, targets)
    assert first_failing_backward_step(trace) is None


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_fault_is_caught_at_its_own_op_and_the_loss_is_unchanged(setup, name, dtype):
    cfg, inputs, targets = setup
    params = xt_core.init_params(cfg, dtype=dtype)
    clean = xt_core.forward_backward(cfg, params, inputs, targets)
    faulty = planted(cfg, params, inputs, targets, [name])
    assert faulty.loss == clean.loss
    for tensor in clean.tensor_names():
        assert np.array_equal(faulty[tensor], clean[tensor])  # only backward changes
    first = first_failing_backward_step(faulty)
    assert first is not None and first.name == CATALOGUE[name].step_name(cfg.n_layer - 1)
    assert list(faulty.backward_override) == [first.name]  # the one step the table swaps


def test_fault_in_a_chosen_layer(setup):
    cfg, inputs, targets = setup
    trace = planted(cfg, xt_core.init_params(cfg), inputs, targets, ["softmax_missing_sum_term"], 0)
    assert first_failing_backward_step(trace).name == "layers.0.attention.probs"


def test_fault_errors_name_the_problem(setup):
    cfg, inputs, targets = setup
    params = xt_core.init_params(cfg)
    with pytest.raises(ValueError, match="unknown fault 'nope'"):
        planted(cfg, params, inputs, targets, ["nope"])
    with pytest.raises(ValueError, match=r"fault layer must be in \[0, 2\)"):
        planted(cfg, params, inputs, targets, ["batch_mean_twice"], 2)
    with pytest.raises(ValueError, match="both change step 'loss'"):
        planted(cfg, params, inputs, targets, ["batch_mean_twice", "batch_mean_missing"])
    mha = xt_core.Config(n_kv_head=4, tie_embeddings=False)
    mha_params = xt_core.init_params(mha)
    with pytest.raises(ValueError, match="grouped-query"):
        planted(mha, mha_params, inputs, targets, ["gqa_kv_not_summed"])
    with pytest.raises(ValueError, match="tied embeddings"):
        planted(mha, mha_params, inputs, targets, ["tied_embedding_one_contribution"])


def test_an_override_that_is_no_table_of_this_models_steps_is_refused(setup):
    cfg, inputs, targets = setup  # two layers: a third layer's step is a typo, not an override
    table = {"layers.2.attention.probs": CATALOGUE["softmax_missing_sum_term"].backward}
    with pytest.raises(ValueError, match=r"backward_override names no step of this model: layers\.2\.attention\.probs"):
        xt_core.forward_backward(cfg, xt_core.init_params(cfg), inputs, targets, backward_override=table)
    with pytest.raises(ValueError, match="backward_override must map step names to backward rules, got function"):
        xt_core.forward_backward(cfg, xt_core.init_params(cfg), inputs, targets, backward_override=lambda node: None)


def test_catalogue_entries_are_documented():
    cfg = xt_core.PRESETS["tiny"]
    steps = set(tensor_names(cfg))
    for fault in CATALOGUE.values():
        assert fault.correct and fault.faulty  # its words are the app's (app/words/locales/*/buglab.ftl)
        assert fault.step_name(cfg.n_layer - 1) in steps


def test_the_gqa_fault_writes_heads_in_the_notation():
    # docs/notation.md: m a query head, κ a kv head, G query heads per kv head (h is the residual stream).
    fault = CATALOGUE["gqa_kv_not_summed"]
    assert fault.correct == "dv[κ] = sum over the query heads m with ⌊m/G⌋ = κ of P[m]^T @ do[m]"
    assert fault.faulty.startswith("dv[κ] = P[κ·G]^T @ do[κ·G]")
