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
from xt_core.checks.gradcheck import check_record

pytestmark = pytest.mark.torch
skip_unless_installed("torch", "transformers", hint="pip install -e '.[reference]'")
torch = transformers = hf = None  # imported by load_transformers, when this module's tests run

SIZES = dict(vocab_size=40, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4)
CASES = {  # name: (transformers class, its config fields, xt's Config of the same model)
    "qwen2-gqa-tied": (
        "Qwen2",
        dict(num_key_value_heads=2, tie_word_embeddings=True, rms_norm_eps=1e-6),
        dict(n_kv_head=2, tie_embeddings=True, norm_eps=1e-6, qkv_bias=True),
    ),
    "qwen2-mha-untied": (
        "Qwen2",
        dict(num_key_value_heads=4, tie_word_embeddings=False, rms_norm_eps=1e-5, rope_theta=1e6),
        dict(n_kv_head=4, tie_embeddings=False, norm_eps=1e-5, rope_theta=1e6, qkv_bias=True),
    ),
    "qwen3-wide-heads-untied": (  # heads 16 wide where hidden_size / num_attention_heads = 8
        "Qwen3",
        dict(num_key_value_heads=2, head_dim=16, tie_word_embeddings=False, rms_norm_eps=1e-6),
        dict(n_kv_head=2, head_dim=16, tie_embeddings=False, norm_eps=1e-6, qk_norm=True),
    ),
    "qwen3-narrow-heads-tied-mqa": (  # heads 6 wide
        "Qwen3",
        dict(num_key_value_heads=1, head_dim=6, tie_word_embeddings=True, rms_norm_eps=1e-6, rope_theta=1e6),
        dict(n_kv_head=1, head_dim=6, tie_embeddings=True, norm_eps=1e-6, rope_theta=1e6, qk_norm=True),
    ),
}
SHAPE = dict(vocab_size=40, n_embd=32, ffn_hidden=48, n_layer=2, n_head=4, seq_len=16)


@pytest.fixture(autouse=True, scope="module")
def load_transformers():
    global torch, transformers, hf
    import torch
    import transformers

    from tests.helpers import hf_reference as hf

    transformers.logging.set_verbosity_error()


def hf_model(case: str, seed: int = 0):
    """A random model of the case, float64, with unit-scale activations (transformers' std 0.02
    init leaves attention uniform, hiding a head-order or RoPE mistake), norm gains away from 1
    and biases away from 0 (hiding a swapped gain or a dropped bias)."""
    family, fields, _ = CASES[case]
    fields = dict(fields)
    rope = {"rope_parameters": {"rope_type": "default", "rope_theta": fields.pop("rope_theta", 1e4)}}
    config = getattr(transformers, f"{family}Config")(**SIZES, max_position_embeddings=16, **fields, **rope)
    torch.manual_seed(seed)
    model = getattr(transformers, f"{family}ForCausalLM")(config).double()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(".bias"):
                p.copy_(0.5 * torch.randn_like(p))
            else:
                p.copy_(
                    1 + 0.3 * torch.randn_like(p) if p.ndim == 1 else 1.5 * torch.randn_like(p) / p.shape[-1] ** 0.5
                )
    return model.eval()


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
