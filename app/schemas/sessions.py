"""The answers of app/routes/sessions.py: a classroom session (opened, its state, a student's
answer) and the lessons."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from app.schemas.buglab import RevealedFault
from app.schemas.common import Answer, CanonicalSpec
from app.sessions.state import HeadRef, JacobianRef


class SessionOpened(Answer):
    """POST /api/sessions (201)."""

    code: str = Field(description="what students type at /join")
    join_url: str
    presenter_key: str = Field(description="the X-Presenter-Key of the presenter's requests: shown once")
    spec: CanonicalSpec | None = Field(
        description="the class's walkthrough (a quiz's: with the class's own quiz number); a film class: null"
    )
    trace_id: str | None
    walk_url: str | None = Field(description="the presenter's page of the class's walkthrough; a film class: null")
    film_url: str | None = Field(
        None, description="a film class: the presenter's page, the film (with a lesson: playing it, #lesson=NAME)"
    )


class Reveal(Answer):
    faults: list[RevealedFault]
    broken_step: int | None = Field(description="the backward step of the planted fault")
    first_failing: int | None = Field(description="the first backward step whose gradient check fails")


class Poll(Answer):
    status: Literal["closed", "open", "revealed"]
    question: str
    reveal: Reveal | None
    answers: int = Field(description="students who answered")
    counts: dict[str, int] = Field(
        None, description="answers per step index (the presenter's, or everyone's once revealed)"
    )
    by_address: dict[str, int] = Field(
        None,
        description="the presenter's only: students who answered, per client address (a class behind one router "
        "is one address; one client answering for many shows as an address with more answers than students there)",
    )


class SessionState(Answer):
    """GET /api/sessions/{code}, each event of .../events, and the presenter's changes."""

    code: str
    lang: str = Field(
        description="the presenter's language: the class's, and a joining student's unless they chose one"
    )
    spec: CanonicalSpec | None = Field(
        description="the walkthrough the class is on (a film class: its opened run step's; null on the film)"
    )
    lesson: str | None
    step: int = Field(description="the step the presenter shows (of the walkthrough; a film class on its film: 0)")
    lesson_step: int | None = Field(description="position in the lesson")
    jacobian: JacobianRef | None = Field(description="the softmax row the presenter's Jacobian panel shows")
    head: HeadRef | None = Field(description="the attention head the presenter enlarged")
    followers: int
    poll: Poll
    trace_id: str | None
    walkthrough: str | None = Field(
        description="the id every quiz of this walkthrough shares (a lesson's `walkthrough`); null on a film"
    )
    buglab: bool = Field(description="the walkthrough plants a bug: the poll can open")
    run: str | None = Field(None, description="a film class: the recorded run whose film it follows")
    film_step: int | None = Field(None, description="a film class: the run's step the presenter scrubbed to")
    run_step: int | None = Field(
        None, description="a film class: the run's step opened into the walkthrough (null: the class is on the film)"
    )
    version: int = Field(description="bumped by every change (a late, older state is dropped)")


class SessionEnded(Answer):
    """DELETE /api/sessions/{code}: the class is over on every follower's screen."""

    code: str
    ended: Literal[True] = True


class Answered(Answer):
    """POST /api/sessions/{code}/answers."""

    step: int
    voter: str = Field(
        description="the learner identity the answer counts for: send it back as X-Voter without cookies"
    )


class LessonHead(Answer):
    """What a lesson's entry in the list and its own answer both begin with."""

    name: str
    title: str
    summary: str
    lang: str = Field(
        description="the language of its words: the one asked for (?lang=, cookie, Accept-Language) if it has it"
    )
    trace_id: str
    walkthrough: str = Field(description="the id a class's quiz of this lesson shares with it")
    buglab: bool


class LessonBrief(LessonHead):
    steps: int = Field(description="steps in the lesson")
    url: str = Field(description="the page that plays it")
    query: dict[str, str] = Field(description="the lesson's spec as /walk's query string")


class Lessons(Answer):
    """GET /api/lessons."""

    lessons: list[LessonBrief]


class Claim(Answer):
    """A lesson's claim, true of its trace (a false one refuses the lesson: app/lessons/claims.py)."""

    id: str = Field(description="what the lesson's text names it by ({id.field})")
    kind: str = Field(description="the kind of claim (app/lessons/schema.py)")
    claimed: str = Field(description="what the lesson claims, in words")
    measured: str = Field(description="what the trace measured, in words")
    against: str = Field(description="the trace it was checked against (the spec, its faults)")
    values: dict[str, int | float | str | bool | None] = Field(description="the numbers measured")


class LessonStep(Answer):
    index: int | None = Field(description="the step of the trace (a run lesson's film stop: none)")
    name: str | None
    phase: str | None
    film: int | None = Field(None, description="a run lesson's film stop: the run's step it shows")
    run_step: int | None = Field(None, description="a run lesson's walkthrough stop: the run's step it opens")
    trace_id: str | None = Field(None, description="a run lesson's walkthrough stop: its trace")
    url: str | None = Field(None, description="a run lesson's stop: the page it plays on")
    title: str
    takeaway: str
    narration: str
    next: str
    annotations: list[dict[str, Any]] = Field(description="marks drawn on the step's figures")
    claims: list[Claim] = Field(description="what the step's text claims, each checked against the trace")


class Lesson(LessonHead):
    """GET /api/lessons/{name}."""

    steps: list[LessonStep]
    url: str
    query: dict[str, str]
    spec: CanonicalSpec
    run: str | None = Field(None, description="a recorded run's lesson: the run (GET /api/runs/{name})")
