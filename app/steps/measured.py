"""The sentences of an explanation that state numbers: each is filled from the recorded tensors
of this trace (the loss and ln V, the softmax sums, the bounds and row sums of gradients), so
what the text says is what this trace holds."""

from __future__ import annotations

import math

import numpy as np

import xt_core
from xt_core.trace import Record

# A row sum this small relative to the row's Σ|entries| is round-off, not a nonzero sum.
ROW_SUM_ROUNDOFF = {np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-10}
# A loss this close to ln V is "about" a uniform guess.
LOSS_NEAR = 0.005


def loss_sentence(trace: xt_core.Trace) -> str:
    """The mean loss of this trace beside ln V, the loss of guessing uniformly, and which is higher."""
    N, V, loss = trace.targets.size, trace.cfg.vocab_size, float(trace.loss)
    uniform = math.log(V)
    text = (
        f"The training loss is the mean of the per-position losses over all N = B·T = {N} positions: here "
        f"L = {loss:.4f}. Guessing uniformly over the V = {V} tokens would score ln V = {uniform:.4f} at every "
        "position; "
    )
    if not math.isfinite(loss):
        return text + "this loss is not finite, so the two cannot be compared."
    gap = loss - uniform
    if abs(gap) < LOSS_NEAR:
        return text + "this model scores about what that uniform guess would."
    if gap > 0:
        return text + (
            f"this model scores {gap:.2f} above it: its predictions are not uniform, and where they are "
            "confident and wrong they cost more than a uniform guess would."
        )
    return text + f"this model scores {-gap:.2f} below it: it predicts these targets better than a uniform guess."


def _row_sum_sentence(grad: np.ndarray, what: str) -> str:
    """How far the rows of a softmax's input gradient are from summing to zero, in this trace."""
    g = np.asarray(grad, dtype=np.float64)
    sums, sizes = np.abs(g.sum(axis=-1)), np.abs(g).sum(axis=-1)
    if not (np.isfinite(sums).all() and np.isfinite(sizes).all()):
        return f" In this trace {what} holds NaN or infinite values."
    largest = float(sums.max(initial=0.0))
    relative = float((sums / np.maximum(sizes, 1e-300)).max(initial=0.0))
    if relative <= ROW_SUM_ROUNDOFF.get(np.dtype(grad.dtype), 1e-4):
        return f" In this trace the largest |row sum| of {what} is {largest:.1e}: zero up to round-off."
    return (
        f" In this trace the largest |row sum| of {what} is {largest:.3g}, {relative:.2g} of that row's "
        "Σ|entries|: not zero, so this backward is not the softmax's."
    )


def _output_softmax(record: Record, trace: xt_core.Trace) -> dict:
    N = trace.targets.size
    dlogits = trace.grad(record.inputs[0])
    largest = float(np.max(np.abs(dlogits)))
    facts = (
        f"Each entry of (p − onehot)/N lies within ±1/N, since 0 ≤ p ≤ 1: here N = {N}, so 1/N = {1 / N:.3g}, "
        f"and the largest |dL/dlogits| recorded is {largest:.3g}. Each position's row sums to zero, "
        "Σ_v (p_v − onehot_v)/N = (1 − 1)/N." + _row_sum_sentence(dlogits, "dL/dlogits")
    )
    # Σ_k e^(z_k − max z) = 1 / max_k p_k at every position
    sums = 1.0 / np.max(np.asarray(trace[record.name], dtype=np.float64), axis=-1)
    inv_sums = (
        f" In this trace that sum ranges from {float(sums.min()):.4g} to {float(sums.max()):.4g} over the positions."
        if np.isfinite(sums).all()
        else ""
    )
    return {"output_facts": facts, "inv_sums": inv_sums}


def sentences(kind: str, record: Record, trace: xt_core.Trace) -> dict:
    """The measured fields of `kind`'s explanation template for `record` (none for most)."""
    if kind == "mean" and record.phase != "backward":
        return {"loss_sentence": loss_sentence(trace)}
    if kind == "softmax_output" and record.phase == "backward":
        return _output_softmax(record, trace)
    if kind == "softmax_attention" and record.phase == "backward":
        return {"row_sums": _row_sum_sentence(trace.grad(record.inputs[0]), "dL/dS")}
    return {}


def repeat_sentence(tokens: np.ndarray, probs: np.ndarray, head: int) -> str:
    """Where this text repeats a token, with the weight `head` puts on the token after the earlier
    occurrence there (probs: the layer's attention probabilities); or a hint to type a repeat."""
    for seq, row in enumerate(np.atleast_2d(tokens)):
        seen: dict[int, int] = {}
        for pos, token in enumerate(row.tolist()):
            if token in seen:
                after = seen[token] + 1
                weight = float(probs[seq, head, pos, after])
                return (
                    f"This text repeats: position {pos} holds the token of position {seen[token]}, and row {pos} of "
                    f"head {head} puts {weight:.2f} of its weight on position {after}, the token after it."
                )
            seen[token] = pos
    return "Type a text that repeats to see its stripe."
