"""Tiny random Qwen2 and Qwen3 models of transformers, made in the test (no download), with the
xt Config of each: the parity tests' (tests/core/test_qwen_parity.py) and the importer's
(tests/core/checkpoint/test_hf_qwen.py). torch and transformers are imported when a model is made."""

from __future__ import annotations

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


def hf_model(case: str, seed: int = 0):
    """A random model of the case, float64, with unit-scale activations (transformers' std 0.02
    init leaves attention uniform, hiding a head-order or RoPE mistake), norm gains away from 1
    and biases away from 0 (hiding a swapped gain or a dropped bias)."""
    import torch
    import transformers

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


def load_pretrained(directory):
    """transformers' model of a saved directory in float64, and the reference step's helpers
    (tests/helpers/hf_reference.py, which imports torch)."""
    import torch
    import transformers

    from tests.helpers import hf_reference

    transformers.logging.set_verbosity_error()
    return transformers.AutoModelForCausalLM.from_pretrained(directory, dtype=torch.float64), hf_reference
