"""The softmax Jacobian and the chain-rule check the walkthrough shows for one row.

The check never builds J: J @ v = p * v - p (p . v) costs O(N) for a row of N entries, so the
output softmax's row (N = vocab_size, 49,152 for SmolLM2: J would be 19 GB in float64) is checked
whole, and J itself is built only on the entries shown (`shown`: the top-k tokens).

    attention_jacobian(trace, layer, head, seq, pos)   one attention row of a recorded step
    output_jacobian(trace, seq, pos, top_k)            the output softmax at one position"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xt_core.checks.tolerances import CHAIN_RULE
from xt_core.names import LOGITS, OUTPUT_PROBS, entry
from xt_core.trace import Trace


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
    computed_in: str = ""  # the precision the recorded gradients were computed in (default: their dtype)

    @property
    def ok(self) -> bool:
        return self.max_rel_error <= CHAIN_RULE.of(self.computed_in or self.recorded.dtype)


def check_softmax_row(
    p: np.ndarray, dprobs: np.ndarray, recorded: np.ndarray, shown: np.ndarray | None = None, computed_in: str = ""
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
        computed_in=computed_in,
    )


def attention_jacobian(trace: Trace, layer: int, head: int, seq: int, pos: int) -> JacobianCheck:
    """Row `pos` of head `head` in layer `layer`: J = diag(p) - p p^T over the visible
    keys 0..pos, and the check J @ dL/dp == dL/dscores for that row."""
    cfg = trace.cfg
    B, T = trace.tokens.shape
    _check_index("layer", layer, cfg.n_layer)
    _check_index("head", head, cfg.n_head)
    _check_index("seq", seq, B)
    _check_index("pos", pos, T)
    probs = entry("layers.{L}.attention.probs").name(layer)
    scores = entry("layers.{L}.attention.scores").name(layer)
    keys = slice(0, pos + 1)  # causal: later keys have p = 0 and take no part
    return check_softmax_row(
        trace[probs][seq, head, pos, keys],
        trace.grad(probs)[seq, head, pos, keys],
        trace.grad(scores)[seq, head, pos, keys],
        computed_in=_computed_in(trace),
    )


def output_jacobian(trace: Trace, seq: int, pos: int, top_k: int | None = None) -> JacobianCheck:
    """The output softmax at one position: J @ dL/dp == dL/dlogits, checked over the whole
    row in O(V) memory. With top_k, J is built only on the k most probable tokens and the
    target ((k+1)² cells); without it on the whole row (V², for small vocabularies only)."""
    B, T = trace.tokens.shape
    _check_index("seq", seq, B)
    _check_index("pos", pos, T)
    if top_k is not None and top_k < 1:
        raise ValueError(f"top_k must be at least 1, got {top_k}")
    p = trace[OUTPUT_PROBS][seq, pos]
    shown = None if top_k is None else np.sort(top_tokens(p, int(trace.targets[seq, pos]), top_k))
    return check_softmax_row(
        p, trace.grad(OUTPUT_PROBS)[seq, pos], trace.grad(LOGITS)[seq, pos], shown, _computed_in(trace)
    )


def _computed_in(trace: Trace) -> str:
    """A low-precision trace's format (its float32 arrays hold that format's numbers), else ""."""
    return trace.precision.name if trace.precision is not None else ""


def _check_index(name: str, value, size: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < size:
        raise ValueError(f"{name} must be an integer in [0, {size}), got {value!r}")


def top_tokens(p: np.ndarray, target: int, k: int) -> np.ndarray:
    """The k most probable tokens of a probability row, and the target if it is not among them:
    most probable first (ties by token id)."""
    top = np.argsort(-p, kind="stable")[:k]
    if target not in top:
        top = np.append(top, target)  # below every one of the k: the order stays descending
    return top.astype(np.int64)
