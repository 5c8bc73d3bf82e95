"""What a session holds and what it shows: the stored fields, the request bodies that change
them, and the state as the presenter and as a student see it (GET /api/sessions/{code} and
each event of .../events).

Stored fields (one flat mapping, JSON values; a Redis hash or a dict):
  code, key (SHA-256 of the presenter key), spec (canonical), trace_id, walkthrough (the id
  every quiz of the same walkthrough shares: app.sessions.rules.walkthrough_id), lesson, limits
  ({n_steps, backward, T, n_head, n_layer}), buglab, step, lesson_step, jacobian, head, poll,
  version (bumped by every change: a listener drops an older state arriving late).
A film class (a recorded run's film, docs/film.md) also keeps run (the run's name), run_steps (its
step count), film_step (the step the presenter scrubbed to) and run_step (the run's step the class
opened into the walkthrough; null: the class is on the film, and spec, trace_id, walkthrough and
limits are null too). A walkthrough class keeps run, film_step and run_step null; a session stored
before film classes has none of them (read as null).
"""

from __future__ import annotations

from collections import Counter
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from app import words
from app.errors import not_a_boolean
from app.spec import TraceSpec

# A class speaks its presenter's language on the shared screen (app/routes/sessions.py: why);
# the poll's question is stored in it, as every follower's state carries it.
POLL_QUESTION = "class-poll-question"


class SessionCreate(BaseModel):
    """The body of POST /api/sessions: a walkthrough's class (`spec`) or a film's (`run`), not both."""

    model_config = ConfigDict(extra="forbid")
    spec: TraceSpec | None = Field(None, description="the walkthrough the class follows (as POST /api/traces)")
    run: str | None = Field(
        None, max_length=64, description="a film class: the recorded run whose film it follows (GET /api/runs)"
    )
    film_step: int = Field(0, ge=0, description="a film class: the run's step the film opens on")
    lesson: str | None = Field(None, max_length=100, description="a lesson name from GET /api/lessons")

    _numbers = field_validator("film_step", mode="before")(not_a_boolean)


class JacobianRef(BaseModel):
    """The softmax row the presenter's Jacobian panel shows."""

    model_config = ConfigDict(extra="forbid")
    layer: int | Literal["output"] = Field(description='a layer index, or "output" for the output softmax')
    head: int = Field(0, ge=0)
    pos: int = Field(ge=0, description="query position (attention) or position (output)")

    _numbers = field_validator("layer", "head", "pos", mode="before")(not_a_boolean)


class HeadRef(BaseModel):
    """The attention head the presenter enlarged: a figure id of the step and its head."""

    model_config = ConfigDict(extra="forbid")
    figure: str = Field(max_length=200)
    head: int = Field(ge=0)

    _numbers = field_validator("head", mode="before")(not_a_boolean)


class StateUpdate(BaseModel):
    """The body of POST /api/sessions/{code}/state: only the keys given change (null clears
    lesson, lesson_step, jacobian and head; run_step null takes a film class back to its film)."""

    model_config = ConfigDict(extra="forbid")
    step: int | None = Field(None, ge=0, description="index into the trace's steps")
    film_step: int | None = Field(None, ge=0, description="a film class: the run's step the film is scrubbed to")
    run_step: int | None = Field(
        None, ge=0, description="a film class: the run's step opened into the walkthrough (null: back to the film)"
    )
    lesson: str | None = Field(None, max_length=100)
    lesson_step: int | None = Field(None, ge=0, description="position in the lesson (0-based)")
    jacobian: JacobianRef | None = None
    head: HeadRef | None = None

    _numbers = field_validator("step", "lesson_step", "film_step", "run_step", mode="before")(not_a_boolean)


class PollAction(BaseModel):
    model_config = ConfigDict(extra="forbid")
    action: Literal["open", "close", "reveal"] = Field(
        description="open: a new poll (earlier answers dropped); close: no more answers; reveal: the fault on every screen"
    )


class AnswerBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    step: int = Field(description="index of the backward step the student names as broken")

    _number = field_validator("step", mode="before")(not_a_boolean)


def closed_poll(lang: str = words.DEFAULT) -> dict:
    return {"status": "closed", "question": words.t(lang, POLL_QUESTION), "reveal": None}


def compose(fields: dict, answers: dict[str, int], followers: int, by_address: dict[str, int] | None = None) -> dict:
    """The presenter's view of a session: every field but the key, the number following, and
    the poll with its histogram (answers per step index) and the answers per client address
    (`by_address`, most first: a class behind one router is one address; one client voting
    many times shows as an address with more votes than the students there)."""
    counts = Counter(answers.values())
    poll = {**fields["poll"], "answers": len(answers), "counts": {str(k): v for k, v in sorted(counts.items())}}
    poll["by_address"] = dict(sorted((by_address or {}).items(), key=lambda item: (-item[1], item[0])))
    return {
        "code": fields["code"],
        "lang": fields.get("lang", words.DEFAULT),  # a session stored before it had a language: English
        "spec": fields["spec"],
        "lesson": fields["lesson"],
        "step": fields["step"],
        "lesson_step": fields["lesson_step"],
        "jacobian": fields["jacobian"],
        "head": fields["head"],
        "followers": followers,
        "poll": poll,
        "trace_id": fields["trace_id"],
        "walkthrough": fields.get("walkthrough", fields["trace_id"]),
        "buglab": fields["buglab"],
        "run": fields.get("run"),
        "film_step": fields.get("film_step"),
        "run_step": fields.get("run_step"),
        "version": fields["version"],
    }


def student_view(state: dict) -> dict:
    """A student's view: the histogram stays with the presenter until the reveal (seeing the
    class's answers would steer theirs); the classmates' addresses stay with the presenter."""
    poll = state["poll"]
    hidden = ("by_address",) if poll["status"] == "revealed" else ("by_address", "counts")
    return {**state, "poll": {k: v for k, v in poll.items() if k not in hidden}}
