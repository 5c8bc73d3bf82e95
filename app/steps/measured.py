"""The sentences of an explanation that state numbers: each is filled from the recorded tensors
of this trace (the loss and ln V, the softmax sums, the bounds and row sums of gradients), so
what the text says is what this trace holds."""

from __future__ import annotations

import math

import numpy as np

import xt_core
from xt_core.trace import Record

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


def _row_label(index: tuple, shape: tuple) -> str:
    """Where a row of a softmax's input gradient sits: head m, row i of attention scores (B, H, T, T),
    position t of logits (B, T, V); the sequence too when there are several."""
    where = [f"head {index[-2]}", f"row {index[-1]}"] if len(shape) == 4 else [f"position {index[-1]}"]
    return ", ".join(([f"sequence {index[0]}"] if shape[0] > 1 else []) + where)


def _row_sum_sentence(grad: np.ndarray, what: str, magnitude: float, judge: bool = True) -> str:
    """How far the rows of a softmax's input gradient are from summing to zero, in this trace. Each row
    sum adds n terms whose sizes total at most `magnitude` (from the backward's inputs), so its round-off
    is below ε_mach·n·magnitude, ε_mach of the dtype the backward computed in: one scale for the
    whole tensor, since a row whose entries are all but zero (a softmax sure of one key) has a row sum
    of pure round-off that its own Σ|entries| cannot judge. The numbers reported are all of one row.
    judge False (a sealed quiz's step): the same numbers, and no verdict on them."""
    g = np.asarray(grad, dtype=np.float64)
    sums, sizes = np.abs(g.sum(axis=-1)), np.abs(g).sum(axis=-1)
    if not (np.isfinite(sums).all() and np.isfinite(sizes).all() and math.isfinite(magnitude)):
        return f" In this trace {what} holds NaN or infinite values."
    if sums.size == 0:
        return ""
    row = tuple(int(i) for i in np.unravel_index(int(sums.argmax()), sums.shape))
    largest, n = float(sums[row]), g.shape[-1]
    roundoff = float(np.finfo(grad.dtype).eps) * n * magnitude
    where = _row_label(row, g.shape)
    bound = (
        f"the {grad.dtype} round-off of a row sum (ε_mach·n·M, with ε_mach = {float(np.finfo(grad.dtype).eps):.2g} (the gap "
        f"between 1 and the next {grad.dtype}), n = {n} entries a row and M = {magnitude:.2g} the largest total size "
        "of the terms a row adds up)"
    )
    if not judge:
        return (
            f" In this trace the largest |row sum| of {what} is {largest:.2g} ({where}, whose entries add up to "
            f"{float(sizes[row]):.2g} in |·|), and {bound} is at most {roundoff:.1e}. Compare the two yourself: "
            "the verdict waits for your answer."
        )
    if largest <= roundoff:
        return (
            f" In this trace the largest |row sum| of {what} is {largest:.1e} ({where}): below {roundoff:.1e}, "
            f"{bound}: zero up to round-off."
        )
    return (
        f" In this trace the largest |row sum| of {what} is {largest:.3g} ({where}, whose entries add up to "
        f"{float(sizes[row]):.3g} in |·|), {largest / roundoff:.2g} times the {grad.dtype} round-off of such a sum "
        f"({roundoff:.1e}): not zero, so this backward is not the softmax's."
    )


def _attention_magnitude(record: Record, trace: xt_core.Trace) -> float:
    """The largest term a row sum of dL/dS adds: an entry of dS, or Σ_j p_j·|dP_j| (the size of the
    subtracted Σ_j′ p_j′·dP_j′ and of the terms it cancels)."""
    p = np.asarray(trace[record.name], dtype=np.float64)
    dp = np.asarray(trace.grad(record.name), dtype=np.float64)
    ds = np.asarray(trace.grad(record.inputs[0]), dtype=np.float64)
    return float(max(np.abs(ds).max(initial=0.0), (p * np.abs(dp)).sum(axis=-1).max(initial=0.0)))


def _output_softmax(record: Record, trace: xt_core.Trace, judge: bool) -> dict:
    N = trace.targets.size
    dlogits = trace.grad(record.inputs[0])
    largest = float(np.max(np.abs(dlogits)))
    facts = (
        f"Each entry of (p − onehot)/N lies within ±1/N, since 0 ≤ p ≤ 1: here N = {N}, so 1/N = {1 / N:.3g}, "
        f"and the largest |dL/dlogits| recorded is {largest:.3g}. Each position's row sums to zero, "
        "Σ_v (p_v − onehot_v)/N = (1 − 1)/N." + _row_sum_sentence(dlogits, "dL/dlogits", 2 / N, judge)
    )
    # Σ_w e^(z_w − max z) = 1 / max_w p_w at every position
    sums = 1.0 / np.max(np.asarray(trace[record.name], dtype=np.float64), axis=-1)
    inv_sums = (
        f" In this trace that sum ranges from {float(sums.min()):.4g} to {float(sums.max()):.4g} over the positions."
        if np.isfinite(sums).all()
        else ""
    )
    return {"output_facts": facts, "inv_sums": inv_sums}


def sentences(kind: str, record: Record, trace: xt_core.Trace, judge: bool = True) -> dict:
    """The measured fields of `kind`'s explanation template for `record` (none for most); judge
    False (a sealed quiz's step): numbers without a verdict on them."""
    if kind == "mean" and record.phase != "backward":
        return {"loss_sentence": loss_sentence(trace)}
    if kind == "softmax_output" and record.phase == "backward":
        return _output_softmax(record, trace, judge)
    if kind == "softmax_attention" and record.phase == "backward":
        scores_grad = trace.grad(record.inputs[0])
        return {"row_sums": _row_sum_sentence(scores_grad, "dL/dS", _attention_magnitude(record, trace), judge)}
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
