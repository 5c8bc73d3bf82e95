"""The bug lab's GPT-2 faults: the faulty backward rules of two classic mistakes of a hand-written
GPT-2 (llm.c's and "Let's build GPT"'s ops), rows of the catalogue in xt_core/lab/faults.py.

* LayerNorm's backward without its mean term: dx = r (dxhat - xhat mean(dxhat xhat)), RMSNorm's
  rule, as if mu did not depend on x. dx then no longer sums to zero over a position's features.
* A bias's gradient not summed over the batch: db = the last row's dY, one position's, where the
  bias was added at all N = B*T positions and receives the sum of their gradients.
"""

from __future__ import annotations

import numpy as np

from xt_core.config import Config
from xt_core.ops import OPS


def layernorm_missing_mean(dn, cache, grads, layer):
    """layernorm_backward (xt_core/ops/norm.py) with its `dx -= mean(dxhat)` left out."""
    xhat, r, gain, has_bias = cache
    dgain = np.einsum("btc,btc->c", dn, xhat)
    dxhat = dn * gain
    proj = np.einsum("btc,btc->bt", dxhat, xhat)[..., None] / dxhat.dtype.type(xhat.shape[-1])
    dx = r * (dxhat - xhat * proj)
    return (dx, dgain, np.sum(dn, axis=(0, 1))) if has_bias else (dx, dgain)


def bias_grad_one_row(dy, cache, grads, layer):
    """linear_bias_backward with db the last row's dY instead of the sum over every row."""
    dx, dweight, _ = OPS["linear_bias"].backward(dy, cache)
    return dx, dweight, dy.reshape(-1, dy.shape[-1])[-1].copy()


def needs_gpt2(cfg: Config) -> str | None:
    return None if cfg.family == "gpt2" else "needs the GPT-2 family (family = gpt2)"


def needs_gpt2_mlp_bias(cfg: Config) -> str | None:
    ok = cfg.family == "gpt2" and cfg.mlp_bias
    return None if ok else "needs the GPT-2 family with feed-forward biases (family = gpt2, mlp_bias = true)"
