"""The GPT-2 family's model (LayerNorm, GELU, learned absolute positions, biases), as a tape of ops:

    x = tok_embeddings[tokens] + pos_embeddings[:T]
    per layer L:  h = x + Wo(attend(softmax(scores(n Wq + bq, n Wk + bk)), n Wv + bv)) + bo,  n = LayerNorm(x)
                  x = h + W2 gelu(m W1 + b1) + b2,                                         m = LayerNorm(h)
    logits = LayerNorm(x) @ tok_embeddings^T   (the LM head tied to the embedding, as GPT-2's; or `output`)
    loss = mean over all B*T positions of -log softmax(logits)[target]

LayerNorm: n = (x - mean(x)) / sqrt(var(x) + eps) * g + beta. GELU is the tanh approximation
GPT-2 was trained with (activation "gelu_tanh", transformers' `gelu_new`) or the exact erf form of
nanoGPT's `nn.GELU()` ("gelu"). Each bias is there or not as the config says (norm_bias, qkv_bias,
o_bias, mlp_bias: GPT-2 has all, nanoGPT's `bias=False` none). No RoPE: position enters once, as a
learned (seq_len, C) table added to the token embedding.

GPT-2's fused QKV projection is split at import. GPT-2 stores one c_attn matrix (C, 3C) and splits
its product into q, k and v; `[q | k | v] = n [Wq | Wk | Wv]` column block by column block, so the
fused matmul is three matmuls of the same numbers, and the split a slicing without math (its
backward a concatenation). Split, GPT-2's attention is the same steps as Llama's (q, k, v, scores,
softmax, ...) with the same names, each projection's gradient its own step, so what changes between
the two families (LayerNorm, GELU, positions, biases) is what differs in their step lists; the
importers (xt_core/checkpoint/gpt2_files.py) cut c_attn's columns and bias into Wq, Wk, Wv and bq,
bk, bv, and an export would concatenate them back.

Each node is named after the tensor it produces, a row of the family's table of recorded tensors
(xt_core/families/gpt2_names.py); parameter names follow Llama's where the role is the same
(tok_embeddings, layers.{L}.attention.wq, feed_forward.w1 for c_fc, w2 for the MLP's c_proj, norm
for ln_f), each bias beside its weight (attention.bq, feed_forward.b1, attention_norm_bias).
"""

from __future__ import annotations

from xt_core.config import Config
from xt_core.families.gpt2_names import ROWS
from xt_core.families.script import recorder
from xt_core.tape import Node

FAMILY = "gpt2"


def param_shapes(cfg: Config) -> dict[str, tuple[int, ...]]:
    """Every parameter's name and shape; Linear weights are (in, out): y = x @ W + b."""
    C, hd, F = cfg.n_embd, cfg.head_dim, cfg.ffn_hidden
    shapes: dict[str, tuple[int, ...]] = {"tok_embeddings": (cfg.vocab_size, C), "pos_embeddings": (cfg.seq_len, C)}

    def norm(name):
        shapes[name] = (C,)
        if cfg.norm_bias:
            shapes[f"{name}_bias"] = (C,)

    def linear(prefix, weight, bias, shape, with_bias):
        shapes[f"{prefix}.{weight}"] = shape
        if with_bias:
            shapes[f"{prefix}.{bias}"] = shape[1:]

    for L in range(cfg.n_layer):
        a, f = f"layers.{L}.attention", f"layers.{L}.feed_forward"
        norm(f"layers.{L}.attention_norm")
        linear(a, "wq", "bq", (C, cfg.n_head * hd), cfg.qkv_bias)
        linear(a, "wk", "bk", (C, cfg.n_kv_head * hd), cfg.qkv_bias)
        linear(a, "wv", "bv", (C, cfg.n_kv_head * hd), cfg.qkv_bias)
        linear(a, "wo", "bo", (cfg.n_head * hd, C), cfg.o_bias)
        norm(f"layers.{L}.ffn_norm")
        linear(f, "w1", "b1", (C, F), cfg.mlp_bias)
        linear(f, "w2", "b2", (F, C), cfg.mlp_bias)
    norm("norm")
    if not cfg.tie_embeddings:
        shapes["output"] = (cfg.vocab_size, C)
    return shapes


def build_tape(cfg: Config) -> list[Node]:
    """The step's ops in execution order; each node is named after the tensor it produces, a
    pattern of the family's rows of recorded tensors."""
    nodes, add = recorder(ROWS)

    def norm(pattern, x, gain, layer=None):
        inputs = [x, gain, f"{gain}_bias"] if cfg.norm_bias else [x, gain]
        return add(pattern, "layernorm", inputs, layer, eps=cfg.norm_eps)

    def linear(pattern, x, weight, bias, with_bias, layer):
        return (
            add(pattern, "linear_bias", [x, weight, bias], layer)
            if with_bias
            else add(pattern, "linear", [x, weight], layer)
        )

    x = add("embedding", "embedding", ["tokens", "tok_embeddings"])
    x = add("embedding_positions", "positions", [x, "pos_embeddings"])
    for L in range(cfg.n_layer):
        a, f = f"layers.{L}.attention", f"layers.{L}.feed_forward"  # parameter names
        n = norm("layers.{L}.attention_norm.out", x, f"layers.{L}.attention_norm", L)
        q = linear("layers.{L}.attention.q", n, f"{a}.wq", f"{a}.bq", cfg.qkv_bias, L)
        k = linear("layers.{L}.attention.k", n, f"{a}.wk", f"{a}.bk", cfg.qkv_bias, L)
        v = linear("layers.{L}.attention.v", n, f"{a}.wv", f"{a}.bv", cfg.qkv_bias, L)
        s = add("layers.{L}.attention.scores", "scores", [q, k], L, n_head=cfg.n_head, n_kv_head=cfg.n_kv_head)
        pr = add("layers.{L}.attention.probs", "softmax", [s], L)
        o = add("layers.{L}.attention.heads", "attend", [pr, v], L, n_kv_head=cfg.n_kv_head)
        o = add("layers.{L}.attention.concat", "merge_heads", [o], L)
        o = linear("layers.{L}.attention.out", o, f"{a}.wo", f"{a}.bo", cfg.o_bias, L)
        h = add("layers.{L}.attention_residual", "residual", [x, o], L)
        m = norm("layers.{L}.ffn_norm.out", h, f"layers.{L}.ffn_norm", L)
        up = linear("layers.{L}.feed_forward.up", m, f"{f}.w1", f"{f}.b1", cfg.mlp_bias, L)
        g = add("layers.{L}.feed_forward.gelu", cfg.activation, [up], L)
        o = linear("layers.{L}.feed_forward.out", g, f"{f}.w2", f"{f}.b2", cfg.mlp_bias, L)
        x = add("layers.{L}.ffn_residual", "residual", [h, o], L)
    x = norm("norm.out", x, "norm")
    logits = add("logits", "unembed", [x, "tok_embeddings" if cfg.tie_embeddings else "output"])
    probs = add("output_probs", "softmax", [logits])
    token_loss = add("token_loss", "token_loss", [probs, "targets"])
    add("loss", "mean", [token_loss])
    return nodes
