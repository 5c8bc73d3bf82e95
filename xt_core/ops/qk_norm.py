"""QK-norm (Qwen3): an RMSNorm of each head's query (or key) over its hd features, before RoPE,
with one gain g of width hd shared by every head. It bounds q·k, so no head's scores can grow
without limit (the attention-logit growth it was introduced against).

Dimensions: B sequences, T positions, n heads (H for queries, K for keys), hd = head width;
the input is the projection (B, T, n·hd), head m holding features m·hd … (m+1)·hd − 1.
x here is a head's query or key before the norm and n its output (docs/notation.md, RMSNorm).
"""

from __future__ import annotations

import numpy as np

QK_NORM_FORWARD_TEX = r"r_{m} = 1 \big/ \sqrt{\tfrac{1}{d_h}\textstyle\sum_{j<d_h} x_{m,j}^2 + \varepsilon}, \quad \hat{x}_{m} = r_{m}\,x_{m}, \quad n_{m} = \hat{x}_{m} \odot g \quad (\text{each head } m \text{ of } q \text{ or } k)"
QK_NORM_BACKWARD_TEX = r"\frac{\partial L}{\partial g} = \sum_{b,t,m} \frac{\partial L}{\partial n_{m}} \odot \hat{x}_{m}, \qquad \frac{\partial L}{\partial x_{m}} = r_{m}\Big(\frac{\partial L}{\partial \hat{x}_{m}} - \hat{x}_{m}\,\tfrac{1}{d_h}\textstyle\sum_j \frac{\partial L}{\partial \hat{x}_{m,j}}\hat{x}_{m,j}\Big), \quad \frac{\partial L}{\partial \hat{x}_{m}} = \frac{\partial L}{\partial n_{m}} \odot g"


def qk_norm_forward(x: np.ndarray, gain: np.ndarray, n_heads: int, eps: float):
    """x (B, T, n_heads*hd), gain (hd,) -> y (B, T, n_heads*hd): per (b, t, head),
    r (B, T, n_heads, 1) = 1/sqrt(mean over hd of x^2 + eps), y = x * r * gain."""
    B, T, width = x.shape
    heads = x.reshape(B, T, n_heads, width // n_heads)
    r = 1.0 / np.sqrt(np.mean(heads * heads, axis=-1, keepdims=True) + x.dtype.type(eps))
    xhat = heads * r
    return (xhat * gain).reshape(B, T, width), (xhat, r, gain)


def qk_norm_backward(dy: np.ndarray, cache):
    """Forward: y = xhat * gain per head, xhat = x * r.
    dgain = sum over (B, T, heads) of dy * xhat: the one gain is read by every head.
    dx = r * (dxhat - xhat * mean over hd of (dxhat * xhat)), dxhat = dy * gain: RMSNorm's
    backward head by head (r depends on the head's own x, which gives the projection term)."""
    xhat, r, gain = cache
    B, T, n_heads, hd = xhat.shape
    dn = dy.reshape(B, T, n_heads, hd)
    dgain = np.einsum("btmj,btmj->j", dn, xhat)
    dx = dn * gain  # (B, T, n_heads, hd) dxhat, turned into dx in place
    proj = np.einsum("btmj,btmj->btm", dx, xhat)[..., None] / dx.dtype.type(hd)  # mean(dxhat * xhat)
    dx -= xhat * proj
    dx *= r
    return dx.reshape(B, T, n_heads * hd), dgain
