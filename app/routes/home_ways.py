"""The home page's ways in (issue 25: "the first 30 seconds"): the default walkthrough (the first
walk, app.spec.form.first_walk: the one the form below starts on too), the lessons,
joining a class, the quiz, and the real model. Each is one click from the home page; the form
below them builds any other walkthrough."""

from __future__ import annotations

import math
from urllib.parse import urlencode

from app.films.runs import DEMO_RUN, run_names
from app.lessons import load_all
from app.settings import Settings
from app.spec.form import first_walk
from app.words import DEFAULT


def default_walk(models: list[dict]) -> str | None:
    """/walk of the first walk (app.spec.form.first_walk: the form's Start opens the same); None
    when there is no model to start on (the form is the way in then)."""
    first = first_walk(models)
    return None if first is None else "/walk?" + urlencode(first | {"step": "1"})


def real_walk(models: list[dict]) -> tuple[str, str] | None:
    """(label, /walk URL) of the first real model installed here, on its first example text."""
    real = next((m for m in models if m["kind"] == "real" and m["examples"]), None)
    if real is None:
        return None
    return real["label"], "/walk?" + urlencode({"model": real["name"], "text": real["examples"][0], "step": "1"})


# The lesson player's default pace (static/js/class/lesson.js DEFAULT_PACE): a lesson's length
# on the home page is its stops at that pace.
SECONDS_A_STOP = 30


def ways(settings: Settings, models: list[dict], lang: str = DEFAULT) -> dict:
    """The ways in; each lesson's title and summary in `lang` when it has that language (`lang`: the
    one it is in), its stops and minutes at the player's pace."""
    lessons = []
    for name, lesson in load_all(settings).lessons.items():
        brief = lesson.brief(lang)
        stops = len(lesson.steps)
        lessons.append(
            {
                "title": brief["title"],
                "summary": brief["summary"],
                "lang": lesson.language(lang),
                "url": f"/lessons/{name}",
                "stops": stops,
                "minutes": math.ceil(stops * SECONDS_A_STOP / 60),
            }
        )
    first = first_walk(models)
    return {
        "default_walk": default_walk(models),
        "first_updates": bool(first and first.get("optimizer")),  # the hero's walk ends with the update
        "lessons": lessons,
        "real_walk": real_walk(models),
        # the shipped run's film (docs/film.md), when this server offers it (`xt serve --demo`)
        "film": f"/film?run={DEMO_RUN}" if DEMO_RUN in run_names(settings) else None,
    }
