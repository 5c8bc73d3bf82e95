"""A lesson about a recorded run (app/lessons/run_lesson.py, run_claims.py; docs/lessons.md): the
shipped "Watch an induction head form" holds against the shipped run in both languages; each kind
of run claim measures what it says on a small fake run and is refused when false; the file's shape
is refused field by field; the player's pages come from the API."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from app.films.runs import DEMO_RUNS
from app.lessons import LessonError, check
from app.lessons import run_schema as rs
from app.lessons.catalogue import read
from app.lessons.claims import ClaimError
from app.lessons.run_claims import measure
from app.schemas import sessions
from app.settings import Settings
from app.traces.store import build_trace
from tests.app.lessons.test_lesson_words import english_words
from tests.app.routes.test_answer_models import conforms
from tests.helpers.client import make_client

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = ROOT / "lessons" / "induction-head.toml"
SETTINGS = dataclasses.replace(Settings(), runs_dir=DEMO_RUNS)


@pytest.fixture(scope="module")
def shipped():
    return check(SHIPPED, SETTINGS, build_trace)


def test_the_shipped_run_lesson_holds_and_names_the_runs_numbers(shipped):
    en = shipped.json("en")
    assert en["run"] == "induction" and len(en["steps"]) == 11
    by_id = {c["id"]: c["values"] for step in en["steps"] for c in step["claims"]}
    # docs/film.md's numbers, each within the bounds the lesson states for another CPU
    assert (by_id["passes"]["step"], by_id["prev_rise"]["step"]) == (801, 746)
    assert (by_id["plateau"]["first"], by_id["plateau"]["last"]) == (100, 665)
    assert by_id["ind_heads"]["heads"] == "1, 2, 3" and by_id["prev_heads"]["heads"] == "0, 1"
    assert by_id["kcomp"]["share"] == pytest.approx(0.204, abs=1e-3) and by_id["kcomp"]["exact"] == "yes"
    films = [s for s in en["steps"] if s["film"] is not None]
    walks = [s for s in en["steps"] if s.get("run_step") is not None]
    assert films[0]["url"] == "/film?run=induction&step=0" and films[0]["index"] is None
    assert {s["run_step"] for s in walks} == {500, 769, 1000}  # checkpoints: they open at once, on any CPU
    assert walks[0]["url"].startswith("/walk?run=induction&run_step=500&") and walks[0]["trace_id"]
    texts = [en["summary"], *(s[k] for s in en["steps"] for k in ("takeaway", "narration"))]
    assert not any("{" in text for text in texts)
    assert "from step 100 to step 665" in en["steps"][1]["narration"]
    # the plateau's loss against ln V, a uniform guess (the run's value, not typed): below it, the
    # model reads its context already
    assert "at a loss near 3.03: below 3.26 (ln 26," in en["steps"][1]["narration"]
    assert by_id["plateau"]["loss"] < np.log(26) < by_id["start"]["loss"]
    assert "(step 746)" in en["steps"][6]["narration"]  # the induction head rises after the previous-token head
    # a film stop's marks: the steps its claims measured
    assert en["steps"][1]["annotations"] == [{"kind": "steps", "from": 100, "to": 665, "label": "the plateau"}]
    assert [(m["from"], m["to"]) for m in en["steps"][5]["annotations"]] == [(600, 700), (900, 1000)]
    assert shipped.json("ru")["steps"][6]["annotations"][0] == {"kind": "steps", "from": 801, "to": 801,
                                                                 "label": "индукционная оценка выше 0,5"}  # fmt: skip


def test_the_shipped_run_lesson_speaks_russian(shipped):
    ru, en = shipped.json("ru"), shipped.json("en")
    assert ru["lang"] == "ru" and ru["title"] == "Как формируется индукционная голова"
    for term in ("значение функции потерь", "голова внимания", "индукционная оценка", "оценка предыдущего токена"):
        assert term in ru["steps"][0]["narration"].lower()  # each defined where it first appears
    assert "контрольная точка" in ru["steps"][2]["narration"]
    assert ru["steps"][0]["title"] == "Запись обучения на шаге 0"
    for r, e in zip(ru["steps"], en["steps"], strict=True):
        assert r["narration"] != e["narration"]
        assert [c["values"] for c in r["claims"]] == [c["values"] for c in e["claims"]]
        for text in (r["takeaway"], r["narration"], *(c["claimed"] + c["measured"] for c in r["claims"])):
            assert english_words(text, {"induction", "docs", "ln"}) == [], text  # ln: the logarithm


def _run(loss, induction, previous=None, steepest=None) -> SimpleNamespace:
    induction = np.asarray(induction, np.float32)
    log = SimpleNamespace(loss=np.asarray(loss, np.float64), induction=induction,
                          previous=induction if previous is None else np.asarray(previous, np.float32))  # fmt: skip
    plan = SimpleNamespace(steps=len(loss))
    return SimpleNamespace(log=log, plan=plan, steepest={"step": steepest or len(loss) - 1})


# 40 steps: 10 falling, 21 flat (the last falling from its next step on: a plateau of 18 measured over windows of 2), the drop (steepest at 32); layer 1's head 2 rises past 0.5 at 31
LOSS = [4 - 0.2 * s for s in range(10)] + [2.0] * 20 + [2.0 - 0.1 * s for s in range(10)]
SCORES = np.full((40, 2, 3), 0.1)
SCORES[31:, 1, 2] = 0.8


@pytest.mark.parametrize(
    ("claim", "holds", "value"),
    [
        (rs.PlateauClaim(kind="plateau", max_fall=1.0, window=2, min=15, max=25), True, ("first", 12)),
        (rs.PlateauClaim(kind="plateau", max_fall=1.0, window=2, min=25), False, ("length", 18)),
        (rs.LossClaim(kind="loss", **{"from": 10}, to=29, min=1.9, max=2.1), True, ("loss", 2.0)),
        (rs.LossClaim(kind="loss", **{"from": 10}, to=29, max=1.5), False, ("loss", 2.0)),
        (rs.CrossingClaim(kind="crossing", score="induction", layer=1, above=0.5, min=30, max=32), True, ("head", 2)),
        (rs.CrossingClaim(kind="crossing", score="induction", layer=1, above=0.5, max=20), False, ("step", 31)),
        (rs.CrossingClaim(kind="crossing", score="induction", layer=0, above=0.5, max=20), False, ("step", -1)),
        (rs.HeadsClaim(kind="heads", score="induction", layer=1, at=35, above=0.5, equals=[2]), True, ("count", 1)),
        (rs.HeadsClaim(kind="heads", score="induction", layer=1, at=20, above=0.5, equals=[2]), False, ("heads", "-")),
        (rs.ScoreClaim(kind="score", score="previous", layer=1, head=2, at=35, min=0.7), True, ("score", 0.8)),
    ],
)
def test_each_run_claim_measures_its_run(claim, holds, value):
    measured = measure(claim, _run(LOSS, SCORES, steepest=32))
    assert measured.ok is holds
    assert measured.values[value[0]] == pytest.approx(value[1])
    assert measured.claimed.text("ru") and measured.measured.text("en")


def test_a_run_claim_naming_what_the_run_lacks_says_so():
    with pytest.raises(ClaimError, match="layer = 5: the run's model has layers 0 to 1"):
        measure(rs.ScoreClaim(kind="score", score="induction", layer=5, head=0, at=1, max=1), _run(LOSS, SCORES))
    with pytest.raises(ClaimError, match="at = 99: the run has steps 0 to 39"):
        measure(
            rs.HeadsClaim(kind="heads", score="induction", layer=1, at=99, above=0.5, equals=[]), _run(LOSS, SCORES)
        )


ONE_STOP = """title = "A run"
run = "induction"
[[steps]]
film = 801
takeaway = "t"
narration = "n {c}"
  [[steps.claims]]
  id = "c"
  {claim}
[[steps]]
run_step = 1000
name = "layers.1.attention.probs"
phase = "forward"
takeaway = "t"
narration = "n"
"""
CROSSING = 'kind = "crossing"\n  score = "induction"\n  layer = 1\n  above = 0.5\n  '
KCOMP = 'kind = "composition"\n  step = 769\n  heads = [0, 1]\n  ahead = 50\n  aligns_best = true\n  '


def _checked(tmp_path: Path, claim: str):
    path = tmp_path / "run-lesson.toml"
    path.write_text(ONE_STOP.replace("{claim}", claim), encoding="utf-8")
    return check(path, SETTINGS, build_trace)


def test_a_false_run_claim_refuses_the_lesson(tmp_path, shipped):
    assert _checked(tmp_path, CROSSING + "min = 780\n  max = 820").json()["steps"][0]["narration"] == "n 801"
    with pytest.raises(LessonError) as refused:
        _checked(tmp_path, CROSSING + "max = 790")
    assert (
        "steps[0] (film 801): claims[0] (crossing 'c') is false against the run induction: claimed layer 1's best "
        "induction score first passes 0.5 at a step at most 790; at step 801 (head 1, 0.519)"
    ) in str(refused.value)
    with pytest.raises(LessonError, match=r"composition 'c'\) is false .* share 0.204"):  # the shipped lesson's, cached
        _checked(tmp_path, KCOMP + "min = 0.3")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (ONE_STOP.replace("{claim}", CROSSING + "max = 9").replace("film = 801", "film = 801\nname = 'x'"),
         "steps[0]: Value error, a film stop shows the run's curves: it has no name"),
        (ONE_STOP.replace("{claim}", CROSSING), "steps[0].claims[0].crossing: Value error, a crossing claim needs min or max"),
        (ONE_STOP.replace("{claim}", KCOMP.replace("50", "500") + "max = 1"),
         "steps[0].claims[0].composition.ahead: Input should be less than or equal to 100"),
        (ONE_STOP.replace("{claim}", CROSSING + "max = 9").replace('run = "induction"', '[spec]\nmodel = "induction"'),
         "a recorded run's stop or claim needs the lesson's run (run = NAME)"),
        (ONE_STOP.replace("{claim}", CROSSING + "max = 9").replace("run_step = 1000\n", ""),
         "steps[1]: a run lesson's stop is a film step (film = S) or a run step (run_step = S)"),
        (ONE_STOP.replace("{claim}", CROSSING + "max = 9") + "[[steps.marks]]\nfrom = 1\nto = 2\n",
         "steps[1]: Value error, marks: a film stop's (film = S); an op's stop has annotations"),
        (ONE_STOP.replace("{claim}", 'kind = "identity"\n  max = 1'),
         "steps[0].claims: a film stop's claims are about the run (its log), not a trace"),
    ],
)  # fmt: skip
def test_the_files_shape_is_refused_naming_the_field(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(LessonError) as refused:
        read(path)
    assert message in str(refused.value)


def test_a_film_mark_names_a_claim_that_measured_steps(tmp_path):
    marked = ONE_STOP.replace("{claim}", CROSSING + "max = 900").replace(
        "[[steps]]\nrun_step", "  [[steps.marks]]\n  claim = 'c'\n[[steps]]\nrun_step"
    )
    path = tmp_path / "marked.toml"
    path.write_text(marked, encoding="utf-8")
    assert check(path, SETTINGS, build_trace).json()["steps"][0]["annotations"][0]["from"] == 801
    path.write_text(marked.replace("claim = 'c'\n", "claim = 'nope'\n"), encoding="utf-8")
    with pytest.raises(LessonError, match=r"steps\[0\] \(film 801\): marks\[0\].claim: no claim named 'nope'"):
        check(path, SETTINGS, build_trace)


def test_a_composition_replaying_too_far_is_refused(tmp_path):
    with pytest.raises(LessonError, match="step = 1400, ahead = 50 replay 450 steps .* over 200"):
        _checked(tmp_path, KCOMP.replace("769", "1400") + "max = 1")


def test_the_api_serves_the_player_its_pages(shipped, tmp_path):
    lessons = tmp_path / "lessons"  # the run lesson alone: the app checks every lesson it is given
    lessons.mkdir()
    (lessons / SHIPPED.name).write_bytes(SHIPPED.read_bytes())
    with make_client(runs_dir=DEMO_RUNS, lessons_dir=lessons, follow_redirects=False) as client:
        started = client.get("/lessons/induction-head", params={"lang": "ru"})
        lesson = conforms(client.get("/api/lessons/induction-head"), sessions.Lesson)  # its answer model
        listed = client.get("/api/lessons").json()["lessons"]
        presented = client.post(
            "/api/sessions", json={"spec": {"run": "induction", "run_step": 500}, "lesson": "induction-head"}
        )
    assert started.status_code == 303
    assert started.headers["location"] == "/film?run=induction&step=0&lang=ru#lesson=induction-head"
    assert lesson["run"] == "induction" and lesson["steps"][2]["url"] == shipped.json()["steps"][2]["url"]
    assert "induction-head" in {entry["name"] for entry in listed}
    assert presented.status_code == 422, presented.text  # a class follows one walkthrough: the lesson is refused
    assert presented.json()["detail"][0]["loc"] == ["body", "lesson"]
    assert "is about a recorded run" in presented.json()["detail"][0]["msg"]
    with make_client(runs_dir=tmp_path, lessons_dir=lessons) as client:  # a server without the run: not offered
        assert client.get("/api/lessons/induction-head").status_code == 404
