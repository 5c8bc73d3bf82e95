"""What a presenter's change may say, checked against the session's walkthrough (its step count,
positions, heads and layers) and the lessons; and what the bug hunt reveals."""

from __future__ import annotations

from app.errors import SpecError
from app.lessons import Lesson
from app.sessions.state import StateUpdate
from app.spec import ResolvedSpec, spec_id
from app.traces.checks import ChecksJob
from app.words.said import Said


def _between(field: tuple, value: int, size: int, what: str) -> None:
    if not 0 <= value < size:
        raise SpecError(
            ("body", *field),
            Said("error-out-of-range", field=field[-1], last=str(size - 1), why=what, value=str(value)),
        )


def _check_jacobian(jacobian: dict, limits: dict) -> None:
    if jacobian["layer"] != "output":
        _between(("jacobian", "layer"), jacobian["layer"], limits["n_layer"], Said("error-why-the-model-layers"))
    _between(("jacobian", "head"), jacobian["head"], limits["n_head"], Said("error-why-the-model-heads"))
    _between(("jacobian", "pos"), jacobian["pos"], limits["T"], Said("error-why-the-trace-positions"))


def _check_step(step: int | None, limits: dict) -> None:
    if step is None:
        raise SpecError(("body", "step"), Said("error-step-null"))
    _between(("step",), step, limits["n_steps"], Said("error-why-the-trace-steps"))


def walkthrough_id(spec: ResolvedSpec) -> str:
    """The id every quiz of one walkthrough shares (a class draws its own quiz number, so its
    trace id is its own): the spec's id with the quiz number set to 0; a spec without a quiz: its id."""
    if spec.quiz is None:
        return spec.id
    return spec_id({**spec.canonical, "quiz": 0})


def session_walkthrough(fields: dict) -> str:
    return fields.get("walkthrough", fields["trace_id"])


def _walk_limits(fields: dict, field: str) -> dict:
    """The limits of the walkthrough the class is on; a film class on its film has none (SpecError)."""
    if fields.get("limits") is None:
        raise SpecError(("body", field), Said("error-film-class-on-film", field=field))
    return fields["limits"]


def _check_walk_moves(changes: dict, fields: dict) -> None:
    if "step" in changes:
        _check_step(changes["step"], _walk_limits(fields, "step"))
    if changes.get("jacobian") is not None:
        _check_jacobian(changes["jacobian"], _walk_limits(fields, "jacobian"))
    if changes.get("head") is not None:
        limits = _walk_limits(fields, "head")
        _between(("head", "head"), changes["head"]["head"], limits["n_head"], Said("error-why-the-model-heads"))


def check_lesson(name: str, fields: dict, lessons: dict[str, Lesson]) -> None:
    """A walkthrough class plays a lesson of its walkthrough; a film class, a lesson about its run."""
    lesson = lessons.get(name)
    if lesson is None:
        raise SpecError(("body", "lesson"), Said("error-unknown-lesson", lesson=repr(name)))
    if fields.get("run") is not None:
        if lesson.run != fields["run"]:
            raise SpecError(("body", "lesson"), Said("error-film-class-lesson", lesson=repr(name), run=fields["run"]))
    elif walkthrough_id(lesson.spec) != session_walkthrough(fields):
        raise SpecError(("body", "lesson"), Said("error-session-lesson-other-spec", lesson=repr(lesson.name)))


def check_film_step(field: str, value: int | None, fields: dict) -> None:
    """`value` (film_step or run_step) a step of the film class's run; a walkthrough class has no film."""
    if fields.get("run") is None:
        raise SpecError(("body", field), Said("error-film-class-no-film", field=field))
    if value is not None:
        why = Said("error-why-the-run-steps", run=fields["run"])
        _between((field,), value, fields["run_steps"], why)


def checked_changes(update: StateUpdate, fields: dict, lessons: dict[str, Lesson]) -> dict:
    """The fields a state update changes, each checked; SpecError (422) naming the field. `fields`:
    the session's, with a step opened from the film (`run_step`) already in them (the route's)."""
    changes = update.model_dump(exclude_unset=True)
    if "film_step" in changes:
        if changes["film_step"] is None:
            raise SpecError(("body", "film_step"), Said("error-film-step-null"))
        check_film_step("film_step", changes["film_step"], fields)
    _check_walk_moves(changes, fields)
    if changes.get("lesson") is not None:
        check_lesson(changes["lesson"], fields, lessons)
    if changes.get("lesson_step") is not None:
        name = changes.get("lesson", fields["lesson"])
        if name is None or name not in lessons:
            raise SpecError(("body", "lesson_step"), Said("error-lesson-step-no-lesson"))
        _between(
            ("lesson_step",),
            changes["lesson_step"],
            len(lessons[name].steps),
            Said("error-why-lesson-steps", lesson=repr(name)),
        )
    if "lesson" in changes and changes["lesson"] is None:
        changes["lesson_step"] = None
    changes.pop("run_step", None)  # the route's: the walkthrough it opens is in `fields`
    return changes


def check_answer(step: int, fields: dict) -> None:
    backward = fields["limits"]["backward"]
    if step not in backward:
        raise SpecError(
            ("body", "step"),
            Said("error-answer-not-backward", step=str(step), first=backward[0], last=backward[-1]),
        )


def reveal(faults: list[dict], job: ChecksJob | None) -> dict:
    """The planted fault(s) with their steps (app.buglab.views.revealed_faults, in the class's
    language: each fault's `name` lets a student's page in another language say it in its own), and
    the first backward step whose gradient check fails (None when the checks had not got that far)."""
    first = job.first_failing()[0] if job is not None else None
    return {
        "faults": faults,
        "broken_step": faults[0]["step"] if faults else None,
        "first_failing": first,
    }
