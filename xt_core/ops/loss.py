"""Cross-entropy, split as a learner sees it: probs -> per-token loss -> mean.

N = B*T positions. Together with the softmax backward this reproduces the seed's fused
rule dL/dlogits = (p - onehot) / N: the 1/N is applied once, at the mean, before any
matmul, and the probabilities are never normalized a second time.
"""

from __future__ import annotations

import numpy as np

from xt_core.memory import reusable_empty

TOKEN_LOSS_FORWARD_TEX = r"\ell_{b,t} = -\log p_{b,t,\,y_{b,t}}"
TOKEN_LOSS_BACKWARD_TEX = (
    r"\frac{\partial L}{\partial p_{b,t,v}} = -\frac{\partial L}{\partial \ell_{b,t}} \frac{[v = y_{b,t}]}{p_{b,t,v}}"
)


def token_loss_forward(probs: np.ndarray, targets: np.ndarray):
    """probs (B, T, V), targets (B, T) int -> loss per position (B, T) = -log p[target]."""
    picked = np.take_along_axis(probs, targets[..., None], axis=-1)[..., 0]
    # clamp like the seed so a zero probability gives a huge loss, not inf
    picked = np.maximum(picked, np.finfo(probs.dtype).tiny)
    return -np.log(picked), (picked, targets, probs.shape)


def token_loss_backward(dloss: np.ndarray, cache):
    """Forward: l = -log p[target]. Only the target's probability receives a gradient: -dl / p."""
    picked, targets, shape = cache
    dprobs = reusable_empty(shape, dloss.dtype)  # (B, T, V): a vocabulary's is a reused buffer (xt_core.memory)
    dprobs.fill(0)
    np.put_along_axis(dprobs, targets[..., None], (-dloss / picked)[..., None], axis=-1)
    return dprobs, None


MEAN_FORWARD_TEX = r"L = \frac{1}{N} \sum_{b,t} \ell_{b,t}, \quad N = B\,T"
MEAN_BACKWARD_TEX = r"\frac{\partial L}{\partial \ell_{b,t}} = \frac{1}{N}"


def mean_forward(token_loss: np.ndarray):
    """token_loss (B, T) -> L, a 0-d array (the mean over all N = B*T positions)."""
    return np.mean(token_loss, dtype=token_loss.dtype), token_loss.shape


def mean_backward(dloss: np.ndarray, shape):
    """Forward: L = mean(l). Every position gets dL / N: the batch mean, applied exactly once."""
    return (np.full(shape, dloss / np.prod(shape), dtype=dloss.dtype),)
