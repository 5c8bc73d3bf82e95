"""A lesson about a recorded run exported (app/export/run_lesson.py, `xt export --lesson`): the run's
film and the walkthroughs of the lesson's run steps, each page playing the lesson from its answer saved
beside its other answers, each stop's page an exported page's name (no server URL left); the single file
is refused, naming why; the lesson is asked in the export's language."""

from __future__ import annotations

import gzip
import json
import re
from types import SimpleNamespace

import pytest

from app.export import ExportError
from app.export.keys import file_name
from app.export.run_lesson import export_run_lesson, run_lesson
from tests.app.export.test_film_export import _manifest, _server_urls
from tests.helpers.export import FILM_RUN, FILM_STEP, RUN_LESSON

STEP_PAGE = f"film-{FILM_RUN}-step-{FILM_STEP:06d}.html"
LESSON_FILE = f"{file_name(f'lessons/{RUN_LESSON}')}.json.gz"


def _answer(path) -> dict:
    return json.loads(gzip.decompress(path.read_bytes()))


def test_the_lessons_directory_holds_the_film_and_its_run_steps_walkthrough(run_lesson_export):
    directory = run_lesson_export.directory
    assert sorted(p.name for p in directory.iterdir()) == ["answers", STEP_PAGE, "index.html", "static"]
    film = (directory / "index.html").read_text(encoding="utf-8")
    walk = (directory / STEP_PAGE).read_text(encoding="utf-8")
    # both pages play the lesson (static_source.js opens #lesson=NAME), neither links to a server
    assert _manifest(film)["lesson"] == RUN_LESSON and _manifest(film)["film"]["pages"] == {str(FILM_STEP): STEP_PAGE}
    assert _manifest(walk)["lesson"] == RUN_LESSON and _manifest(walk)["films"] == {FILM_RUN: "index.html"}
    assert _server_urls(film) == [] and _server_urls(walk) == []
    assert [carried.pages for carried in run_lesson_export.exported.films] == [{FILM_STEP: STEP_PAGE}]


def test_every_page_reads_the_lesson_whose_stops_are_the_exported_pages(run_lesson_export):
    directory = run_lesson_export.directory
    folder = directory / _manifest((directory / STEP_PAGE).read_text(encoding="utf-8"))["folder"]
    on_film, on_walk = _answer(directory / "answers" / LESSON_FILE), _answer(folder / LESSON_FILE)
    assert on_film == on_walk and on_film["run"] == FILM_RUN and on_film["title"] == "A tiny run"
    stops = on_film["steps"]
    assert [stop["url"] for stop in stops] == ["index.html?step=3", STEP_PAGE, "index.html?step=12"]
    assert [stop["takeaway"] for stop in stops][1] == f"Step {FILM_STEP}'s embedding."
    walk_summary = _answer(folder / "trace.json.gz")
    assert stops[1]["trace_id"] == walk_summary["id"] and stops[1]["index"] is not None  # the walk page holds it
    for stop in stops:  # every stop's page is in the export
        assert (directory / stop["url"].split("?")[0]).is_file()
    listed = _answer(folder / "lessons.json.gz")["lessons"]
    assert [(entry["name"], entry["url"]) for entry in listed] == [
        (RUN_LESSON, f"index.html?step=3#lesson={RUN_LESSON}")
    ]
    texts = [path.read_bytes() for path in directory.rglob("*lessons*.json.gz")]
    assert texts and not any(re.search(rb'"/(?:film|walk|lessons)\b', gzip.decompress(t)) for t in texts)


def _fake_client(lesson: dict, asked: list[str]):
    return SimpleNamespace(get=lambda url: asked.append(url) or SimpleNamespace(status_code=200, json=lambda: lesson))


def test_a_run_lesson_is_asked_in_the_exports_language_and_refused_as_one_file(tmp_path):
    """Before anything is built: the lesson in the export's language, and a single file refused (the lesson
    plays on several pages), naming the directory export instead."""
    lesson = {"name": "induction-head", "run": "induction",
              "steps": [{"film": 0, "run_step": None}, {"film": None, "run_step": 1000}, {"film": None, "run_step": 500}]}  # fmt: skip
    asked = []
    assert run_lesson(_fake_client(lesson, asked), "induction-head", "ru") == lesson
    assert run_lesson(_fake_client({"run": None}, asked), "forward-in-ten", "en") is None  # an ordinary lesson
    assert asked == ["/api/lessons/induction-head?lang=ru", "/api/lessons/forward-in-ten?lang=en"]
    said = r"steps 500, 1000, several pages, so it exports as a directory only: --out DIR, without --single-file"
    with pytest.raises(ExportError, match=said):
        export_run_lesson(None, lesson, tmp_path / "out", tmp_path / "one.html", None, "en")
    assert not (tmp_path / "out").exists()
