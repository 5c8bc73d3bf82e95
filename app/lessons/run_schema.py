"""A lesson about a recorded run (docs/lessons.md, "A lesson about a recorded run"): the claims it
may state about the run, measured from the run's own log (xt_core.film: every step's loss and head
scores) or, for the K-composition share, from its steps replayed. Each has bounds: a run recorded
again on another CPU rounds its matmuls differently in the last bits, and its training drifts from
there (docs/film.md), so a claim states the range it holds in, never one exact number."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

MAX_AHEAD = 100  # steps a composition claim sums over (about 25 ms of CPU each, replayed)
MAX_REPLAYED = 200  # steps a composition claim replays in all: from the checkpoint before its step, then ahead
Score = Literal["induction", "previous"]  # a head's induction score, or its previous-token score


class RunClaimBase(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    id: str | None = Field(None, pattern=r"^[a-z][a-z0-9_]{0,31}$", description="the name the text's values use")


class _Bounded(RunClaimBase):
    min: float | None = None
    max: float | None = None

    @model_validator(mode="after")
    def _some_bound(self):
        if self.min is None and self.max is None:
            raise ValueError(f"a {self.kind} claim needs min or max (the range it holds in on another CPU)")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min {self.min} is above max {self.max}")
        return self


class PlateauClaim(_Bounded):
    """The plateau: the longest stretch of steps over which the loss, averaged over `window` steps,
    falls by less than `max_fall` per 100 steps; min and max bound its length in steps."""

    kind: Literal["plateau"]
    max_fall: float = Field(gt=0, description="the loss's fall per 100 steps below which it is a plateau")
    window: int = Field(50, ge=1, le=1000, description="the steps the loss is averaged over")


class LossClaim(_Bounded):
    """The loss averaged over steps `from` to `to` (both included) lies within min and max."""

    kind: Literal["loss"]
    from_: int = Field(alias="from", ge=0)
    to: int = Field(ge=0)

    @model_validator(mode="after")
    def _ordered(self):
        if self.to < self.from_:
            raise ValueError(f"to ({self.to}) is before from ({self.from_})")
        return self


class CrossingClaim(_Bounded):
    """The first step where layer `layer`'s best head scores above `above`; min and max bound that step."""

    kind: Literal["crossing"]
    score: Score
    layer: int = Field(ge=0)
    above: float = Field(gt=0, lt=1)


class ScoreClaim(_Bounded):
    """One head's score at step `at` lies within min and max."""

    kind: Literal["score"]
    score: Score
    layer: int = Field(ge=0)
    head: int = Field(ge=0)
    at: int = Field(ge=0, description="the step")


class HeadsClaim(RunClaimBase):
    """The heads of layer `layer` scoring above `above` at step `at` are exactly `equals`."""

    kind: Literal["heads"]
    score: Score
    layer: int = Field(ge=0)
    at: int = Field(ge=0, description="the step")
    above: float = Field(gt=0, lt=1)
    equals: list[int] = Field(max_length=64, description="the heads, in order ([]: none)")


class CompositionClaim(_Bounded):
    """At step `step`, the share of layer `layer`'s gradient of W_K (or W_Q) that reads the writes of
    `heads` (heads of layer `layer` − 1, xt_core.film.composition: K-composition) lies within min and max;
    `aligns_best`: each of those parts' descent direction is closer (by cosine) to the weight's change
    over the next `ahead` steps than any other head's part."""

    kind: Literal["composition"]
    step: int = Field(ge=0)
    layer: int = Field(1, ge=1)
    projection: Literal["wk", "wq"] = "wk"
    heads: list[int] = Field(min_length=1, max_length=64, description="heads of the layer before")
    ahead: int = Field(50, ge=1, le=MAX_AHEAD, description="the steps whose gradients are summed")
    over: Literal["summed", "one_step"] = Field("summed", description="the next steps' gradients, or the step's own")
    aligns_best: bool = False


class FilmMark(BaseModel):
    """A film stop's mark: a stretch of steps shaded on the film, from `from` to `to`, or the steps a
    claim of the lesson measured (`claim`: a plateau's first to last step, a loss claim's from to
    to, a crossing's step); a label (in the catalogues: the stop's .mark-<j>)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    kind: Literal["steps"] = "steps"
    claim: str | None = Field(None, pattern=r"^[a-z][a-z0-9_]{0,31}$", description="a claim id of the lesson")
    from_: int | None = Field(None, alias="from", ge=0)
    to: int | None = Field(None, ge=0)
    label: str = Field("", max_length=120)

    @model_validator(mode="after")
    def _steps(self):
        if (self.claim is None) == (self.from_ is None or self.to is None):
            raise ValueError("a film mark names a claim, or from and to (not both)")
        if self.to is not None and self.from_ is not None and self.to < self.from_:
            raise ValueError(f"to ({self.to}) is before from ({self.from_})")
        return self


MARKED_STEPS = {"plateau": ("first", "last"), "loss": ("from", "to"), "crossing": ("step", "step")}


RUN_CLAIMS = (PlateauClaim, LossClaim, CrossingClaim, ScoreClaim, HeadsClaim, CompositionClaim)
RunClaim = PlateauClaim | LossClaim | CrossingClaim | ScoreClaim | HeadsClaim | CompositionClaim
