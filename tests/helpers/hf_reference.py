"""The reference step for GGUF files: transformers loads the .gguf (dequantized to float32), torch
autograd gives logits, the mean cross-entropy and every parameter's gradient, mapped to xt's
names and layout. Imports torch; used only by tests that skip without it."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import torch

import xt_core
from tests.helpers.real_model import transformers_reads_gguf_quickly

_HF_LAYER = {
    "attention_norm": "input_layernorm",
    "attention.wq": "self_attn.q_proj",
    "attention.wk": "self_attn.k_proj",
    "attention.wv": "self_attn.v_proj",
    "attention.wo": "self_attn.o_proj",
    "ffn_norm": "post_attention_layernorm",
    "feed_forward.w1": "mlp.gate_proj",
    "feed_forward.w3": "mlp.up_proj",
    "feed_forward.w2": "mlp.down_proj",
}


_QWEN2_BIASES = {
    "attention.bq": "self_attn.q_proj",
    "attention.bk": "self_attn.k_proj",
    "attention.bv": "self_attn.v_proj",
}
_QWEN3_NORMS = {"attention.q_norm": "self_attn.q_norm", "attention.k_norm": "self_attn.k_norm"}


def hf_names(cfg: xt_core.Config) -> dict[str, str]:
    """xt parameter -> transformers parameter (tied: lm_head is embed_tokens, one parameter);
    Qwen2's q/k/v biases and Qwen3's QK-norm gains where the config has them."""
    names = {"tok_embeddings": "model.embed_tokens.weight", "norm": "model.norm.weight"}
    for L in range(cfg.n_layer):
        for name, hf in _HF_LAYER.items():
            names[f"layers.{L}.{name}"] = f"model.layers.{L}.{hf}.weight"
        for name, hf in (_QWEN2_BIASES if cfg.qkv_bias else {}).items():
            names[f"layers.{L}.{name}"] = f"model.layers.{L}.{hf}.bias"
        for name, hf in (_QWEN3_NORMS if cfg.qk_norm else {}).items():
            names[f"layers.{L}.{name}"] = f"model.layers.{L}.{hf}.weight"
    if not cfg.tie_embeddings:
        names["output"] = "lm_head.weight"
    return names


def to_xt_layout(cfg: xt_core.Config, name: str, value: np.ndarray) -> np.ndarray:
    """A transformers weight (or its gradient) in xt's layout: q/k rows (and Qwen2's q/k biases,
    Qwen3's q/k norm gains, one head wide) from rotate-half halves back to interleaved pairs,
    Linear weights (out, in) -> (in, out)."""
    heads = {"attention.wq": cfg.n_head, "attention.wk": cfg.n_kv_head, "attention.bq": cfg.n_head}
    heads |= {"attention.bk": cfg.n_kv_head, "attention.q_norm": 1, "attention.k_norm": 1}
    n_heads = heads.get(name.split(".", 2)[-1])
    if n_heads:
        out, rest = value.shape[0], value.shape[1:]
        value = value.reshape(n_heads, 2, out // n_heads // 2, *rest).swapaxes(1, 2).reshape(out, *rest)
    if value.ndim == 2 and name.startswith("layers."):
        value = value.T
    return np.ascontiguousarray(value)


def load_hf(path: Path):
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging

    logging.disable_progress_bar()
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    with transformers_reads_gguf_quickly():
        model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
    model.eval()
    return model


def hf_step(model, cfg: xt_core.Config, tokens: np.ndarray, with_weights: bool = False) -> dict:
    """tokens (n_seq, T + 1): inputs tokens[:, :-1], targets tokens[:, 1:], as xt's step.
    Returns logits (n_seq, T, V), loss, grads {xt name: array} (and weights when asked)."""
    inputs, targets = torch.tensor(tokens[:, :-1]), torch.tensor(tokens[:, 1:])
    model.zero_grad(set_to_none=True)
    logits = model(inputs).logits
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    loss.backward()
    params = dict(model.named_parameters())
    out = {"logits": logits.detach().numpy(), "loss": float(loss.detach()), "grads": {}, "weights": {}}
    for name, hf in hf_names(cfg).items():
        out["grads"][name] = to_xt_layout(cfg, name, params[hf].grad.numpy())
        if with_weights:
            out["weights"][name] = to_xt_layout(cfg, name, params[hf].detach().numpy())
    return out


def rms_norm_float64(self, h):
    """An HF RMSNorm's forward in the input's dtype (transformers' computes in float32 inside)."""
    return self.weight * (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.variance_epsilon))


def rope_float64(self, x, position_ids):
    """An HF rotary embedding's cos and sin from float64 angles (transformers' are float32)."""
    theta, dim = self.config.rope_parameters["rope_theta"], 2 * self.inv_freq.numel()
    inv_freq = theta ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    angle = torch.cat([position_ids[..., None].double() * inv_freq] * 2, dim=-1)
    return (angle.cos() * self.attention_scaling).to(x.dtype), (angle.sin() * self.attention_scaling).to(x.dtype)


def normwise(ours: np.ndarray, reference: np.ndarray) -> float:
    """max |ours - reference| / max |reference|."""
    return float(np.max(np.abs(ours - reference)) / max(float(np.max(np.abs(reference))), 1e-30))
