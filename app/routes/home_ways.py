"""The home page's ways in (issue 25: "the first 30 seconds"): the default walkthrough (the first
demo model, its first example text and an optimizer, so it ends with the update), the lessons,
joining a class, the quiz, and the real model. Each is one click from the home page; the form
below them builds any other walkthrough."""

from __future__ import annotations

from urllib.parse import urlencode

from app.lessons import load_all
from app.settings import Settings
from app.words import DEFAULT

# The default walkthrough's optimizer: plain SGD, w ← w − lr·g, the update a first reader can
# check by eye after the backward pass.
DEFAULT_OPTIMIZER = "sgd"


def default_walk(models: list[dict]) -> str | None:
    """/walk of the first demo model on its first example text, with the default optimizer; None
    when no demo model is shipped (the form is the way in then)."""
    demo = next((m for m in models if m["shipped"] and m["kind"] == "demo" and m["examples"]), None)
    if demo is None:
        return None
    query = {"model": demo["name"], "text": demo["examples"][0], "optimizer": DEFAULT_OPTIMIZER, "step": "1"}
    return "/walk?" + urlencode(query)


def real_walk(models: list[dict]) -> tuple[str, str] | None:
    """(label, /walk URL) of the first real model installed here, on its first example text."""
    real = next((m for m in models if m["kind"] == "real" and m["examples"]), None)
    if real is None:
        return None
    return real["label"], "/walk?" + urlencode({"model": real["name"], "text": real["examples"][0], "step": "1"})


def ways(settings: Settings, models: list[dict], lang: str = DEFAULT) -> dict:
    """The ways in; each lesson's title in `lang` when it has that language (`lang`: the one it is in)."""
    lessons = [
        {"title": lesson.brief(lang)["title"], "lang": lesson.language(lang), "url": f"/lessons/{name}"}
        for name, lesson in load_all(settings).lessons.items()
    ]
    return {"default_walk": default_walk(models), "lessons": lessons, "real_walk": real_walk(models)}
