"""The sentences of an explanation that state numbers: each is filled from the recorded tensors
of this trace (the loss and ln V, the softmax sums, the bounds and row sums of gradients), so
what the text says is what this trace holds."""

from __future__ import annotations

import math

import numpy as np

import xt_core
from app.steps.wording import num, t
from xt_core.trace import Record

# A loss this close to ln V is "about" a uniform guess.
LOSS_NEAR = 0.005


def loss_sentence(trace: xt_core.Trace, lang: str = "en") -> str:
    """The mean loss of this trace beside ln V, the loss of guessing uniformly, and which is higher."""
    N, V, loss = trace.targets.size, trace.cfg.vocab_size, float(trace.loss)
    uniform = math.log(V)
    values = {"n": N, "vocab": V, "loss": num(loss, ".4f", lang), "uniform": num(uniform, ".4f", lang)}
    if not math.isfinite(loss):
        return t(lang, "step-loss-not-finite", **values)
    gap = loss - uniform
    if abs(gap) < LOSS_NEAR:
        return t(lang, "step-loss-uniform", **values)
    if gap > 0:
        return t(lang, "step-loss-above", gap=num(gap, ".2f", lang), **values)
    return t(lang, "step-loss-below", gap=num(-gap, ".2f", lang), **values)


def _row_label(index: tuple, shape: tuple, lang: str) -> str:
    """Where a row of a softmax's input gradient sits: head m, row i of attention scores (B, H, T, T),
    position t of logits (B, T, V); the sequence too when there are several."""
    if len(shape) == 4:
        where = t(lang, "step-row-at-head", head=index[-2], row=index[-1])
    else:
        where = t(lang, "step-row-at-position", position=index[-1])
    return t(lang, "step-row-at-sequence", seq=index[0], where=where) if shape[0] > 1 else where


def row_sum_sentence(
    grad: np.ndarray, what: str, magnitude: float, judge: bool, lang: str, not_zero: str = "step-row-sums-not-zero"
) -> str:
    """How far the rows of a softmax's input gradient are from summing to zero, in this trace. Each row
    sum adds n terms whose sizes total at most `magnitude` (from the backward's inputs), so its round-off
    is below ε_mach·n·magnitude, ε_mach of the dtype the backward computed in: one scale for the
    whole tensor, since a row whose entries are all but zero (a softmax sure of one key) has a row sum
    of pure round-off that its own Σ|entries| cannot judge. The numbers reported are all of one row.
    judge False (a sealed quiz's step): the same numbers, and no verdict on them. `not_zero`: the
    message of a sum past round-off, which names the op whose backward this is not."""
    g = np.asarray(grad, dtype=np.float64)
    sums, sizes = np.abs(g.sum(axis=-1)), np.abs(g).sum(axis=-1)
    if not (np.isfinite(sums).all() and np.isfinite(sizes).all() and math.isfinite(magnitude)):
        return t(lang, "step-row-sums-not-finite", what=what)
    if sums.size == 0:
        return ""
    row = tuple(int(i) for i in np.unravel_index(int(sums.argmax()), sums.shape))
    largest, n, eps = float(sums[row]), g.shape[-1], float(np.finfo(grad.dtype).eps)
    roundoff = eps * n * magnitude
    values = {"what": what, "where": _row_label(row, g.shape, lang), "roundoff": num(roundoff, ".1e", lang)}
    bound = {"dtype": str(grad.dtype), "eps": num(eps, ".2g", lang), "n": n, "magnitude": num(magnitude, ".2g", lang)}
    if not judge:
        size = num(float(sizes[row]), ".2g", lang)
        return t(lang, "step-row-sums-sealed", largest=num(largest, ".2g", lang), size=size, **values, **bound)
    if largest <= roundoff:
        return t(lang, "step-row-sums-zero", largest=num(largest, ".1e", lang), **values, **bound)
    times = num(largest / roundoff, ".2g", lang)
    size = num(float(sizes[row]), ".3g", lang)
    largest_text = num(largest, ".3g", lang)
    return t(lang, not_zero, largest=largest_text, size=size, times=times, dtype=str(grad.dtype), **values)


def _attention_magnitude(record: Record, trace: xt_core.Trace) -> float:
    """The largest term a row sum of dL/dS adds: an entry of dS, or Σ_j p_j·|dP_j| (the size of the
    subtracted Σ_j′ p_j′·dP_j′ and of the terms it cancels)."""
    p = np.asarray(trace[record.name], dtype=np.float64)
    dp = np.asarray(trace.grad(record.name), dtype=np.float64)
    ds = np.asarray(trace.grad(record.inputs[0]), dtype=np.float64)
    return float(max(np.abs(ds).max(initial=0.0), (p * np.abs(dp)).sum(axis=-1).max(initial=0.0)))


def _output_softmax(record: Record, trace: xt_core.Trace, judge: bool, lang: str) -> dict:
    N = trace.targets.size
    dlogits = trace.grad(record.inputs[0])
    largest = float(np.max(np.abs(dlogits)))
    row_sums = row_sum_sentence(dlogits, "dL/dlogits", 2 / N, judge, lang)
    inverse, largest_text = num(1 / N, ".3g", lang), num(largest, ".3g", lang)
    facts = t(lang, "step-output-facts", n=N, inverse=inverse, largest=largest_text, row_sums=row_sums)
    # Σ_w e^(z_w − max z) = 1 / max_w p_w at every position
    sums = 1.0 / np.max(np.asarray(trace[record.name], dtype=np.float64), axis=-1)
    inv_sums = (
        t(
            lang,
            "step-output-inv-sums",
            low=num(float(sums.min()), ".4g", lang),
            high=num(float(sums.max()), ".4g", lang),
        )
        if np.isfinite(sums).all()
        else ""
    )
    return {"output_facts": facts, "inv_sums": inv_sums}


def sentences(kind: str, record: Record, trace: xt_core.Trace, judge: bool = True, lang: str = "en") -> dict:
    """The measured fields of `kind`'s explanation message for `record` (none for most); judge
    False (a sealed quiz's step): numbers without a verdict on them."""
    if kind == "mean" and record.phase != "backward":
        return {"loss_sentence": loss_sentence(trace, lang)}
    if kind == "softmax_output" and record.phase == "backward":
        return _output_softmax(record, trace, judge, lang)
    if kind == "softmax_attention" and record.phase == "backward":
        scores_grad = trace.grad(record.inputs[0])
        magnitude = _attention_magnitude(record, trace)
        return {"row_sums": row_sum_sentence(scores_grad, "dL/dS", magnitude, judge, lang)}
    return {}


def repeat_sentence(tokens: np.ndarray, probs: np.ndarray, head: int, lang: str = "en") -> str:
    """Where this text repeats a token, with the weight `head` puts on the token after the earlier
    occurrence there (probs: the layer's attention probabilities); or a hint to type a repeat."""
    for seq, row in enumerate(np.atleast_2d(tokens)):
        seen: dict[int, int] = {}
        for pos, token in enumerate(row.tolist()):
            if token in seen:
                after = seen[token] + 1
                weight = float(probs[seq, head, pos, after])
                weight_text = num(weight, ".2f", lang)
                return t(
                    lang, "step-repeat-found", pos=pos, earlier=seen[token], head=head, weight=weight_text, after=after
                )
            seen[token] = pos
    return t(lang, "step-repeat-none")
