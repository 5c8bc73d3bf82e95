"""RMSNorm: n = x / sqrt(mean(x^2) + eps) * g, over the last axis (C) (docs/notation.md: x its input, n its output)."""

from __future__ import annotations

import numpy as np

RMSNORM_FORWARD_TEX = r"r = 1 \big/ \sqrt{\tfrac{1}{C}\textstyle\sum_k x_k^2 + \varepsilon}, \quad \hat{x} = r\,x, \quad n = \hat{x} \odot g"
RMSNORM_BACKWARD_TEX = r"\frac{\partial L}{\partial g} = \sum_{b,t} \frac{\partial L}{\partial n} \odot \hat{x}, \qquad \frac{\partial L}{\partial x} = r\Big(\frac{\partial L}{\partial \hat{x}} - \hat{x}\,\tfrac{1}{C}\textstyle\sum_k \frac{\partial L}{\partial \hat{x}_k}\hat{x}_k\Big), \quad \frac{\partial L}{\partial \hat{x}} = \frac{\partial L}{\partial n} \odot g"


def rmsnorm_forward(x: np.ndarray, gain: np.ndarray, eps: float):
    """x (B, T, C), gain (C,) -> y (B, T, C).  r (B, T, 1) = 1/sqrt(mean(x^2) + eps)."""
    r = 1.0 / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + x.dtype.type(eps))
    xhat = x * r
    return xhat * gain, (xhat, r, gain)


def rmsnorm_backward(dy: np.ndarray, cache):
    """Forward: y = xhat * gain, xhat = x * r.
    dgain = sum over (B, T) of dy * xhat.
    dx = r * (dxhat - xhat * mean(dxhat * xhat)): r depends on x too, which gives the
    projection term; forgetting it is a classic mistake (the bug lab has it)."""
    xhat, r, gain = cache
    C = xhat.shape[-1]
    dgain = np.einsum("btc,btc->c", dy, xhat)
    dx = dy * gain  # (B, T, C) dxhat, turned into dx in place: one buffer instead of five
    proj = np.einsum("btc,btc->bt", dx, xhat)[..., None] / dx.dtype.type(C)  # (B, T, 1) mean(dxhat * xhat)
    dx -= xhat * proj
    dx *= r
    return dx, dgain
