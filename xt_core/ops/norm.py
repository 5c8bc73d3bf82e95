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


# --------------------------------------------------------------------------- LayerNorm (GPT-2)

LAYERNORM_FORWARD_TEX = r"\mu = \tfrac{1}{C}\textstyle\sum_j x_j, \quad r = 1 \big/ \sqrt{\tfrac{1}{C}\textstyle\sum_j (x_j - \mu)^2 + \varepsilon}, \quad \hat{x} = r\,(x - \mu), \quad n = \hat{x} \odot g + \beta"
LAYERNORM_BACKWARD_TEX = r"\frac{\partial L}{\partial g} = \sum_{b,t} \frac{\partial L}{\partial n} \odot \hat{x}, \quad \frac{\partial L}{\partial \beta} = \sum_{b,t} \frac{\partial L}{\partial n}, \quad \frac{\partial L}{\partial x} = r\Big(\frac{\partial L}{\partial \hat{x}} - \tfrac{1}{C}\textstyle\sum_j \frac{\partial L}{\partial \hat{x}_j} - \hat{x}\,\tfrac{1}{C}\textstyle\sum_j \frac{\partial L}{\partial \hat{x}_j}\hat{x}_j\Big)"


def layernorm_forward(x: np.ndarray, gain: np.ndarray, bias: np.ndarray | None = None, *, eps: float):
    """x (B, T, C), gain (C,), bias (C,) or None (nanoGPT's bias=False) -> n (B, T, C).
    mu (B, T, 1) = mean(x); r (B, T, 1) = 1/sqrt(mean((x - mu)^2) + eps); n = (x - mu) r gain + bias."""
    centred = x - np.mean(x, axis=-1, keepdims=True)
    r = 1.0 / np.sqrt(np.mean(centred * centred, axis=-1, keepdims=True) + x.dtype.type(eps))
    xhat = centred * r
    n = xhat * gain
    if bias is not None:
        n += bias
    return n, (xhat, r, gain, bias is not None)


def layernorm_backward(dn: np.ndarray, cache):
    """Forward: n = xhat * gain + bias, xhat = (x - mu) * r.
    dgain = sum over (B, T) of dn * xhat;  dbias = sum over (B, T) of dn.
    dx = r * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)), dxhat = dn * gain: RMSNorm's
    projection term plus the mean term, which comes from mu depending on every x_j (each x_j
    moves the mean all C outputs subtract); leaving it out is a classic LayerNorm mistake."""
    xhat, r, gain, has_bias = cache
    C = xhat.shape[-1]
    dgain = np.einsum("btc,btc->c", dn, xhat)
    dx = dn * gain  # (B, T, C) dxhat, turned into dx in place
    mean = np.sum(dx, axis=-1, keepdims=True) / dx.dtype.type(C)  # (B, T, 1) mean(dxhat)
    proj = np.einsum("btc,btc->bt", dx, xhat)[..., None] / dx.dtype.type(C)  # (B, T, 1) mean(dxhat * xhat)
    dx -= mean
    dx -= xhat * proj
    dx *= r
    if not has_bias:
        return dx, dgain
    return dx, dgain, np.sum(dn, axis=(0, 1))
