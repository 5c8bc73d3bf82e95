"""Every recorded tensor, in one place. `trace[name]` is the forward value and
`trace.grad(name)` its gradient (same shape); parameters work the same way.

B = n_seq, T = positions, C = n_embd, H = n_head, K = n_kv_head, hd = C/H, F = ffn_hidden,
V = vocab_size; L = layer index.

| name | shape | what |
|---|---|---|
| embedding | (B, T, C) | tok_embeddings[tokens] |
| layers.L.attention_norm.out | (B, T, C) | RMSNorm(x) * attention_norm |
| layers.L.attention.q / .k / .v | (B, T, H*hd) / (B, T, K*hd) / (B, T, K*hd) | n @ wq, n @ wk, n @ wv |
| layers.L.attention.q_rot / .k_rot | as q / k | after RoPE (interleaved pairs) |
| layers.L.attention.scores | (B, H, T, T) | q k^T / sqrt(hd), future masked to -inf |
| layers.L.attention.probs | (B, H, T, T) | softmax over keys |
| layers.L.attention.heads | (B, H, T, hd) | probs @ v, per head |
| layers.L.attention.concat | (B, T, H*hd) | heads side by side |
| layers.L.attention.out | (B, T, C) | concat @ wo |
| layers.L.attention_residual | (B, T, C) | h = x + attention.out |
| layers.L.ffn_norm.out | (B, T, C) | RMSNorm(h) * ffn_norm |
| layers.L.feed_forward.gate / .up | (B, T, F) | m @ w1, m @ w3 |
| layers.L.feed_forward.swiglu | (B, T, F) | silu(gate) * up |
| layers.L.feed_forward.out | (B, T, C) | swiglu @ w2 |
| layers.L.ffn_residual | (B, T, C) | h + feed_forward.out: the layer's output |
| norm.out | (B, T, C) | final RMSNorm |
| logits | (B, T, V) | norm.out @ W^T (W = tok_embeddings if tied, else output) |
| probs | (B, T, V) | softmax(logits) |
| token_loss | (B, T) | -log probs[target] |
| loss | () | mean of token_loss over all B*T positions |

Token ids are `tokens` and `targets`, (B, T) int64, and have no gradient.
"""

from __future__ import annotations

from xt_core.config import Config
from xt_core.model import build_tape


def tensor_names(cfg: Config) -> list[str]:
    """Every recorded forward tensor of a config, in execution order."""
    return [node.name for node in build_tape(cfg)]


def recorded_elements(cfg: Config, n_seq: int, T: int) -> int:
    """Entries of every recorded forward tensor (the table above) for a batch of n_seq × T."""
    C, H, K, hd, F, V = cfg.n_embd, cfg.n_head, cfg.n_kv_head, cfg.head_dim, cfg.ffn_hidden, cfg.vocab_size
    # norm outs, attention out, residuals, ffn out: 6 C; q, q_rot, heads, concat: 4 H hd;
    # k, v, k_rot: 3 K hd; scores and probs: 2 H T; gate, up, swiglu: 3 F
    per_layer = 6 * C + 4 * H * hd + 3 * K * hd + 2 * H * T + 3 * F
    return n_seq * T * (cfg.n_layer * per_layer + 2 * C + 2 * V + 1) + 1


# Measured Trace.nbytes over the recorded entries: about 2.2-2.3 × (value, gradient, and the
# contributions summed out of place); 2.5 keeps the estimate an upper bound.
RECORDED_COPIES = 2.5


def estimate_trace_bytes(cfg: Config, n_seq: int, T: int, itemsize: int = 4, shared_params: bool = False) -> int:
    """What Trace.nbytes() will report for this step, known before building it (an upper
    bound within 30%, tests/core/test_trace_bytes.py): values, gradients and contributions of
    every recorded tensor and parameter, and for a float32 trace (itemsize 4) its float64 twin
    (xt_core.checks.twin: the activations and their gradients in float64). shared_params: the weights
    are a loaded checkpoint's, borrowed by the trace (read-only), not held by it."""
    # a tied embedding table also gets two dense (V, C) contributions (lookup and unembed)
    tied = 2 * cfg.vocab_size * cfg.n_embd if cfg.tie_embeddings else 0
    recorded = recorded_elements(cfg, n_seq, T)
    params = (1 if shared_params else 2) * cfg.n_params()  # the weights (unless borrowed) and their gradients
    twin = 2 * recorded * 8 if itemsize == 4 else 0
    return int((RECORDED_COPIES * recorded + params + tied) * itemsize + twin)
