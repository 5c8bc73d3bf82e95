"""The bug lab: every catalogue fault is caught by the per-step check at exactly its own op."""

from dataclasses import replace

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
    cfg = xt_core.PRESETS["tiny"]  # tied and grouped-query: every Llama fault applies
    inputs, targets = make_batch(cfg, 2, 10, seed=4)
    return cfg, inputs, targets


# GPT-2's faults (xt_core/lab/faults_gpt2.py), on GPT-2 with every bias
GPT2 = xt_core.PRESETS["gpt2-tiny"]


def _model_of(name: str, setup):
    """The tiny model a fault applies to, and its batch: Llama's, or GPT-2's for a GPT-2 fault."""
    if CATALOGUE[name].family != "gpt2":
        return setup
    return (GPT2, *make_batch(GPT2, 2, 10, seed=4))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_no_fault_every_step_passes(setup, dtype):
    cfg, inputs, targets = setup
    trace = xt_core.forward_backward(cfg, xt_core.init_params(cfg, dtype=dtype), inputs, targets)
    assert first_failing_backward_step(trace) is None


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_fault_is_caught_at_its_own_op_and_the_loss_is_unchanged(setup, name, dtype):
    cfg, inputs, targets = _model_of(name, setup)
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
    for fault in CATALOGUE.values():
        cfg = GPT2 if fault.family == "gpt2" else xt_core.PRESETS["tiny"]
        assert fault.correct and fault.faulty  # its words are the app's (app/words/locales/*/buglab.ftl)
        assert fault.step_name(cfg.n_layer - 1) in set(tensor_names(cfg))


def test_faults_apply_to_the_family_whose_ops_they_rewrite():
    llama, gpt2, bare_gpt2 = xt_core.PRESETS["tiny"], GPT2, replace(GPT2, qkv_bias=False, o_bias=False, mlp_bias=False)
    on_llama = {name for name, fault in CATALOGUE.items() if fault.requires(llama) is None}
    on_gpt2 = {name for name, fault in CATALOGUE.items() if fault.requires(gpt2) is None}
    on_bare_gpt2 = {name for name, fault in CATALOGUE.items() if fault.requires(bare_gpt2) is None}
    gpt2_only, llama_only = {"layernorm_missing_mean", "bias_grad_one_row"}, {
        "rmsnorm_missing_projection", "rope_forward_rotation", "swiglu_silu_for_derivative"
    }  # fmt: skip
    assert gpt2_only <= on_gpt2 and not gpt2_only & on_llama
    assert llama_only <= on_llama and not llama_only & (on_gpt2 | on_bare_gpt2)
    unbiased = {"attention_out_reads_dres", "linear_dw_transposed"}  # a plain linear's backward
    assert unbiased <= on_bare_gpt2 and not unbiased & on_gpt2
    assert "bias_grad_one_row" not in on_bare_gpt2


@pytest.mark.parametrize("name", ["attention_out_reads_dres", "linear_dw_transposed", "softmax_missing_sum_term"])
def test_a_llama_fault_that_applies_to_gpt2_is_caught_at_its_op(name):
    cfg = replace(GPT2, qkv_bias=False, o_bias=False)
    inputs, targets = make_batch(cfg, 2, 10, seed=4)
    trace = planted(cfg, xt_core.init_params(cfg), inputs, targets, [name])
    assert first_failing_backward_step(trace).name == CATALOGUE[name].step_name(cfg.n_layer - 1)


def test_the_gqa_fault_writes_heads_in_the_notation():
    # docs/notation.md: m a query head, κ a kv head, G query heads per kv head (h is the residual stream).
    fault = CATALOGUE["gqa_kv_not_summed"]
    assert fault.correct == "dv[κ] = sum over the query heads m with ⌊m/G⌋ = κ of P[m]^T @ do[m]"
    assert fault.faulty.startswith("dv[κ] = P[κ·G]^T @ do[κ·G]")
