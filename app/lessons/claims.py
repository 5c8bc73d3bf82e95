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

from app.lessons import schema
from app.steps.context import TraceContext
from app.traces.tensors import tensor_array
from xt_core import check_record
from xt_core.names import OUTPUT_PROBS


class ClaimError(ValueError):
    """A claim that cannot be measured (a tensor, step or index it names does not exist)."""


@dataclass
class Measured:
    ok: bool
    values: dict[str, float | int | str]  # what a template's {id.field} reads
    primary: str  # the field {id} alone reads
    claimed: str
    measured: str

    def json(self, claim, against: str) -> dict:
        """What the page shows: the claim, what it was checked against, what was measured."""
        return {
            "id": claim.id,
            "kind": claim.kind,
            "claimed": self.claimed,
            "measured": self.measured,
            "against": against,
            "values": {k: None if isinstance(v, float) and not np.isfinite(v) else v for k, v in self.values.items()},
        }


@dataclass
class ClaimContext:
    """The trace a claim reads and the walkthrough step it is stated at."""

    ctx: TraceContext
    step_index: int


def _g(x: float) -> str:
    return f"{x:.3g}"


def _bounds(low: float | None, high: float | None) -> str:
    if low is not None and high is not None:
        return f"between {_g(low)} and {_g(high)}"
    return f"at least {_g(low)}" if low is not None else f"at most {_g(high)}"


def _within(x: float, low: float | None, high: float | None) -> bool:
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


# Each claim a whole sentence, by what it reduces and of which tensor ({at}: "[0, 3]" or nothing;
# {condition}: its bounds and sign), so every sentence a learner reads is in this file as written.
_VALUE_CLAIMED = {
    ("entry", "value"): "{name}{at} is {condition}",
    ("entry", "grad"): "dL/d{name}{at} is {condition}",
    ("entry", "contribution"): "this step's contribution to dL/d{name}{at} is {condition}",
    ("sum", "value"): "the sum of {name}{at} is {condition}",
    ("sum", "grad"): "the sum of dL/d{name}{at} is {condition}",
    ("sum", "contribution"): "the sum of this step's contribution to dL/d{name}{at} is {condition}",
    ("norm", "value"): "the norm of {name}{at} is {condition}",
    ("norm", "grad"): "the norm of dL/d{name}{at} is {condition}",
    ("norm", "contribution"): "the norm of this step's contribution to dL/d{name}{at} is {condition}",
    ("max_abs", "value"): "the largest |entry| of {name}{at} is {condition}",
    ("max_abs", "grad"): "the largest |entry| of dL/d{name}{at} is {condition}",
    ("max_abs", "contribution"): "the largest |entry| of this step's contribution to dL/d{name}{at} is {condition}",
}
_ARGMAX_CLAIMED = {
    ("rows", "value"): "the row of largest norm of {name}{at} is {label}",
    ("rows", "grad"): "the row of largest norm of dL/d{name}{at} is {label}",
    ("rows", "contribution"): "the row of largest norm of this step's contribution to dL/d{name}{at} is {label}",
    ("entries", "value"): "the largest entry of {name}{at} is {label}",
    ("entries", "grad"): "the largest entry of dL/d{name}{at} is {label}",
    ("entries", "contribution"): "the largest entry of this step's contribution to dL/d{name}{at} is {label}",
}


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
    span = (
        f"at every query from position {first} on"
        if claim.to is None
        else f"at every query from position {first} to {last}"
    )
    return Measured(
        low >= claim.min_weight,
        {"min": low, "mean": mean, "head": claim.head, "offset": claim.offset, "from": first, "to": last},
        "min",
        f"head {claim.head} puts at least {_g(claim.min_weight)} on offset {claim.offset} (key − query) {span}",
        f"least weight {_g(low)}, mean {_g(mean)}",
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
    told = "never" if start == len(p) else f"from position {start} on (at least {_g(after)})"
    return Measured(
        start == claim.from_,
        {"from": start, "min": after, "before": before, "above": claim.above},
        "from",
        f"p(target) stays above {_g(claim.above)} from position {claim.from_} to the end"
        + (f", and not at {claim.from_ - 1}" if claim.from_ else ""),
        told + (f"; before it at most {_g(before)}" if start else ""),
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
    return Measured(
        check.passed == claim.passes,
        {"error": error, "tolerance": float(check.tolerance), "passes": verdict},
        "error",
        f"the gradient check of {claim.step} ({claim.phase}) {'passes' if claim.passes else 'fails'}",
        f"it {verdict}: rel. error {error:.2g} (tolerance {check.tolerance:.0e})",
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
    if claim.only is not None:
        claimed = f"the failing backward steps are {', '.join(claim.only) or 'none'}"
        shown = names if len(names) <= 4 else [*names[:3], f"… {len(names) - 3} more"]
        told = f"failing: {', '.join(shown) or 'none'}" + (f" (first: rel. error {error:.2g})" if failing else "")
    else:
        claimed = f"the first backward step whose check fails is {claim.first}"
        told = f"first failing: {first}" + (f", rel. error {error:.2g}" if failing else "")
    checked = sum(r.phase == "backward" for r in cc.ctx.trace.records)
    return Measured(ok, {"first": first, "error": error, "count": len(names), "of": checked}, "first", claimed, told)


def identity(claim: schema.IdentityClaim, cc: ClaimContext) -> Measured:
    deviation = float(cc.ctx.trace.logits_identity_error())
    return Measured(
        _within(deviation, claim.min, claim.max),
        {"deviation": deviation},
        "deviation",
        f"max |dL/dlogits − (p − onehot)/N| is {_bounds(claim.min, claim.max)}",
        f"it is {_g(deviation)}",
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
    ok = _within(x, claim.min, claim.max) if claim.min is not None or claim.max is not None else True
    ok = ok and (claim.sign is None or bool(SIGNS[claim.sign](x)))
    parts = ([_bounds(claim.min, claim.max)] if claim.min is not None or claim.max is not None else []) + (
        [claim.sign] if claim.sign else []
    )
    claimed = _VALUE_CLAIMED[(claim.reduce, claim.of)].format(
        name=claim.tensor, at=_at(claim.at), condition=" and ".join(parts)
    )
    return Measured(ok, {"value": x}, "value", claimed, f"it is {_g(x)}")


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
        _ARGMAX_CLAIMED[(claim.over, claim.of)].format(
            name=claim.tensor, at=_at(claim.at), label=_label(cc, expected, scores.shape[0])
        ),
        f"it is {label} ({_g(float(scores[best]))})",
    )


KINDS: dict[type, Callable[..., Measured]] = {
    schema.StripeClaim: stripe,
    schema.TargetProbabilityClaim: target_probability,
    schema.GradcheckClaim: gradcheck,
    schema.FailingStepsClaim: failing_steps,
    schema.IdentityClaim: identity,
    schema.ValueClaim: value,
    schema.ArgmaxClaim: argmax,
}


def measure(claim, cc: ClaimContext) -> Measured:
    """The claim checked against cc's trace (ClaimError when it names what does not exist)."""
    return KINDS[type(claim)](claim, cc)


def about(faults: list[str] | None) -> str:
    """Which trace a claim was checked against, in words."""
    if faults is None:
        return "this trace"
    return f"this trace's spec with the fault {', '.join(faults)}" if faults else "this trace's spec, correct backward"
