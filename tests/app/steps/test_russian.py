"""The step answers in Russian (issue 32): every step of a sample of specs (the default
walkthrough, grouped-query attention, a bug-lab fault, an AdamW update after training), asked
with ?lang=ru, holds no English word in its explanation, warnings, figure notes and numbers-table
columns outside ALLOWED (symbols, function names and code identifiers that formulas use as they
are) and the trace's recorded tensor names (the words inside its rules too); the language comes from LangDep (query, cookie,
Accept-Language) and the answers' cache keeps the languages apart. Figure and axis titles are
the names' catalogue's (not checked here); English is pinned byte for byte by test_snapshot.py."""

from __future__ import annotations

import re

import pytest

from tests.helpers.client import make_client, post_trace
from tests.helpers.specs import DIVERGING_SPEC, SMALL_CONFIG, SMALL_SPEC
from xt_core.lab.faults import CATALOGUE

SPECS = {
    "default walkthrough": {},
    "grouped-query attention": SMALL_SPEC,
    "fault": {"config": SMALL_CONFIG, "text": "abcabcabcab", "faults": ["softmax_missing_sum_term"]},
    "adamw after training": {
        "config": SMALL_CONFIG,
        "text": "hello hello",
        "optimizer": {"name": "adamw"},
        "train_steps": 2,
    },
}
# Written as they are in Russian text too: function names and symbols of the formulas (exp, silu,
# onehot, in/out of a shape), the seed's C++ variable names, the table columns skip/branch/sum,
# optimizer fields (lr) and xt itself.
ALLOWED = {
    *("cos", "sin", "exp", "log", "ln", "max", "mean", "diag", "softmax", "silu", "sign", "onehot", "inv"),
    *("dres", "dx", "dxb", "dv", "dn", "hd", "id", "in", "out", "lr", "loss", "target", "norm"),
    *("skip", "branch", "sum", "xt"),
}
WORD = re.compile(r"^[A-Za-z][a-z]+$")  # a word, not a symbol (dL/dx), a name (RoPE) or code (np.add.at)


def english_words(text: str, allowed: set[str]) -> list[str]:
    words = (token.strip("()[]«».,:;!?\"'|") for token in text.split())
    return [word for word in words if WORD.match(word) and word not in allowed]


def _prose(view: dict) -> list[str]:
    """The words of a step answer that this layer writes (not the titles: the names' catalogue):
    its explanation, warnings, the words inside its rules (LaTeX \\text{...}), notes, table columns."""
    texts = [view["explanation"], *view["warnings"]]
    for rule in view["formula"].values():
        texts += re.findall(r"\\text\{([^{}]*)\}", rule["latex"]) if rule else []
    for figure in view["figures"]:
        texts += [figure["note"]] if figure.get("note") else []
        texts += figure["table"]["columns"] if figure.get("table") else []
    return texts


@pytest.fixture(scope="module")
def client():
    with make_client() as c:
        yield c


@pytest.mark.parametrize("name", SPECS)
def test_every_step_answer_in_russian_holds_no_english_word(client, name):
    summary = post_trace(client, SPECS[name])
    recorded = {step["name"] for step in summary["steps"]}  # "embedding", "logits": names, not words
    found = {}
    for step in summary["steps"]:
        view = client.get(f"/api/traces/{summary['id']}/steps/{step['index']}", params={"lang": "ru"}).json()
        english = [w for text in [view["title"], *_prose(view)] for w in english_words(text, ALLOWED | recorded)]
        if english:
            found[step["name"]] = english[:8]
    assert found == {}
    # the walkthrough's outline (its blocks, groups and step titles) in the summary's language
    outline = client.post("/api/traces", params={"lang": "ru"}, json=SPECS[name]).json()
    texts = [b["label"] for b in outline["blocks"]] + [g["label"] for g in outline["groups"]]
    texts += [text for step in outline["steps"] for text in (step["title"], step["op_title"])]
    allowed = ALLOWED | recorded
    assert {text: english_words(text, allowed) for text in texts if english_words(text, allowed)} == {}


def test_the_language_of_a_step_answer_is_the_request_s_and_cached_apart(client):
    summary = post_trace(client, SMALL_SPEC)
    url = f"/api/traces/{summary['id']}/steps/0"
    russian = client.get(url, params={"lang": "ru"}).json()["explanation"]
    english = client.get(url).json()["explanation"]  # after the Russian: the cache holds both
    assert english.startswith("Each input token id picks one row")
    assert russian.startswith("Каждый входной id токена выбирает одну строку")
    assert client.get(url, headers={"Accept-Language": "ru-RU,ru;q=0.9"}).json()["explanation"] == russian
    client.cookies.set("xt_lang", "ru")
    try:
        assert client.get(url).json()["explanation"] == russian
        assert client.get(url, params={"lang": "en"}).json()["explanation"] == english  # the query first
    finally:
        client.cookies.clear()


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the diverging run overflows, as it should
def test_the_check_jacobian_and_divergence_speak_russian(client):
    fault = post_trace(client, SPECS["fault"])
    name = CATALOGUE["softmax_missing_sum_term"].step_name(0)
    broken = next(s["index"] for s in fault["steps"] if s["phase"] == "backward" and s["name"] == name)
    warning = client.get(f"/api/traces/{fault['id']}/steps/{broken}/check", params={"lang": "ru"}).json()["warning"]
    assert warning.startswith("Проверка градиента не пройдена: относительная ошибка")
    for layer in ("0", "output"):
        note = client.get(f"/api/traces/{fault['id']}/jacobian", params={"layer": layer, "lang": "ru"}).json()["note"]
        assert english_words(note, ALLOWED) == [], note
    diverged = client.post("/api/traces", params={"lang": "ru"}, json=DIVERGING_SPEC).json()["first_nonfinite"]
    assert diverged["advice"].startswith("обучение разошлось"), diverged
    assert english_words(diverged["advice"], ALLOWED) == []


def test_an_enlarged_head_and_a_comparison_speak_russian(client):
    a = post_trace(client, SMALL_SPEC)
    b = post_trace(client, {**SMALL_SPEC, "dtype": "float64"})
    scores = next(s["index"] for s in a["steps"] if s["name"].endswith(".scores") and s["phase"] == "forward")
    head = client.get(f"/api/traces/{a['id']}/steps/{scores}/head", params={"head": 1, "lang": "ru"}).json()
    assert "Замаскированные (будущие) ключи" in head["note"] and english_words(head["note"], ALLOWED) == []
    compared = client.get(f"/api/traces/{a['id']}/steps/{scores}/compare/{b['id']}", params={"lang": "ru"}).json()
    notes = [f["note"] for t in compared["tensors"] for f in t["figures"] if f["note"]]
    assert notes and all(english_words(note, ALLOWED) == [] for note in notes), notes
