"""Qwen2 and Qwen3 against transformers' own Qwen2ForCausalLM and Qwen3ForCausalLM, built
random-init here (tiny configs, no download): xt runs them as Llama's script with qkv_bias
(Qwen2's q/k/v biases) and qk_norm (Qwen3's per-head RMSNorm of q and k before RoPE, here with a
head_dim other than hidden_size / num_attention_heads) switched on, on the same weights mapped
to xt's layout (tests/helpers/hf_reference.py: q/k rows, biases and norm gains from rotate-half
halves to interleaved pairs). Loss, logits and every parameter's gradient are compared:

* with transformers as shipped, in float64 but for what it computes in float32 inside (RMSNorm,
  RoPE's angles, the eager softmax: tests/core/checkpoint/test_hf_reference.py), at float32's
  round-off (loss 1e-5, logits and gradients 1e-4 normwise);
* with those float32 parts patched to float64 (the same formulas), at float64's: loss 1e-10,
  logits and gradients 1e-8; and every step of that trace passes its own gradient check
  (xt_core.checks.gradcheck.check_record, the app's: central differences in float64).

Skips without torch and transformers, except in CI (XT_REQUIRE_TORCH=1)."""

import numpy as np
import pytest

import xt_core
from tests.helpers.env import skip_unless_installed
from tests.helpers.qwen_models import CASES, SHAPE, hf_model
from xt_core.checks.gradcheck import check_record

pytestmark = pytest.mark.torch
skip_unless_installed("torch", "transformers", hint="pip install -e '.[reference]'")
torch = transformers = hf = None  # imported by load_transformers, when this module's tests run


@pytest.fixture(autouse=True, scope="module")
def load_transformers():
    global torch, transformers, hf
    import torch
    import transformers

    from tests.helpers import hf_reference as hf

    transformers.logging.set_verbosity_error()


def compare(case: str, loss_tol: float, tol: float):
    cfg = xt_core.Config(**SHAPE, **CASES[case][2])
    model = hf_model(case)
    tokens = np.random.default_rng(1).integers(0, cfg.vocab_size, size=(3, 13))
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    reference = hf.hf_step(model, cfg, tokens, with_weights=True)
    assert set(reference["weights"]) == set(xt_core.param_shapes(cfg))  # every parameter, each once
    trace = xt_core.forward_backward(cfg, reference["weights"], inputs, targets)
    assert abs(trace.loss - reference["loss"]) <= loss_tol
    assert hf.normwise(trace["logits"], reference["logits"]) <= tol
    for name, grad in reference["grads"].items():
        assert hf.normwise(trace.grads[name], grad) <= tol, name
    return trace


@pytest.mark.parametrize("case", sorted(CASES))
def test_loss_logits_and_every_gradient_match_transformers_to_float32_round_off(case):
    compare(case, 1e-5, 1e-4)


@pytest.mark.parametrize("case", sorted(CASES))
def test_with_transformers_float32_parts_in_float64_they_match_to_float64_round_off(case, monkeypatch):
    family = CASES[case][0]
    module = getattr(transformers.models, family.lower())
    modeling = getattr(module, f"modeling_{family.lower()}")
    monkeypatch.setattr(getattr(modeling, f"{family}RMSNorm"), "forward", hf.rms_norm_float64)
    monkeypatch.setattr(getattr(modeling, f"{family}RotaryEmbedding"), "forward", hf.rope_float64)
    trace = compare(case, 1e-10, 1e-8)
    kinds = {record.kind for record in trace.records}
    assert ("bias" in kinds, "qk_norm" in kinds) == (family == "Qwen2", family == "Qwen3")
    # and on transformers' weights, every step's own check, as the app runs them (float64 gradcheck)
    failing = [r.name for r in trace.records if not check_record(trace, r.index).passed]
    assert not failing
