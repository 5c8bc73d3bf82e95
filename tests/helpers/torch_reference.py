"""The model of xt_core written directly in PyTorch: the reference for the parity tests
and the benchmarks. Imports torch; never imported by xt_core or the app."""

import math

import torch
import torch.nn.functional as F

import xt_core
from xt_core import names


def torch_step(cfg: xt_core.Config, params, inputs, targets, keep_intermediates: bool = True):
    """Loss, parameter grads and named intermediates (with their grads) from autograd.
    keep_intermediates=False skips retain_grad (plain autograd, for timing)."""
    P = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
    return torch_step_of_leaves(cfg, P, inputs, targets, keep_intermediates)


def _projections(cfg, P, keep, n, L):
    """q, k, v: n W (+ b: Qwen2's qkv_bias), q and k then RMS-normalised per head (Qwen3's qk_norm)."""
    a, made = f"layers.{L}.attention", {}
    for x in "qkv":
        made[x] = keep(f"layers.{{L}}.attention.{x}", n @ P[f"{a}.w{x}"], L)
        if cfg.qkv_bias:
            made[x] = keep(f"layers.{{L}}.attention.{x}_biased", made[x] + P[f"{a}.b{x}"], L)
    if cfg.qk_norm:
        for x, heads in (("q", cfg.n_head), ("k", cfg.n_kv_head)):
            h = made[x].unflatten(-1, (heads, cfg.head_dim))
            h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + cfg.norm_eps) * P[f"{a}.{x}_norm"]
            made[x] = keep(f"layers.{{L}}.attention.{x}_norm.out", h.flatten(-2), L)
    return made["q"], made["k"], made["v"]


def torch_step_of_leaves(cfg, P, inputs, targets, keep_intermediates):
    """torch_step on parameters already torch leaves (requires_grad): what the benchmarks time,
    without the conversion from NumPy."""
    tokens, tgt = torch.tensor(inputs), torch.tensor(targets)
    B, T = tokens.shape
    H, K, hd, eps = cfg.n_head, cfg.n_kv_head, cfg.head_dim, cfg.norm_eps
    named = {}

    def keep(pattern, t, layer=None):  # a pattern of xt_core.names: the tensor the tape records there
        name = names.entry(pattern).name(layer)
        if keep_intermediates:
            t.retain_grad()
            named[name] = t
        return t

    def rms(x, g):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * g

    inv_freq = cfg.rope_theta ** (-torch.arange(0, hd, 2, dtype=torch.float64) / hd)
    angle = torch.arange(T, dtype=torch.float64)[:, None] * inv_freq
    dtype = P["norm"].dtype
    cos, sin = angle.cos()[:, None, :].to(dtype), angle.sin()[:, None, :].to(dtype)

    def rope(x, n):
        pairs = x.view(B, T, n, hd // 2, 2)
        a, b = pairs[..., 0], pairs[..., 1]
        return torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).reshape(B, T, n * hd)

    def heads(x, n):
        return x.view(B, T, n, hd).transpose(1, 2)

    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
    x = keep("embedding", P["tok_embeddings"][tokens])
    for L in range(cfg.n_layer):
        p, a, f = f"layers.{L}", f"layers.{L}.attention", f"layers.{L}.feed_forward"
        n = keep("layers.{L}.attention_norm.out", rms(x, P[f"{p}.attention_norm"]), L)
        q, k, v = _projections(cfg, P, keep, n, L)
        qr, kr = keep("layers.{L}.attention.q_rot", rope(q, H), L), keep("layers.{L}.attention.k_rot", rope(k, K), L)
        kh = heads(kr, K).repeat_interleave(H // K, dim=1)  # query head h reads kv head h // G
        vh = heads(v, K).repeat_interleave(H // K, dim=1)
        scores = keep(
            "layers.{L}.attention.scores",
            (heads(qr, H) @ kh.transpose(-1, -2) / math.sqrt(hd)).masked_fill(mask, -math.inf),
            L,
        )
        probs = keep("layers.{L}.attention.probs", scores.softmax(-1), L)
        o = keep("layers.{L}.attention.heads", probs @ vh, L)
        concat = keep("layers.{L}.attention.concat", o.transpose(1, 2).reshape(B, T, H * hd), L)
        out = keep("layers.{L}.attention.out", concat @ P[f"{a}.wo"], L)
        h = keep("layers.{L}.attention_residual", x + out, L)
        m = keep("layers.{L}.ffn_norm.out", rms(h, P[f"{p}.ffn_norm"]), L)
        gate, up = (
            keep("layers.{L}.feed_forward.gate", m @ P[f"{f}.w1"], L),
            keep("layers.{L}.feed_forward.up", m @ P[f"{f}.w3"], L),
        )
        s = keep("layers.{L}.feed_forward.swiglu", F.silu(gate) * up, L)
        x = keep("layers.{L}.ffn_residual", h + keep("layers.{L}.feed_forward.out", s @ P[f"{f}.w2"], L), L)
    nf = keep("norm.out", rms(x, P["norm"]))
    head = P["tok_embeddings"] if cfg.tie_embeddings else P["output"]
    logits = keep("logits", nf @ head.T)
    probs = keep(names.OUTPUT_PROBS, logits.softmax(-1))
    token_loss = keep("token_loss", -probs.gather(-1, tgt[..., None])[..., 0].log())
    loss = token_loss.mean()
    loss.backward()
    reference = F.cross_entropy(logits.detach().reshape(-1, cfg.vocab_size), tgt.reshape(-1))
    return loss, reference, P, named
