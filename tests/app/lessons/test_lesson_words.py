"""A lesson's words in both languages (app/lessons/words.py): the shipped lessons keep their
structure in lessons/*.toml and their words in app/words/locales/<lang>/lesson-<name>.ftl. English
reads as it did before the move, byte for byte (english_words.json: the words of main before
it); Russian is complete, its claims checked against the same traces, and holds no English word
outside the allow-list (symbols, recorded names, formulas' identifiers); a teacher's own lesson
may still write its words in the TOML, in one language, and says which."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from app import words
from app.lessons import LessonError, check, load_all
from app.lessons.words import stop_ids
from app.settings import Settings
from app.traces.store import build_trace
from tests.helpers.client import make_client
from xt_cli import main

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
ENGLISH = json.loads((HERE / "english_words.json").read_text(encoding="utf-8"))


def _words(shown: dict) -> dict:
    return {
        "title": shown["title"],
        "summary": shown["summary"],
        "steps": [
            {
                "takeaway": s["takeaway"],
                "narration": s["narration"],
                "next": s["next"],
                "labels": [a["label"] for a in s["annotations"]],
                "claims": [[c["claimed"], c["measured"], c["against"]] for c in s["claims"]],
            }
            for s in shown["steps"]
        ],
    }


@pytest.fixture(scope="module")
def lessons():
    catalogue = load_all(Settings())
    assert not catalogue.errors, "\n".join(str(e) for e in catalogue.errors)
    return catalogue.lessons


def test_english_reads_as_before_the_words_moved(lessons):
    # the lessons whose words moved to the catalogues (a lesson written since has no "before")
    assert {name: _words(lessons[name].json("en")) for name in sorted(ENGLISH)} == ENGLISH


# Latin tokens a Russian lesson may hold: formulas' identifiers and names no language translates.
ALLOWED = {
    *"C I J L N P S T W X",
    *("FFN", "GQA", "LM", "RMSNorm", "RoPE", "SwiGLU", "Softmax", "softmax", "onehot", "inv", "diag", "log"),
    *("max", "mean", "rms", "silu", "silu′", "gate", "up", "out", "concat", "probs", "heads", "head", "hd", "kv"),
    *("attention", "attn", "dL", "dP", "dS", "dW", "dWq", "dX", "dY", "dgate", "dout", "dup", "dlogits", "dscores"),
    *("dheads", "dprobs", "Wk", "Wo", "Wq", "Wv", "j′", "x′"),
    # gpt2-and-llama: the model families' and their ops' names, the feed-forward's weight and bias
    *("GPT", "Llama", "LayerNorm", "GELU", "W1", "W2", "W3", "b1", "b2", "db2", "dW2", "g′"),
    # float16-loss-scaling: the number formats' names, a float's infinity
    *("float16", "bfloat16", "float32", "float64", "inf", "dgate", "dembedding"),
}
TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9_′]*(?:\.[A-Za-z0-9_]+)*")


def _texts(shown: dict) -> list[str]:
    out = [shown["title"], shown["summary"]]
    for step in shown["steps"]:
        out += [step["title"], step["takeaway"], step["narration"], step["next"]]
        out += [a["label"] for a in step["annotations"]]
        out += [f"{c['claimed']} {c['measured']} {c['against']}" for c in step["claims"]]
    return out


def english_words(text: str, recorded: set[str]) -> list[str]:
    """Latin words of `text` outside the allow-list, a recorded name (with a dot or an underscore, or
    a recorded step's own name: embedding, logits) or a one-letter symbol."""
    return [
        token
        for token in TOKEN.findall(text)
        if len(token) > 1 and token not in ALLOWED and token not in recorded and not ({"_", "."} & set(token))
        if not (token.startswith("d") and len(token) == 2)  # dx, dq, dv: a symbol's gradient
    ]


@pytest.mark.parametrize(
    "name",
    [
        "forward-in-ten",
        "backprop-attention",
        "loss-and-first-gradient",
        "find-the-bug",
        "gpt2-and-llama",
        "float16-loss-scaling",
    ],
)
def test_every_russian_stop_is_russian(lessons, name):
    lesson = lessons[name]
    assert lesson.language("ru") == "ru"
    russian, english = lesson.json("ru"), lesson.json("en")
    recorded = {r.name for r in build_trace(lesson.spec).records}
    leaks = {text: english_words(text, recorded) for text in _texts(russian) if english_words(text, recorded)}
    assert leaks == {}
    assert all(text for text in _texts(russian)[:1])
    for ru, en in zip(russian["steps"], english["steps"], strict=True):
        assert ru["takeaway"] != en["takeaway"] and ru["narration"] != en["narration"]
        assert [c["values"] for c in ru["claims"]] == [c["values"] for c in en["claims"]]  # the same measurements
        assert all(c["claimed"] != e["claimed"] for c, e in zip(ru["claims"], en["claims"], strict=True))


def test_russian_numbers_and_claims_read_as_russian(lessons):
    bug = lessons["find-the-bug"].json("ru")
    embedding = next(s for s in bug["steps"] if s["name"] == "embedding")
    tied = {c["id"]: c for c in embedding["claims"]}
    assert tied["tied"]["claimed"] == "проверку не проходят шаги обратного прохода logits"
    assert tied["tied"]["measured"].startswith("не проходят: logits (первый: отн. ошибка 1")
    assert tied["tied_lookup"]["claimed"] == "проверка градиента шага embedding (обратный проход) проходит"
    assert tied["tied_lookup"]["against"] == "спецификация этой трассы с ошибкой tied_embedding_one_contribution"
    loss = lessons["loss-and-first-gradient"].json("ru")
    share = next(s for s in loss["steps"] if s["name"] == "loss" and s["phase"] == "backward")
    assert "1/N = 0,0455" in share["narration"]  # the catalogue's FORMAT, a decimal comma


def test_every_message_of_a_lesson_is_one_of_its_stops():
    """No dead stop in any language: each lesson-<words>-… message names a stop of that lesson."""
    from tests.app.words.test_catalogues import messages

    for path in sorted((ROOT / "lessons").glob("*.toml")):
        import tomllib

        data = tomllib.loads(path.read_text(encoding="utf-8"))
        stops = {f"lesson-{data['words']}", *stop_ids(data["words"], [_Stop(s) for s in data["steps"]])}
        for lang in words.LANGUAGES:
            own = {key for key in messages(lang) if key.startswith(f"lesson-{data['words']}")}
            assert own == stops, (lang, path.name)


class _Stop:
    def __init__(self, step: dict):
        self.name, self.phase = step.get("name"), step.get("phase")
        self.film, self.run_step = step.get("film"), step.get("run_step")  # a run lesson's stops


def test_the_api_answers_in_the_asked_language():
    with make_client() as client:
        ru = client.get("/api/lessons/find-the-bug", params={"lang": "ru"}).json()
        en = client.get("/api/lessons/find-the-bug").json()
        listed = client.get("/api/lessons", headers={"Accept-Language": "ru-RU,ru;q=0.9"}).json()["lessons"]
    assert (ru["lang"], ru["title"], en["lang"], en["title"]) == ("ru", "Найдите ошибку", "en", "Find the bug")
    assert ru["steps"][0]["annotations"][0]["label"].startswith("значок над формулами")
    assert {entry["name"]: entry["title"] for entry in listed}["forward-in-ten"] == "Прямой проход за десять шагов"


TEACHERS = """title = "Мой урок"
lang = "ru"
[spec]
model = "induction"
text = "xkqvbmxkqvbmxkqvbmxkqvbm"
[[steps]]
name = "embedding"
phase = "forward"
takeaway = "Каждая буква — вектор."
narration = "{N} позиций."
"""


def test_a_teachers_own_lesson_writes_its_words_in_one_language(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(TEACHERS, encoding="utf-8")
    lesson = check(path, Settings(), build_trace)
    assert lesson.language("en") == "ru" and lesson.json("en")["steps"][0]["narration"] == "23 позиций."
    both = TEACHERS.replace('lang = "ru"', 'lang = "ru"\nwords = "forward-in-ten"')
    path.write_text(both, encoding="utf-8")
    with pytest.raises(LessonError, match="a lesson has a title"):
        check(path, Settings(), build_trace)


def test_a_missing_russian_stop_refuses_the_lesson(tmp_path, monkeypatch, capsys):
    """`xt lesson check` checks every language: a stop without its Russian words is named."""
    text = (ROOT / "lessons" / "forward-in-ten.toml").read_text(encoding="utf-8")
    path = tmp_path / "renamed.toml"
    path.write_text(text.replace('name = "logits"', 'name = "logits"\n# moved', 1), encoding="utf-8")
    assert main(["lesson", "check", str(path)]) == 0
    real = words.t

    def without_one(lang, message_id, **values):
        if lang == "ru" and message_id == "lesson-forward-in-ten-forward-logits.narration":
            raise words.MissingWords("no narration")
        return real(lang, message_id, **values)

    monkeypatch.setattr(words, "t", without_one)
    assert main(["lesson", "check", str(path)]) == 1
    assert "steps[8] (logits, forward).narration (ru): no narration" in capsys.readouterr().err
