"""Lessons: the shipped ones check out (against the traces their specs build), a bad file gets
an error naming the file, the step or field and the reason, and `xt lesson check` says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.lessons import LessonError, check, load_all
from app.settings import Settings
from app.traces.store import build_trace
from tests.helpers.client import make_client
from xt_cli import main

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = sorted((ROOT / "lessons").glob("*.toml"))
REQUIRED = {"forward-in-ten", "backprop-attention", "loss-and-first-gradient", "find-the-bug"}


def test_the_shipped_lessons_check_out():
    catalogue = load_all(Settings())
    assert not catalogue.errors, "\n".join(str(e) for e in catalogue.errors)
    assert set(catalogue.lessons) >= REQUIRED
    for lesson in catalogue.lessons.values():
        assert 8 <= len(lesson.steps) <= 15, lesson.name
        assert all(step["takeaway"] and step["narration"] for step in lesson.steps)
    assert catalogue.lessons["find-the-bug"].spec.faults  # a bug-lab lesson


GOOD = (ROOT / "lessons" / "forward-in-ten.toml").read_text()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("layers.1.attention.probs", "layers.1.attention.prob"), "no forward step named 'layers.1.attention.prob'"),
        (("offset = -5", "offset = -40"), "misses every cell of the 23×23 tensor"),
        (("row = 6\n", "row = 30\n"), "row 30 is outside the tensor's 23 rows"),
        (('figure = "output.logits"', 'figure = "output.logit"'), "no figure 'output.logit' on this step"),
        (('model = "induction"', 'model = "nope"'), "spec.model: the server refuses this spec: unknown model 'nope'"),
        (('text = "xkqvbm', 'text = "XKQVBM'), "spec.text: the server refuses this spec"),
        (('phase = "loss"', 'phase = "lost"'), "steps[9].phase"),
        (('phase = "loss"', 'phase = "loss"\ntakeway = "Logits"'), "steps[9].takeway: Extra inputs are not permitted"),
        (("[[steps]]", "[[steps]"), "is not valid TOML"),
    ],
)
def test_a_bad_lesson_says_what_and_where(tmp_path, edit, message):
    path = tmp_path / "broken.toml"
    path.write_text(GOOD.replace(*edit, 1))
    with pytest.raises(LessonError) as caught:
        check(path, Settings(), build_trace)
    assert message in str(caught.value)
    assert str(caught.value).startswith("broken.toml: ")


def test_xt_lesson_check(tmp_path, capsys):
    assert main(["lesson", "check", *map(str, SHIPPED)]) == 0
    assert "forward-in-ten.toml: ok" in capsys.readouterr().out
    bad = tmp_path / "bad.toml"
    bad.write_text(GOOD.replace("layers.1.attention.probs", "layers.9.attention.probs", 1))
    assert main(["lesson", "check", str(bad)]) == 1
    assert "no forward step named 'layers.9.attention.probs'" in capsys.readouterr().err


def test_a_bad_file_is_left_out_at_startup_not_served(tmp_path, caplog):
    (tmp_path / "good.toml").write_text(GOOD)
    (tmp_path / "bad.toml").write_text(GOOD.replace('model = "induction"', 'model = "nope"'))
    with make_client(lessons_dir=tmp_path) as client:
        names = [lesson["name"] for lesson in client.get("/api/lessons").json()["lessons"]]
        lesson = client.get("/api/lessons/good").json()
        assert client.get("/api/lessons/bad").status_code == 404
    assert names == ["good"]
    assert "lesson left out: bad.toml: spec.model" in caplog.text
    stripe = lesson["steps"][4]["annotations"][0]
    assert stripe["kind"] == "diagonal" and stripe["shape"] == [23, 23] and len(stripe["polygons"]) == 1
