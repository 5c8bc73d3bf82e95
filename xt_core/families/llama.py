"""The Llama family's model (RMSNorm, RoPE, SwiGLU, grouped-query attention), as a tape of ops:

    x = tok_embeddings[tokens]
    per layer L:  h = x + Wo(attend(softmax(scores(RoPE(n Wq), RoPE(n Wk))), n Wv)),  n = RMSNorm(x)
                  x = h + W2(silu(m W1) * (m W3)),                                      m = RMSNorm(h)
    logits = RMSNorm(x) @ W^T   (W = tok_embeddings when tied, else output)
    loss = mean over all B*T positions of -log softmax(logits)[target]

Each node is named after the tensor it produces, a row of the family's table of recorded tensors
(xt_core/families/llama_names.py: its axes, role and words); parameter names follow
Meta/llama2.c. A head is head_dim wide: n_embd / n_head unless the config sets it (Qwen3), so Wq is
(C, H*hd) and Wo (H*hd, C), C and H*hd free to differ.

Qwen is this script with two parts switched on, not a family of its own: everything else of
Qwen2/2.5 and Qwen3 (RMSNorm, RoPE, SwiGLU, GQA, tied or untied head) is Llama's, so a family would
repeat this script and its rows to change two lines. Qwen2 (qkv_bias): q = n Wq + bq, k and v
alike (Wo without bias); Qwen3 (qk_norm): q = RMSNorm_hd(n Wq) per head with one gain of width hd
(k alike), before RoPE, and usually a head_dim of its own.
"""

from __future__ import annotations

from xt_core.config import Config
from xt_core.families.llama_names import ROWS
from xt_core.families.script import recorder
from xt_core.tape import Node

FAMILY = "llama"


def param_shapes(cfg: Config) -> dict[str, tuple[int, ...]]:
    """Every parameter's name and shape; Linear weights are (in, out): y = x @ W."""
    C, hd = cfg.n_embd, cfg.head_dim
    shapes: dict[str, tuple[int, ...]] = {"tok_embeddings": (cfg.vocab_size, C)}
    for L in range(cfg.n_layer):
        p = f"layers.{L}"
        shapes[f"{p}.attention_norm"] = (C,)
        shapes[f"{p}.attention.wq"] = (C, cfg.n_head * hd)
        shapes[f"{p}.attention.wk"] = (C, cfg.n_kv_head * hd)
        shapes[f"{p}.attention.wv"] = (C, cfg.n_kv_head * hd)
        if cfg.qkv_bias:  # Qwen2
            shapes |= {f"{p}.attention.bq": (cfg.n_head * hd,), f"{p}.attention.bk": (cfg.n_kv_head * hd,)}
            shapes[f"{p}.attention.bv"] = (cfg.n_kv_head * hd,)
        if cfg.qk_norm:  # Qwen3: one gain per projection, shared by its heads
            shapes |= {f"{p}.attention.q_norm": (hd,), f"{p}.attention.k_norm": (hd,)}
        shapes[f"{p}.attention.wo"] = (cfg.n_head * hd, C)
        shapes[f"{p}.ffn_norm"] = (C,)
        shapes[f"{p}.feed_forward.w1"] = (C, cfg.ffn_hidden)
        shapes[f"{p}.feed_forward.w3"] = (C, cfg.ffn_hidden)
        shapes[f"{p}.feed_forward.w2"] = (cfg.ffn_hidden, C)
    shapes["norm"] = (C,)
    if not cfg.tie_embeddings:
        shapes["output"] = (cfg.vocab_size, C)
    return shapes


def _projections(cfg: Config, add, n: str, a: str, L: int) -> tuple[str, str, str]:
    """q, k, v from the norm's output n: n Wq (+ bq: Qwen2), then per head RMSNorm (Qwen3), keys
    alike; values n Wv (+ bv)."""
    made = []
    for x, w in (("q", "wq"), ("k", "wk"), ("v", "wv")):
        made.append(add(f"layers.{{L}}.attention.{x}", "linear", [n, f"{a}.{w}"], L))
        if cfg.qkv_bias:
            made[-1] = add(f"layers.{{L}}.attention.{x}_biased", "bias", [made[-1], f"{a}.b{x}"], L)
    q, k, v = made
    if cfg.qk_norm:
        eps = cfg.norm_eps
        q = add("layers.{L}.attention.q_norm.out", "qk_norm", [q, f"{a}.q_norm"], L, n_heads=cfg.n_head, eps=eps)
        k = add("layers.{L}.attention.k_norm.out", "qk_norm", [k, f"{a}.k_norm"], L, n_heads=cfg.n_kv_head, eps=eps)
    return q, k, v


def build_tape(cfg: Config) -> list[Node]:
    """The step's ops in execution order; each node is named after the tensor it produces, a
    pattern of the family's rows of recorded tensors."""
    nodes, add = recorder(ROWS)

    eps = cfg.norm_eps
    x = add("embedding", "embedding", ["tokens", "tok_embeddings"])
    for L in range(cfg.n_layer):
        p, a, f = f"layers.{L}", f"layers.{L}.attention", f"layers.{L}.feed_forward"  # parameter names
        n = add("layers.{L}.attention_norm.out", "rmsnorm", [x, f"{p}.attention_norm"], L, eps=eps)
        q, k, v = _projections(cfg, add, n, a, L)
        q = add("layers.{L}.attention.q_rot", "rope", [q], L, n_heads=cfg.n_head, theta=cfg.rope_theta)
        k = add("layers.{L}.attention.k_rot", "rope", [k], L, n_heads=cfg.n_kv_head, theta=cfg.rope_theta)
        s = add("layers.{L}.attention.scores", "scores", [q, k], L, n_head=cfg.n_head, n_kv_head=cfg.n_kv_head)
        pr = add("layers.{L}.attention.probs", "softmax", [s], L)
        o = add("layers.{L}.attention.heads", "attend", [pr, v], L, n_kv_head=cfg.n_kv_head)
        o = add("layers.{L}.attention.concat", "merge_heads", [o], L)
        o = add("layers.{L}.attention.out", "linear", [o, f"{a}.wo"], L)
        h = add("layers.{L}.attention_residual", "residual", [x, o], L)
        m = add("layers.{L}.ffn_norm.out", "rmsnorm", [h, f"{p}.ffn_norm"], L, eps=eps)
        gate = add("layers.{L}.feed_forward.gate", "linear", [m, f"{f}.w1"], L)
        up = add("layers.{L}.feed_forward.up", "linear", [m, f"{f}.w3"], L)
        s = add("layers.{L}.feed_forward.swiglu", "swiglu", [gate, up], L)
        o = add("layers.{L}.feed_forward.out", "linear", [s, f"{f}.w2"], L)
        x = add("layers.{L}.ffn_residual", "residual", [h, o], L)
    x = add("norm.out", "rmsnorm", [x, "norm"], eps=eps)
    logits = add("logits", "unembed", [x, "tok_embeddings" if cfg.tie_embeddings else "output"])
    probs = add("output_probs", "softmax", [logits])
    token_loss = add("token_loss", "token_loss", [probs, "targets"])
    add("loss", "mean", [token_loss])
    return nodes
