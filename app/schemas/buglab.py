"""The answers of app/routes/buglab.py: the catalogue, every step's check, a diff, the quiz."""

from __future__ import annotations

from pydantic import Field

from app.schemas.common import PLOTLY, Answer, FaultEntry, FigureEntry, GradCheck, Phase, PlotlyFigure


class Catalogue(Answer):
    """GET /api/faults."""

    fault_layer: int = Field(description="the layer the layer-bound faults break")
    faults: list[FaultEntry]


class StepCheckRow(Answer):
    index: int
    name: str
    phase: Phase
    max_rel_error: float | None
    passed: bool


class ChecksView(Answer):
    """GET /api/traces/{id}/checks: the background checks so far and their chart."""

    id: str = Field(description="the trace id")
    tolerance: float
    total: int = Field(description="steps to check")
    done: int = Field(description="steps checked so far")
    complete: bool
    steps: list[StepCheckRow] = Field(description="the steps checked so far")
    first_failing: int | None = Field(description="the first failing backward step so far, or null")
    first_failing_final: bool = Field(description="no earlier step can still fail: first_failing is the answer")
    figure: PlotlyFigure = Field(description=PLOTLY)


class TensorDiff(Answer):
    kind: str = Field(description="arriving (the gradient arriving at the op) or contribution (the op's own)")
    tensor: str
    max_abs_diff: float | None = Field(description="max |faulty − correct|")
    max_abs_correct: float | None = Field(description="max |correct|: the scale rel_diff divides by")
    rel_diff: float | None
    identical: bool


class DiffView(Answer):
    """GET .../steps/{index}/diff: a backward step of a faulty trace against the correct one."""

    index: int
    name: str
    title: str
    correct_id: str | None = Field(
        description="the id of the same spec without faults; null for a quiz (its twin runs on the quiz's hidden weights)"
    )
    verdict: str = Field(
        None, description="whether this op is where the gradients start to differ (absent in a sealed quiz)"
    )
    tensors: list[TensorDiff]
    figures: list[FigureEntry]


class Probes(Answer):
    used: list[int] = Field(description="the steps probed, in order")
    max: int
    left: int


class QuizState(Answer):
    """GET .../quiz."""

    answered: bool
    probes: Probes


class LearnerQuiz(QuizState):
    """GET .../quiz: the request's learner's state of the quiz (a trace without one: `quiz` false,
    no probe to spend, nothing to answer)."""

    quiz: bool = Field(True, description="whether the trace is a quiz (only a spec with `quiz` hides a bug)")
    class_quiz: bool = Field(alias="class", description="a class's quiz: its poll answers it, its presenter reveals it")
    revealed: bool = Field(description="the class's presenter revealed it: every verdict shows")


class ProbeAnswer(QuizState):
    """POST .../quiz/probe: the probed step's check and the quiz's state."""

    index: int
    gradcheck: GradCheck
    voter: str = Field(
        description="the learner identity the answer counts for: send it back as X-Voter without cookies"
    )


class StepRef(Answer):
    index: int | None
    name: str
    title: str


class RevealedFault(FaultEntry):
    step: int | None = Field(description="the backward step of the op it breaks")


class QuizVerdict(QuizState):
    """POST .../quiz/answer: right or wrong, and the hidden fault revealed."""

    correct: bool
    chosen: StepRef
    broken: StepRef
    fault: RevealedFault
    voter: str = Field(
        description="the learner identity the answer counts for: send it back as X-Voter without cookies"
    )
