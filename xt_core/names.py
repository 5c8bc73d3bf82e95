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
