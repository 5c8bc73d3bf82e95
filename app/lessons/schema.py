"""A lesson file's shape (lessons/*.toml; docs/lessons.md): what a teacher writes, checked field
by field. Whether the named steps, figures and cells exist is app.lessons.catalogue's check,
against the trace the lesson's spec builds."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

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
        if self.kind == "note" and not self.label:
            raise ValueError("a note needs a label")
        return self


class LessonStep(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(description="the recorded name, e.g. layers.1.attention.probs")
    phase: Literal["forward", "loss", "backward", "update"]
    takeaway: str = Field(min_length=1, max_length=200, description="one line: what to remember")
    narration: str = Field(min_length=1, max_length=1200, description="2–4 sentences: what to point at, what to say")
    next: str = Field("", max_length=200, description="the cue that leads to the next step")
    annotations: list[Annotation] = Field(default_factory=list, max_length=8)

    _takeaway = field_validator("takeaway", "next")(_one_line)

    @field_validator("narration")
    @classmethod
    def _narration(cls, text: str) -> str:
        return " ".join(text.split())  # a TOML multi-line string reads as one paragraph


class LessonFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str = Field(min_length=1, max_length=120)
    summary: str = Field("", max_length=600)
    spec: dict[str, Any] = Field(description="the walkthrough: as the body of POST /api/traces")
    steps: list[LessonStep] = Field(min_length=1, max_length=MAX_STEPS)

    _title = field_validator("title")(_one_line)

    @field_validator("summary")
    @classmethod
    def _summary(cls, text: str) -> str:
        return " ".join(text.split())
