"""A lesson's words in every language. A shipped lesson's TOML keeps its structure (steps,
annotations, claims, spec) and its words live in the catalogues, one file per lesson and language
(app/words/locales/<lang>/lesson-<name>.ftl), so a third language is a file: the title is message
`lesson-<name>` (its .summary an attribute), and each stop is `lesson-<name>-<phase>-<recorded
name, dots as dashes>` (`-2` for a second stop on the same step) with attributes .takeaway,
.narration, .next and .mark-<j> (annotation j's label). Numbers come from the claims as named
values: `{ $id }` is claim id's main number, `{ $id-field }` one of its fields, and
`{ FORMAT($id-field, spec: ".2f") }` prints one as the author chose.

A teacher's own lesson may instead write its words in the TOML (a title, each step's takeaway and
narration: one language, the file's `lang`), filled by app.lessons.template.
"""

from __future__ import annotations

from app import words
from app.lessons.claims import Measured
from app.lessons.schema import LessonFile
from app.lessons.template import TemplateError, fill


def _field(step, key: str):
    return step.get(key) if isinstance(step, dict) else getattr(step, key, None)


def stop_ids(name: str, steps) -> list[str]:
    """Each stop's message id (schema.LessonStep or the checked dicts: name and phase; a run lesson's
    film stop `lesson-<name>-film-<S>`, its run step's stop `lesson-<name>-step-<S>-<phase>-<op>`)."""
    seen: dict[str, int] = {}
    ids = []
    for step in steps:
        film, run_step = _field(step, "film"), _field(step, "run_step")
        op = f"{_field(step, 'phase')}-{str(_field(step, 'name')).replace('.', '-')}"
        if film is not None:
            base = f"lesson-{name}-film-{film}"
        else:
            base = f"lesson-{name}-{op}" if run_step is None else f"lesson-{name}-step-{run_step}-{op}"
        seen[base] = seen.get(base, 0) + 1
        ids.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
    return ids


def named_values(values: dict[str, Measured | float | int]) -> dict[str, float | int | str]:
    """The values a lesson's message may name: $id and $id-field for each claim, the walkthrough's own."""
    out: dict[str, float | int | str] = {}
    for key, value in values.items():
        if isinstance(value, Measured):
            out[key] = value.values[value.primary]
            out.update({f"{key}-{field}": found for field, found in value.values.items()})
        else:
            out[key] = value
    return out


def _one(text: str) -> str:
    return " ".join(text.split())  # a message's lines read as one paragraph, as the TOML's did


class _Reader:
    """One language's messages of one lesson; each message that is missing or does not format
    is a problem (`where`: the step and field), never half a sentence."""

    def __init__(self, lang: str, values: dict):
        self.lang, self.values, self.problems = lang, values, []

    def text(self, message_id: str, where: str, required: bool = True) -> str:
        bundle = words.bundle(self.lang)
        base, _, attribute = message_id.partition(".")
        message = bundle.get_message(base) if bundle.has_message(base) else None
        if message is None or (attribute and attribute not in message.attributes):
            if required:
                self.problems.append(f"{where} ({self.lang}): no message {message_id} in app/words/locales/{self.lang}")
            return ""
        try:
            return _one(words.t(self.lang, message_id, **self.values))
        except words.MissingWords as exc:
            self.problems.append(f"{where} ({self.lang}): {exc}")
            return ""


def from_catalogues(name: str, steps: list[dict], values: dict) -> tuple[dict[str, dict], list[str]]:
    """Every language's words of the lesson `name` (by language: title, summary, and per step its
    takeaway, narration, next and labels), and the problems found."""
    named, texts, problems = named_values(values), {}, []
    for lang in words.LANGUAGES:
        read = _Reader(lang, named)
        title = read.text(f"lesson-{name}", "title")
        out = {"title": title, "summary": read.text(f"lesson-{name}.summary", "summary", False) if title else ""}
        out["steps"] = []
        for i, (stop, step) in enumerate(zip(stop_ids(name, steps), steps, strict=True)):
            where = f"steps[{i}] ({_label(step)})"
            out["steps"].append(
                {
                    "takeaway": read.text(f"{stop}.takeaway", f"{where}.takeaway"),
                    "narration": read.text(f"{stop}.narration", f"{where}.narration"),
                    "next": read.text(f"{stop}.next", f"{where}.next", False),
                    "labels": [
                        read.text(f"{stop}.mark-{j}", f"{where}.annotations[{j}].label", note["kind"] == "note")
                        for j, note in enumerate(step["annotations"])
                    ],
                }
            )
        texts[lang] = out
        problems += read.problems
    return texts, problems


def _label(step: dict) -> str:
    if step.get("film") is not None:
        return f"film {step['film']}"
    run = "" if step.get("run_step") is None else f"run step {step['run_step']}: "
    return f"{run}{step['name']}, {step['phase']}"


def from_file(lesson: LessonFile, steps: list[dict], values: dict) -> tuple[dict[str, dict], list[str]]:
    """The words the file writes (in its one language), filled from the measured values."""
    problems = []

    def filled(text: str, where: str) -> str:
        try:
            return fill(text, values)
        except TemplateError as exc:
            problems.append(f"{where}: {exc}")
            return text

    out = {"title": lesson.title, "summary": filled(lesson.summary, "summary"), "steps": []}
    for i, (written, step) in enumerate(zip(lesson.steps, steps, strict=True)):
        where = f"steps[{i}] ({_label(step)})"
        out["steps"].append(
            {key: filled(getattr(written, key), f"{where}.{key}") for key in ("takeaway", "narration", "next")}
            | {
                "labels": [
                    filled(note.label, f"{where}.annotations[{j}].label")
                    for j, note in enumerate(written.annotations or written.marks)  # a film stop's marks
                ]
            }
        )
    return {lesson.lang: out}, problems


def with_words(step: dict, text: dict, said: list[tuple], lang: str) -> dict:
    """A checked step with its words (and its claims' sentences) in one language."""
    notes = [note | {"label": label} for note, label in zip(step["annotations"], text["labels"], strict=True)]
    claims_said = [measured.json(claim, against, lang) for claim, measured, against in said]
    if step.get("film") is not None:  # a run lesson's film stop: its title says the step, in `lang`
        step = step | {"title": words.t(lang, "lesson-run-film-title", step=step["film"])}
    return (
        step
        | {key: text[key] for key in ("takeaway", "narration", "next")}
        | {"annotations": notes, "claims": claims_said}
    )
