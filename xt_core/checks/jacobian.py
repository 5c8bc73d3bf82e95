"""The softmax Jacobian and the chain-rule check the walkthrough shows for one row.

The check never builds J: J @ v = p * v - p (p . v) costs O(N) for a row of N entries, so the
output softmax's row (N = vocab_size, 49,152 for SmolLM2: J would be 19 GB in float64) is checked
whole, and J itself is built only on the entries shown (`shown`: the top-k tokens)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xt_core.checks.tolerances import CHAIN_RULE


def softmax_jacobian(p: np.ndarray) -> np.ndarray:
    """J = diag(p) - p p^T for a 1-D probability vector p (N,): J[i, j] = dp_i / ds_j.
    Symmetric, rows sum to zero (adding a constant to every score changes nothing).
    (N, N): callers restrict p to the entries they show (see check_softmax_row)."""
    p = np.asarray(p)
    if p.ndim != 1:
        raise ValueError(f"softmax_jacobian takes a 1-D probability vector, got shape {p.shape}")
    return np.diag(p) - np.outer(p, p)


def softmax_jacobian_product(p: np.ndarray, v: np.ndarray) -> np.ndarray:
    """J @ v without J: (diag(p) - p p^T) v = p * v - p (p . v); p, v (N,) -> (N,), O(N) memory.
    J is symmetric, so this is also J^T v, the chain rule dL/ds = J^T dL/dp."""
    return p * v - p * np.dot(p, v)


@dataclass(frozen=True)
class JacobianCheck:
    """J for one softmax row (on the shown entries), the gradient arriving (dL/dp), J @ dL/dp
    computed here, and the gradient the backward pass recorded for the scores (or logits)."""

    indices: np.ndarray  # which entries of the row these vectors cover
    p: np.ndarray
    jacobian: np.ndarray
    dprobs: np.ndarray
    chain: np.ndarray  # J @ dL/dp
    recorded: np.ndarray  # dL/dscores from the backward pass
    max_abs_error: float  # over the whole row, even when restricted for display
    max_rel_error: float

    @property
    def ok(self) -> bool:
        return self.max_rel_error <= CHAIN_RULE.of(self.recorded.dtype)


def check_softmax_row(
    p: np.ndarray, dprobs: np.ndarray, recorded: np.ndarray, shown: np.ndarray | None = None
) -> JacobianCheck:
    """The chain-rule check J @ dL/dp == recorded over the whole row (N,), in O(N) memory; J and
    the vectors kept on `shown` (sorted entry indices, default every entry): len(shown)² cells."""
    p64 = np.asarray(p, dtype=np.float64)
    chain = softmax_jacobian_product(p64, np.asarray(dprobs, dtype=np.float64))
    err = np.abs(chain - recorded)
    scale = max(float(np.max(np.abs(chain))), float(np.max(np.abs(recorded))), 1e-30)
    indices = np.arange(p.shape[0]) if shown is None else np.asarray(shown)
    return JacobianCheck(
        indices=indices,
        p=p[indices],
        jacobian=softmax_jacobian(p64[indices]),
        dprobs=dprobs[indices],
        chain=chain[indices],
        recorded=recorded[indices],
        max_abs_error=float(err.max()),
        max_rel_error=float(err.max() / scale),
    )
