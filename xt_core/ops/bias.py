"""A bias add, y = x + b, b one vector shared by every position: Qwen2's q, k and v biases
(q = n·Wq + bq), kept a step of its own after the matmul so the walkthrough shows the bias's
gradient, the sum over positions, beside the weight's (docs/notation.md: b here is a bias).

Dimensions: B sequences, T positions, N = the biased tensor's width (H·hd for q, K·hd for k, v).
"""

from __future__ import annotations

import numpy as np

BIAS_FORWARD_TEX = r"y_{b,t,:} = x_{b,t,:} + \beta"
BIAS_BACKWARD_TEX = r"\frac{\partial L}{\partial x} = \frac{\partial L}{\partial y}, \qquad \frac{\partial L}{\partial \beta} = \sum_{b,t} \frac{\partial L}{\partial y_{b,t,:}}"


def bias_forward(x: np.ndarray, bias: np.ndarray):
    """x (B, T, N), bias (N,) -> y (B, T, N) = x + bias, the same bias added at every (b, t)."""
    return x + bias, None


def bias_backward(dy: np.ndarray, cache):
    """Forward: y = x + bias.  dx = dy (the add passes it on unchanged);
    dbias = sum over (B, T) of dy: one bias is read at every position, so its gradient is
    the sum of what every position sends back (keeping one position's is a classic mistake)."""
    return dy, dy.reshape(-1, dy.shape[-1]).sum(axis=0)
