"""A quiz lesson's text never answers its own poll: on each step where the bug lab can plant a
fault, the takeaway, narration, marks and checked claims shown there neither name that fault nor
repeat its description (three words in a row of it), since in a class that step may be the
broken one (issue 25: "A nonlinearity's backward multiplies by its derivative, not by itself"
stood on the step whose planted bug multiplies by silu(gate) where its derivative belongs). In
every language: the lesson's words and the fault's description in that language."""

from __future__ import annotations

import re

from app import words
from app.buglab.catalogue import description
from app.lessons import load_all
from app.settings import Settings
from xt_core.lab.faults import CATALOGUE

STOP = {"the", "a", "an", "of", "by", "its", "is", "in", "to", "and", "as", "it", "this", "each", "one"}
STOP |= {"и", "в", "во", "на", "не", "по", "с", "к", "из", "что", "это", "его", "её", "их", "а", "как", "же", "только"}


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"[^\W_]+", text.lower()) if w not in STOP]


def _triples(text: str) -> set[tuple[str, ...]]:
    words = _words(text)
    return {tuple(words[i : i + 3]) for i in range(len(words) - 2)}


def _shown(step: dict) -> str:
    notes = " ".join(note.get("label") or "" for note in step.get("annotations") or [])
    claims = " ".join(f"{c['against']} {c['claimed']} {c['measured']}" for c in step.get("claims") or [])
    return f"{step['takeaway']} {step['narration']} {step.get('next') or ''} {notes} {claims}"


def test_no_step_of_a_quiz_lesson_names_the_fault_it_may_hide():
    catalogue = load_all(Settings())
    quizzes = [lesson for lesson in catalogue.lessons.values() if lesson.spec.quiz is not None]
    assert quizzes, "find-the-bug is a quiz lesson"
    for lesson, lang in ((lesson, lang) for lesson in quizzes for lang in words.LANGUAGES):
        assert lesson.language(lang) == lang, (lesson.name, lang)
        n_layer = lesson.spec.cfg.n_layer
        for step in lesson.json(lang)["steps"]:
            text = _shown(step)
            for name, fault in CATALOGUE.items():
                if step["phase"] != "backward":
                    continue
                if step["name"] not in {fault.step_name(layer) for layer in range(n_layer)}:
                    continue
                assert name not in text, (lesson.name, step["name"], name)
                shared = _triples(text) & _triples(description(fault, lang))
                assert not shared, (lesson.name, lang, step["name"], name, sorted(shared))
