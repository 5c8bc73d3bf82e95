"""A lesson's claims, checked against the trace: each kind of claim (app.lessons.schema) is one
function reading the trace its claim is about and returning whether it holds, the numbers it
measured, and two phrases a person reads: what the lesson claims and what the trace measured.

A false claim refuses the lesson (app.lessons.catalogue names the file, step and claim); a true
one is shown on the lesson's page with its measured numbers, and its numbers fill the lesson's
text ({id.field}: app.lessons.template). A claim with `faults` is about a variant of the
lesson's walkthrough: the same spec with those faults in its backward pass.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from app import words
from app.lessons import schema, sentences
from app.steps.context import TraceContext
from app.traces.tensors import tensor_array
from xt_core import check_record
from xt_core.names import OUTPUT_PROBS
from xt_core.precision.health import first_losing as first_losing_of
from xt_core.precision.health import trace_health


class ClaimError(ValueError):
    """A claim that cannot be measured (a tensor, step or index it names does not exist)."""


@dataclass
class Measured:
    ok: bool
    values: dict[str, float | int | str]  # what a template's {id.field} reads
    primary: str  # the field {id} alone reads
    claimed: sentences.Said
    measured: sentences.Said

    def json(self, claim, against: sentences.Said, lang: str = words.DEFAULT) -> dict:
        """What the page shows: the claim, what it was checked against, what was measured."""
        return {
            "id": claim.id,
            "kind": claim.kind,
            "claimed": self.claimed.text(lang),
            "measured": self.measured.text(lang),
            "against": against.text(lang),
            "values": {k: None if isinstance(v, float) and not np.isfinite(v) else v for k, v in self.values.items()},
        }


@dataclass
class ClaimContext:
    """The trace a claim reads and the walkthrough step it is stated at."""

    ctx: TraceContext
    step_index: int


def within(x: float, low: float | None, high: float | None) -> bool:
    return bool(np.isfinite(x)) and (low is None or x >= low) and (high is None or x <= high)


# ---------------------------------------------------------------------- reading tensors


def _array(cc: ClaimContext, name: str, of: str) -> np.ndarray:
    trace = cc.ctx.trace
    if of == "contribution":
        record = trace.records[cc.step_index]
        if record.phase != "backward" or name not in record.contributions:
            known = ", ".join(record.contributions) or "none"
            raise ClaimError(f"this step adds no contribution to {name!r} (its contributions: {known})")
        return np.asarray(record.contributions[name])
    try:
        return tensor_array(trace, name, of == "grad")
    except KeyError as exc:
        raise ClaimError(str(exc.args[0])) from None


def _axis_index(cc: ClaimContext, value: int | str, size: int, axis: int) -> int:
    vocab = cc.ctx.vocab
    if isinstance(value, str):
        if size != len(vocab):
            raise ClaimError(f"at[{axis}] = {value!r} names a token, but axis {axis} is not the vocabulary")
        if value not in vocab:
            raise ClaimError(f"at[{axis}] = {value!r} is not a token of the model's vocabulary")
        return vocab.index(value)
    if not -size <= value < size:
        raise ClaimError(f"at[{axis}] = {value} is outside axis {axis}'s {size} entries")
    return value % size


def _slice(cc: ClaimContext, array: np.ndarray, at: list) -> np.ndarray:
    if len(at) > array.ndim:
        raise ClaimError(f"at has {len(at)} indices; the tensor has {array.ndim} axes {tuple(array.shape)}")
    index = tuple(_axis_index(cc, v, array.shape[axis], axis) for axis, v in enumerate(at))
    return np.asarray(array[index], dtype=np.float64)


def _label(cc: ClaimContext, index: int, size: int) -> str:
    return cc.ctx.vocab[index] if size == len(cc.ctx.vocab) else str(index)


def _at(at: list) -> str:
    return f"[{', '.join(map(str, at))}]" if at else ""


# ---------------------------------------------------------------------- the kinds


def stripe(claim: schema.StripeClaim, cc: ClaimContext) -> Measured:
    probs = _array(cc, claim.tensor, "value")
    if probs.ndim != 4 or probs.shape[-1] != probs.shape[-2]:
        raise ClaimError(f"{claim.tensor!r} is not an attention matrix (n_seq, heads, T, T): {probs.shape}")
    first = -claim.offset if claim.from_ is None else claim.from_
    last = probs.shape[-1] - 1 if claim.to is None else claim.to
    if not (claim.seq < probs.shape[0] and claim.head < probs.shape[1] and -claim.offset <= first <= last):
        raise ClaimError(f"seq {claim.seq}, head {claim.head}, from {first}: outside {claim.tensor} {probs.shape}")
    if last >= probs.shape[-1]:
        raise ClaimError(f"to {last}: outside the {probs.shape[-1]} queries of {claim.tensor}")
    queries = np.arange(first, last + 1)
    weights = np.asarray(probs[claim.seq, claim.head, queries, queries + claim.offset], dtype=np.float64)
    low, mean = float(weights.min()), float(weights.mean())
    said = {"head": claim.head, "weight": claim.min_weight, "offset": claim.offset, "first": first, "last": last}
    return Measured(
        low >= claim.min_weight,
        {"min": low, "mean": mean, "head": claim.head, "offset": claim.offset, "from": first, "to": last},
        "min",
        sentences.Said("lesson-claim-stripe" if claim.to is None else "lesson-claim-stripe-to", said),
        sentences.Said("lesson-measured-stripe", {"least": low, "mean": mean}),
    )


def target_probability(claim: schema.TargetProbabilityClaim, cc: ClaimContext) -> Measured:
    trace = cc.ctx.trace
    probs = _array(cc, OUTPUT_PROBS, "value")
    if claim.seq >= probs.shape[0] or claim.from_ >= probs.shape[1]:
        raise ClaimError(f"seq {claim.seq}, from {claim.from_}: outside the {probs.shape[:2]} positions")
    targets = trace.targets[claim.seq]
    p = np.asarray(probs[claim.seq, np.arange(len(targets)), targets], dtype=np.float64)
    below = np.flatnonzero(~(p > claim.above))
    start = int(below[-1]) + 1 if below.size else 0
    after = float(p[start:].min()) if start < len(p) else float("nan")
    before = float(p[:start].max()) if start else float("nan")
    if start == len(p):
        told = sentences.Said("lesson-measured-target-never", {"before": before})
    else:
        told = sentences.Said(
            "lesson-measured-target-from-before" if start else "lesson-measured-target-from", {"first": start}
        )
        told.values.update({"least": after, "before": before})
    said = {"above": claim.above, "first": claim.from_, "before": claim.from_ - 1}
    return Measured(
        start == claim.from_,
        {"from": start, "min": after, "before": before, "above": claim.above},
        "from",
        sentences.Said("lesson-claim-target-not-before" if claim.from_ else "lesson-claim-target", said),
        told,
    )


def _record_index(cc: ClaimContext, name: str, phase: str) -> int:
    for record in cc.ctx.trace.records:
        if record.name == name and record.phase == phase:
            return record.index
    raise ClaimError(f"no {phase} step named {name!r}")


def gradcheck(claim: schema.GradcheckClaim, cc: ClaimContext) -> Measured:
    check = check_record(cc.ctx.trace, _record_index(cc, claim.step, claim.phase))
    error = float(check.max_rel_error)
    verdict = "passes" if check.passed else "fails"
    claimed = "lesson-claim-gradcheck-passes" if claim.passes else "lesson-claim-gradcheck-fails"
    told = "lesson-measured-gradcheck-passes" if check.passed else "lesson-measured-gradcheck-fails"
    return Measured(
        check.passed == claim.passes,
        {"error": error, "tolerance": float(check.tolerance), "passes": verdict},
        "error",
        sentences.Said(claimed, {"step": claim.step, "phase": sentences.Said(sentences.PHASE_WORDS[claim.phase])}),
        sentences.Said(told, {"error": error, "tolerance": float(check.tolerance)}),
    )


def _failing(cc: ClaimContext) -> list[tuple[str, float]]:
    trace, out = cc.ctx.trace, []
    for record in trace.records:
        if record.phase == "backward":
            check = check_record(trace, record.index)
            if not check.passed:
                out.append((record.name, float(check.max_rel_error)))
    return out


def failing_steps(claim: schema.FailingStepsClaim, cc: ClaimContext) -> Measured:
    for name in [claim.first] if claim.first else claim.only:
        _record_index(cc, name, "backward")
    failing = _failing(cc)
    names = [name for name, _ in failing]
    first, error = failing[0] if failing else ("none", float("nan"))
    ok = (claim.first is None or claim.first == first) and (claim.only is None or claim.only == names)
    claimed, told = sentences.failing(claim, failing)
    checked = sum(r.phase == "backward" for r in cc.ctx.trace.records)
    return Measured(ok, {"first": first, "error": error, "count": len(names), "of": checked}, "first", claimed, told)


def identity(claim: schema.IdentityClaim, cc: ClaimContext) -> Measured:
    deviation = float(cc.ctx.trace.logits_identity_error())
    return Measured(
        within(deviation, claim.min, claim.max),
        {"deviation": deviation},
        "deviation",
        sentences.Said("lesson-claim-identity", {"condition": sentences.bounds(claim.min, claim.max)}),
        sentences.Said("lesson-measured-value", {"value": deviation}),
    )


REDUCE: dict[str, Callable[[np.ndarray], float]] = {
    "entry": lambda a: float(a),
    "sum": lambda a: float(np.sum(a)),
    "norm": lambda a: float(np.linalg.norm(a)),
    "max_abs": lambda a: float(np.max(np.abs(a))),
}
SIGNS = {"positive": lambda x: x > 0, "negative": lambda x: x < 0, "zero": lambda x: x == 0}


def value(claim: schema.ValueClaim, cc: ClaimContext) -> Measured:
    part = _slice(cc, _array(cc, claim.tensor, claim.of), claim.at)
    if claim.reduce == "entry" and part.ndim:
        raise ClaimError(f"at names {part.ndim} axes too few for one entry: give reduce = sum, norm or max_abs")
    x = REDUCE[claim.reduce](part)
    ok = within(x, claim.min, claim.max) if claim.min is not None or claim.max is not None else True
    ok = ok and (claim.sign is None or bool(SIGNS[claim.sign](x)))
    condition = sentences.condition(claim.min, claim.max, claim.sign)
    claimed = sentences.Said(
        sentences.VALUE_CLAIMED[(claim.reduce, claim.of)],
        {"name": claim.tensor, "at": _at(claim.at), "condition": condition},
    )
    return Measured(ok, {"value": x}, "value", claimed, sentences.Said("lesson-measured-value", {"value": x}))


def argmax(claim: schema.ArgmaxClaim, cc: ClaimContext) -> Measured:
    part = _slice(cc, _array(cc, claim.tensor, claim.of), claim.at)
    want_ndim = 2 if claim.over == "rows" else 1
    if part.ndim != want_ndim:
        raise ClaimError(f"argmax over {claim.over} needs a {want_ndim}-D slice; at leaves {part.shape}")
    scores = np.linalg.norm(part, axis=1) if claim.over == "rows" else part
    best = int(np.argmax(scores))
    expected = _axis_index(cc, claim.equals, scores.shape[0], len(claim.at))
    label = _label(cc, best, scores.shape[0])
    return Measured(
        best == expected,
        {"label": label, "index": best, "score": float(scores[best])},
        "label",
        sentences.Said(
            sentences.ARGMAX_CLAIMED[(claim.over, claim.of)],
            {"name": claim.tensor, "at": _at(claim.at), "label": _label(cc, expected, scores.shape[0])},
        ),
        sentences.Said("lesson-measured-label", {"label": label, "score": float(scores[best])}),
    )


def _health(cc: ClaimContext, names=None) -> dict:
    if cc.ctx.trace.precision is None:
        raise ClaimError(f"a {cc.ctx.spec.dtype} step: the numbers' health is a bfloat16 or float16 step's")
    try:
        return trace_health(cc.ctx.trace, names)
    except KeyError as exc:
        raise ClaimError(f"no recorded tensor {exc.args[0]!r}") from None


def precision(claim: schema.PrecisionClaim, cc: ClaimContext) -> Measured:
    x = float(getattr(_health(cc, [claim.tensor])[claim.tensor][claim.of], claim.measure))
    name = f"dL/d{claim.tensor}" if claim.of == "grad" else claim.tensor
    condition = sentences.bounds(claim.min, claim.max)
    return Measured(
        within(x, claim.min, claim.max),
        {"value": x, "percent": 100 * x},
        "value",
        sentences.Said(sentences.PRECISION_CLAIMED[claim.measure], {"name": name, "condition": condition}),
        sentences.Said("lesson-measured-value", {"value": x}),
    )


def first_losing(claim: schema.FirstLosingClaim, cc: ClaimContext) -> Measured:
    summary = _health(cc)
    if claim.first != "none" and claim.first not in summary:
        raise ClaimError(f"no recorded tensor {claim.first!r}")
    found = first_losing_of(summary)
    name, which = found if found else ("none", claim.which)
    health = summary[name][which] if found else None
    said = "lesson-claim-first-losing-none" if claim.first == "none" else sentences.FIRST_LOSING_CLAIMED[claim.which]
    told = sentences.FIRST_LOSING_MEASURED[which] if found else "lesson-measured-first-losing-none"
    return Measured(
        (name, which) == (claim.first, claim.which) if found else claim.first == "none",
        {
            "first": name,
            "flushed": 100 * health.flushed if health else 0.0,
            "subnormal": 100 * health.subnormal if health else 0.0,
            "rel_error": health.rel_error if health else 0.0,
        },
        "first",
        sentences.Said(said, {"name": claim.first}),
        sentences.Said(told, {"name": name}),
    )


KINDS: dict[type, Callable[..., Measured]] = {
    schema.StripeClaim: stripe,
    schema.TargetProbabilityClaim: target_probability,
    schema.GradcheckClaim: gradcheck,
    schema.FailingStepsClaim: failing_steps,
    schema.IdentityClaim: identity,
    schema.ValueClaim: value,
    schema.ArgmaxClaim: argmax,
    schema.PrecisionClaim: precision,
    schema.FirstLosingClaim: first_losing,
}


def measure(claim, cc: ClaimContext) -> Measured:
    """The claim checked against cc's trace (ClaimError when it names what does not exist)."""
    return KINDS[type(claim)](claim, cc)
