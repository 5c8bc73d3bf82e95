"""A lesson file's shape (lessons/*.toml; docs/lessons.md): what a teacher writes, checked field
by field. Whether the named steps, figures and cells exist, and whether each claim holds, is
app.lessons.catalogue's check, against the trace the lesson's spec builds (claims:
app.lessons.claims)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from app.lessons import run_schema

MAX_STEPS = 30  # a lesson is a path of 8–15 key steps; beyond 30 it is a walkthrough, not a path


def _one_line(text: str) -> str:
    if "\n" in text.strip():
        raise ValueError("must be one line")
    return text.strip()


class Annotation(BaseModel):
    """A mark drawn on one figure of the step: a cell, row(s), column(s), a diagonal, a band
    of diagonals, the target token of each position, or a note; with a label."""

    model_config = ConfigDict(extra="forbid")
    figure: str = Field(description="a figure id of the step, e.g. output.layers.1.attention.probs")
    kind: Literal["cell", "row", "column", "diagonal", "band", "targets", "note"]
    label: str = Field("", max_length=120)
    head: int | None = Field(None, ge=0, description="one panel of a grid of heads (default: every head)")
    row: int | str | None = Field(None, description="a row index (negative: from the end) or a token")
    col: int | str | None = Field(None, description="a column index (negative: from the end) or a token")
    rows: list[int] | None = Field(None, min_length=2, max_length=2, description="[first, last] rows")
    cols: list[int] | None = Field(None, min_length=2, max_length=2, description="[first, last] columns")
    offset: int | None = Field(None, description="diagonal: column − row (0: the main diagonal, −1: the one below)")
    offsets: list[int] | None = Field(
        None, min_length=2, max_length=2, description="band: [lowest, highest] column − row"
    )

    _label = field_validator("label")(_one_line)

    @model_validator(mode="after")
    def _fields_of_kind(self) -> Annotation:
        needs = {
            "cell": ("row", "col"),
            "row": ("row|rows",),
            "column": ("col|cols",),
            "diagonal": ("offset",),
            "band": ("offsets",),
            "targets": (),
            "note": (),
        }[self.kind]
        for need in needs:
            if all(getattr(self, name) is None for name in need.split("|")):
                raise ValueError(f"a {self.kind} annotation needs {' or '.join(need.split('|'))}")
        return self


CLAIM_ID = r"^[a-z][a-z0-9_]{0,31}$"
Index = list[int | str]  # entries of a tensor's leading axes; a str is a token, on a vocabulary axis


def _some_bound(claim, names: tuple[str, ...]):
    if all(getattr(claim, name) is None for name in names):
        raise ValueError(f"a {claim.kind} claim needs {' or '.join(names)}")
    return claim


class ClaimBase(BaseModel):
    """What every claim may say: a name its step's text uses ({id} in a template), and the
    faults of the walkthrough it is about, when not the lesson's own (a variant of its spec)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    id: str | None = Field(None, pattern=CLAIM_ID, description="the name a text's {id} or {id.field} fills from")
    faults: list[str] | None = Field(
        None, max_length=4, description="check against the lesson's spec with these faults ([]: the correct backward)"
    )
    fault_layer: int | None = Field(None, ge=0)
    # a low-precision variant of the lesson's spec (docs/precision.md): the claim is about the same
    # walkthrough in this precision, or at this loss scale
    dtype: Literal["bfloat16", "float16"] | None = Field(None, description="check against the spec in this precision")
    loss_scale: float | None = Field(None, ge=1, description="check against the spec at this loss scale (2^k)")


class StripeClaim(ClaimBase):
    """An attention head's weight on one diagonal (offset = key − query) from a query on (to a query)."""

    kind: Literal["stripe"]
    tensor: str = Field(description="an attention probs tensor, e.g. layers.1.attention.probs")
    head: int = Field(ge=0)
    offset: int = Field(le=0, description="column − row: −1 the previous position")
    from_: int | None = Field(None, alias="from", ge=0, description="the first query (default: −offset)")
    to: int | None = Field(None, ge=0, description="the last query (default: the last position)")
    min_weight: float = Field(gt=0, le=1, description="every weight on the stripe is at least this")
    seq: int = Field(0, ge=0)


class TargetProbabilityClaim(ClaimBase):
    """The position from which p(target) stays above a threshold to the end of the text."""

    kind: Literal["target_probability"]
    above: float = Field(gt=0, lt=1)
    from_: int = Field(alias="from", ge=0)
    seq: int = Field(0, ge=0)


class GradcheckClaim(ClaimBase):
    """A step's gradient check (the badge) passes or fails."""

    kind: Literal["gradcheck"]
    step: str
    phase: Literal["forward", "loss", "backward", "update"] = "backward"
    passes: bool


class FailingStepsClaim(ClaimBase):
    """The backward steps whose checks fail: the first one, in the order backward runs, or all."""

    kind: Literal["failing_steps"]
    first: str | None = None
    only: list[str] | None = Field(None, description="every failing backward step, in backward order ([]: none)")

    _bound = model_validator(mode="after")(lambda self: _some_bound(self, ("first", "only")))


class IdentityClaim(ClaimBase):
    """max |dL/dlogits − (p − onehot)/N|: the output softmax-CE step's identity chart."""

    kind: Literal["identity"]
    min: float | None = Field(None, ge=0)
    max: float | None = Field(None, ge=0)

    _bound = model_validator(mode="after")(lambda self: _some_bound(self, ("min", "max")))


class ValueClaim(ClaimBase):
    """A tensor's entry, or the sum, norm or largest |entry| of a slice of it, within bounds or of a sign."""

    kind: Literal["value"]
    tensor: str
    of: Literal["value", "grad", "contribution"] = Field(
        "value", description="contribution: what this claim's (backward) step adds to the tensor's gradient"
    )
    at: Index = Field(default_factory=list, max_length=4)
    reduce: Literal["entry", "sum", "norm", "max_abs"] = "entry"
    min: float | None = None
    max: float | None = None
    sign: Literal["positive", "negative", "zero"] | None = None

    _bound = model_validator(mode="after")(lambda self: _some_bound(self, ("min", "max", "sign")))


class ArgmaxClaim(ClaimBase):
    """Where a vector of a tensor is largest (over = "entries"), or which row of a matrix has the
    largest norm (over = "rows"): an index, or a token on a vocabulary axis."""

    kind: Literal["argmax"]
    tensor: str
    of: Literal["value", "grad", "contribution"] = "value"
    at: Index = Field(default_factory=list, max_length=4)
    over: Literal["entries", "rows"] = "entries"
    equals: int | str


class PrecisionClaim(ClaimBase):
    """A low-precision step's tensor (or its gradient) against the float64 twin: its relative error,
    or the share of its entries flushed to zero, held as subnormal numbers or overflowed."""

    kind: Literal["precision"]
    tensor: str
    of: Literal["value", "grad"] = "grad"
    measure: Literal["rel_error", "flushed", "subnormal", "overflowed"]
    min: float | None = Field(None, ge=0)
    max: float | None = Field(None, ge=0)

    _bound = model_validator(mode="after")(lambda self: _some_bound(self, ("min", "max")))


class FirstLosingClaim(ClaimBase):
    """The first tensor of a low-precision step, in its order (the forward, then the gradients from
    the loss back), to lose information by the rule of docs/precision.md; "none" when none does."""

    kind: Literal["first_losing"]
    first: str = Field(description='a recorded name, or "none"')
    which: Literal["value", "grad"] = "grad"


Claim = Annotated[
    StripeClaim
    | TargetProbabilityClaim
    | GradcheckClaim
    | FailingStepsClaim
    | IdentityClaim
    | ValueClaim
    | ArgmaxClaim
    | PrecisionClaim
    | FirstLosingClaim
    | run_schema.RunClaim,  # about a recorded run: a run lesson's (app/lessons/run_schema.py)
    Field(discriminator="kind"),
]


class LessonStep(BaseModel):
    """A stop: an op of the walkthrough (name, phase); in a lesson about a recorded run, an op of one
    of its steps' walkthroughs (run_step, name, phase), or the run's film at a step (film)."""

    model_config = ConfigDict(extra="forbid")
    name: str | None = Field(None, description="the recorded name, e.g. layers.1.attention.probs")
    phase: Literal["forward", "loss", "backward", "update"] | None = None
    run_step: int | None = Field(None, ge=0, description="a run lesson's stop: this step of the run, opened")
    film: int | None = Field(None, ge=0, description="a run lesson's stop: the run's film at this step")
    takeaway: str = Field("", max_length=200, description="one line: what to remember")
    narration: str = Field("", max_length=1200, description="2–4 sentences: what to point at, what to say")
    next: str = Field("", max_length=200, description="the cue that leads to the next step")
    annotations: list[Annotation] = Field(default_factory=list, max_length=8)
    marks: list[run_schema.FilmMark] = Field(default_factory=list, max_length=8, description="a film stop's marks")
    claims: list[Claim] = Field(default_factory=list, max_length=8)

    _takeaway = field_validator("takeaway", "next")(_one_line)

    @model_validator(mode="after")
    def _a_stop(self) -> LessonStep:
        if self.film is not None:
            given = [key for key in ("name", "phase", "run_step") if getattr(self, key) is not None]
            if given or self.annotations:
                raise ValueError(f"a film stop shows the run's curves: it has no {(given or ['annotations'])[0]}")
            return self
        if self.marks:
            raise ValueError("marks: a film stop's (film = S); an op's stop has annotations")
        if self.name is None or self.phase is None:
            raise ValueError(f"a stop names its op: {'name' if self.name is None else 'phase'} is missing")
        return self

    @field_validator("narration")
    @classmethod
    def _narration(cls, text: str) -> str:
        return " ".join(text.split())  # a TOML multi-line string reads as one paragraph


WORDS = ("takeaway", "narration", "next")


class LessonFile(BaseModel):
    """A lesson's words are in the file (title, each step's takeaway and narration: one language,
    `lang`) or, for a lesson without a title, in the catalogues (app/words/locales/<lang>/lesson-<name>.ftl,
    every language: app.lessons.words)."""

    model_config = ConfigDict(extra="forbid")
    title: str = Field("", max_length=120, description="none: the words are in the catalogues (`words`)")
    words: str = Field(
        "",
        pattern=r"^$|^[a-z0-9][a-z0-9-]{0,62}$",
        description="the catalogues' name for this lesson's words: app/words/locales/<lang>/lesson-<words>.ftl",
    )
    lang: str = Field("en", pattern=r"^[a-z]{2,3}$", description="the language of the words written in the file")
    summary: str = Field("", max_length=600)
    spec: dict[str, Any] | None = Field(None, description="the walkthrough: as the body of POST /api/traces")
    run: str | None = Field(
        None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", description="a recorded run (GET /api/runs): its lesson"
    )
    steps: list[LessonStep] = Field(min_length=1, max_length=MAX_STEPS)

    _title = field_validator("title")(_one_line)

    @model_validator(mode="after")
    def _spec_or_run(self) -> LessonFile:
        if (self.spec is None) == (self.run is None):
            raise ValueError("a lesson has a [spec] (a walkthrough) or a run (a recorded run's lesson), one of them")
        for i, step in enumerate(self.steps):
            run_claims = [j for j, c in enumerate(step.claims) if isinstance(c, run_schema.RUN_CLAIMS)]
            if self.run is None and (step.film is not None or step.run_step is not None or run_claims):
                what = "film" if step.film is not None else "run_step" if step.run_step is not None else "claims"
                where = f"steps[{i}].{what}" + (f"[{run_claims[0]}]" if what == "claims" else "")
                raise ValueError(f"{where}: a recorded run's stop or claim needs the lesson's run (run = NAME)")
            if self.run is not None and step.film is None and step.run_step is None:
                raise ValueError(
                    f"steps[{i}]: a run lesson's stop is a film step (film = S) or a run step (run_step = S)"
                )
            if step.film is not None and len(run_claims) != len(step.claims):
                raise ValueError(f"steps[{i}].claims: a film stop's claims are about the run (its log), not a trace")
        return self

    @model_validator(mode="after")
    def _words_in_one_place(self) -> LessonFile:
        written = [f"steps[{i}].{key}" for i, step in enumerate(self.steps) for key in WORDS if getattr(step, key)] + [
            f"steps[{i}].annotations[{j}].label"
            for i, s in enumerate(self.steps)
            for j, a in enumerate(s.annotations or s.marks)
            if a.label
        ]
        if bool(self.title) == bool(self.words):
            raise ValueError("a lesson has a title (its words written here) or `words` (its words in the catalogues)")
        if self.words:
            if written or self.summary:
                first = (written or ["summary"])[0]
                raise ValueError(f"a lesson with `words` has them in the catalogues, not here: {first}")
            return self
        missing = [
            f"steps[{i}].{key}" for i, step in enumerate(self.steps) for key in WORDS[:2] if not getattr(step, key)
        ]
        if missing:
            raise ValueError(f"{missing[0]}: a lesson with a title writes each step's takeaway and narration")
        notes = [
            f"steps[{i}].annotations[{j}]"
            for i, s in enumerate(self.steps)
            for j, a in enumerate(s.annotations)
            if a.kind == "note" and not a.label
        ]
        if notes:
            raise ValueError(f"{notes[0]}: a note needs a label")
        return self

    @field_validator("summary")
    @classmethod
    def _summary(cls, text: str) -> str:
        return " ".join(text.split())
