"""A hostile lesson file (issue 24, finding 6): nested 5,000 arrays deep it cannot be parsed
(tomllib recurses), and it is left out and logged like any other bad file; the server starts and
serves the good lessons."""

from __future__ import annotations

from app.lessons import LessonError, load_all
from app.lessons.catalogue import read
from app.settings import Settings
from tests.app.sessions.test_lessons import GOOD
from tests.helpers.client import make_client

DEEP = "x = " + "[" * 5000 + "]" * 5000 + "\n"


def test_a_deeply_nested_file_is_a_lesson_error(tmp_path):
    path = tmp_path / "deep.toml"
    path.write_text(DEEP)
    try:
        read(path)
    except LessonError as exc:
        assert "nested too deeply" in str(exc) and exc.path == path
    else:
        raise AssertionError("a 5,000-deep file was read")


def test_a_deeply_nested_lesson_is_left_out_at_startup(tmp_path, caplog):
    (tmp_path / "good.toml").write_text(GOOD)
    (tmp_path / "deep.toml").write_text(DEEP)
    catalogue = load_all(Settings(lessons_dir=tmp_path))
    assert list(catalogue.lessons) == ["good"] and [e.path.name for e in catalogue.errors] == ["deep.toml"]
    with make_client(lessons_dir=tmp_path) as client:
        assert [lesson["name"] for lesson in client.get("/api/lessons").json()["lessons"]] == ["good"]
        assert client.get("/healthz").status_code == 200
    assert "lesson left out: deep.toml: is nested too deeply" in caplog.text
