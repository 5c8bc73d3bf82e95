"""The sentences a lesson's claims say (app.lessons.claims), as catalogue messages with their
named values (app/words/locales/<lang>/lessons.ftl), so a claim reads in any language: what the
lesson claims, what the trace measured, which trace that was."""

from __future__ import annotations

from dataclasses import dataclass, field

from app import words
from app.lessons import schema


@dataclass(frozen=True)
class Said:
    """A sentence as the catalogue has it (app/words/locales/*/lessons.ftl): its message and
    named values, put into words in any language."""

    message: str
    values: dict = field(default_factory=dict)

    def text(self, lang: str) -> str:
        return words.t(
            lang, self.message, **{k: v.text(lang) if isinstance(v, Said) else v for k, v in self.values.items()}
        )


def bounds(low: float | None, high: float | None) -> Said:
    if low is not None and high is not None:
        return Said("lesson-bound-between", {"low": low, "high": high})
    return (
        Said("lesson-bound-at-least", {"low": low}) if low is not None else Said("lesson-bound-at-most", {"high": high})
    )


PHASE_WORDS = {
    "forward": "lesson-phase-forward",
    "loss": "lesson-phase-loss",
    "backward": "lesson-phase-backward",
    "update": "lesson-phase-update",
}
SIGN_WORDS = {"positive": "lesson-sign-positive", "negative": "lesson-sign-negative", "zero": "lesson-sign-zero"}


def condition(low: float | None, high: float | None, sign: str | None) -> Said:
    """A value claim's bounds, its sign, or both."""
    if low is None and high is None:
        return Said(SIGN_WORDS[sign])
    bound = bounds(low, high)
    return bound if sign is None else Said("lesson-condition-both", {"bound": bound, "sign": Said(SIGN_WORDS[sign])})


# Each claim a whole sentence, by what it reduces and of which tensor (its message in
# app/words/locales/*/lessons.ftl; $at: "[0, 3]" or nothing, $condition: its bounds and sign).
VALUE_CLAIMED = {
    ("entry", "value"): "lesson-claim-entry-value",
    ("entry", "grad"): "lesson-claim-entry-grad",
    ("entry", "contribution"): "lesson-claim-entry-contribution",
    ("sum", "value"): "lesson-claim-sum-value",
    ("sum", "grad"): "lesson-claim-sum-grad",
    ("sum", "contribution"): "lesson-claim-sum-contribution",
    ("norm", "value"): "lesson-claim-norm-value",
    ("norm", "grad"): "lesson-claim-norm-grad",
    ("norm", "contribution"): "lesson-claim-norm-contribution",
    ("max_abs", "value"): "lesson-claim-max_abs-value",
    ("max_abs", "grad"): "lesson-claim-max_abs-grad",
    ("max_abs", "contribution"): "lesson-claim-max_abs-contribution",
}
ARGMAX_CLAIMED = {
    ("rows", "value"): "lesson-claim-rows-value",
    ("rows", "grad"): "lesson-claim-rows-grad",
    ("rows", "contribution"): "lesson-claim-rows-contribution",
    ("entries", "value"): "lesson-claim-entries-value",
    ("entries", "grad"): "lesson-claim-entries-grad",
    ("entries", "contribution"): "lesson-claim-entries-contribution",
}

# A precision claim's sentence by what it measures; a first_losing claim's by value or gradient.
PRECISION_CLAIMED = {
    "rel_error": "lesson-claim-precision-rel_error",
    "flushed": "lesson-claim-precision-flushed",
    "subnormal": "lesson-claim-precision-subnormal",
    "overflowed": "lesson-claim-precision-overflowed",
}
FIRST_LOSING_CLAIMED = {"value": "lesson-claim-first-losing-value", "grad": "lesson-claim-first-losing-grad"}
FIRST_LOSING_MEASURED = {"value": "lesson-measured-first-losing-value", "grad": "lesson-measured-first-losing-grad"}


def failing(claim: schema.FailingStepsClaim, failing: list[tuple[str, float]]) -> tuple[Said, Said]:
    """What a failing_steps claim says, and what was measured (every failing step, or the first)."""
    names = [name for name, _ in failing]
    error = failing[0][1] if failing else float("nan")
    if claim.only is None:
        claimed = Said("lesson-claim-failing-first", {"step": claim.first})
        if not failing:
            return claimed, Said("lesson-measured-first-none")
        return claimed, Said("lesson-measured-first", {"step": names[0], "error": error})
    claimed = (
        Said("lesson-claim-failing-only", {"steps": ", ".join(claim.only)})
        if claim.only
        else Said("lesson-claim-failing-none")
    )
    if not failing:
        return claimed, Said("lesson-measured-failing-none")
    if len(names) <= 4:
        return claimed, Said("lesson-measured-failing", {"steps": ", ".join(names), "error": error})
    more = {"steps": ", ".join(names[:3]), "more": len(names) - 3, "error": error}
    return claimed, Said("lesson-measured-failing-more", more)


def against(claim) -> Said:
    """Which trace a claim was checked against, in words: its faults', or a precision variant's."""
    if claim.dtype is None and claim.loss_scale is None:
        return about(claim.faults)
    values = {"dtype": claim.dtype or "", "scale": claim.loss_scale or 1.0}
    return Said("lesson-against-precision" if claim.dtype else "lesson-against-loss-scale", values)


def about(faults: list[str] | None) -> Said:
    """Which trace a claim was checked against, in words."""
    if faults is None:
        return Said("lesson-against-this-trace")
    return Said("lesson-against-faults", {"faults": ", ".join(faults)}) if faults else Said("lesson-against-correct")
