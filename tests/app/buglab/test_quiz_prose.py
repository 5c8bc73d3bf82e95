"""A sealed quiz step's words judge nothing: for every fault of the bug lab, a quiz hiding it
shows, at the broken step and every backward step after it, the words the correct trace's
step shows sealed (its explanation, figure titles, notes, hover texts, axis titles; the
softmax Jacobian panel's too), and its check answers no message: its numbers differ, never a
sentence that says whether they are right. A verdict computed from the hidden fault's numbers
("not zero, so this backward is not the softmax's") would name the broken step before the
answer (issue 32, finding 6). Once answered, the verdict may speak. In English for every fault; in
Russian for the faults whose quiz seals every backward step (the loss's) and the two softmaxes'
(whose explanations state measured row sums). The GPT-2 family's own faults on a GPT-2 spec, in both
languages."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from app.buglab import quiz
from app.spec import TraceSpec, resolve
from app.spec.faults import quiz_fault
from app.steps import view
from app.steps.context import TraceContext
from app.traces.store import build_trace
from tests.helpers.client import make_client, post_trace
from tests.helpers.json_diff import differences, numbers_as_hash
from tests.helpers.specs import SMALL_SPEC
from xt_core.lab.faults import CATALOGUE


@pytest.fixture(scope="module")
def app_client():
    with make_client(quiz_secret="prose") as c:
        yield c


GPT2_SPEC = {**SMALL_SPEC, "config": {**SMALL_SPEC["config"], "n_kv_head": 4, "family": "gpt2"}}
SPECS = {"llama": SMALL_SPEC, "gpt2": GPT2_SPEC}


@pytest.fixture(scope="module")
def corrects(app_client) -> dict:
    """Per family, the correct trace's summary and context: built when a case first asks."""
    made = {}

    def of(family: str) -> tuple[dict, TraceContext]:
        if family not in made:
            settings = app_client.app.state.settings
            spec = resolve(TraceSpec.model_validate(SPECS[family]), settings)
            made[family] = post_trace(app_client, SPECS[family]), TraceContext(spec, build_trace(spec), settings)
        return made[family]

    return of


def _sealed_view(ctx: TraceContext, index: int, lang: str) -> dict:
    """The correct trace's step as a quiz's learner would see it before the answer."""
    answer = view.step_view_json(ctx, index, 0, 0, None, seal=quiz.seal_step, lang=lang).decode()
    return json.loads(answer.replace(ctx.spec.id, "ID"))


def _quiz_hiding(client, fault: str, spec: dict) -> tuple[int, int]:
    settings = client.app.state.settings
    cfg = resolve(TraceSpec.model_validate(spec), settings).cfg
    return next((q, layer) for q in range(1000) for name, layer in [quiz_fault(q, cfg, settings)] if name == fault)


def _answer(client, trace: dict, path: str, **params) -> dict:
    """An answer of `trace` with the trace's id written as ID (download links carry it)."""
    response = client.get(f"/api/traces/{trace['id']}{path}", params=params)
    assert response.status_code == 200, response.text
    return json.loads(response.text.replace(trace["id"], "ID"))


# The keys whose strings are words a person reads: the explanation, a figure's title, notes,
# axis and colour-bar titles, hover templates, trace names and annotations. Not the numbers'
# own labels (which entry is largest: where the fault moved it, not a verdict).
WORDS = {"explanation", "title", "text", "notes", "note", "hovertemplate", "name", "label", "warning"}


def _words(value, path: str = "", under_words: bool = False) -> dict[str, str]:
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in _words(item, f"{path}.{key}", key in WORDS).items()}
    if isinstance(value, list):
        return {k: v for i, item in enumerate(value) for k, v in _words(item, f"{path}[{i}]", under_words).items()}
    return {path: numbers_as_hash(value)} if under_words and isinstance(value, str) else {}


def _leaks(sealed: dict, correct: dict) -> list:
    """Where the sealed answer's words differ from the correct trace's (numbers aside)."""
    return differences(_words(correct), _words(sealed), limit=3)


def _sealed_words_that_differ(
    learner, hidden: dict, correct_ctx: TraceContext, correct: dict, layer: int, lang: str
) -> dict:
    """{where: differences} between the words the quiz `hidden` shows sealed and the correct trace's,
    at its broken step and every backward step after it, and on its softmax Jacobian panels."""
    leaks = {}
    for step in hidden["steps"]:
        if step["phase"] != "backward" or step["index"] < hidden["broken"]:
            continue
        sealed = _answer(learner, hidden, f"/steps/{step['index']}", lang=lang)
        assert sealed["gradcheck"] == {"sealed": True} and sealed["warnings"] == []
        if found := _leaks(sealed, _sealed_view(correct_ctx, step["index"], lang)):
            leaks[step["name"]] = found
    check = _answer(learner, hidden, f"/steps/{hidden['broken']}/check", lang=lang)  # the badge's own answer
    assert check["gradcheck"] == {"sealed": True} and check["warning"] is None, check
    for where in ({"layer": layer, "head": 1}, {"layer": "output"}):
        sealed = _answer(learner, hidden, "/jacobian", lang=lang, **where)
        assert sealed["sealed"] is True
        clean = _answer(learner, correct, "/jacobian", lang=lang, **where)
        if found := _leaks(sealed, {k: v for k, v in clean.items() if k in sealed}):
            leaks[f"jacobian {where}"] = found
    return leaks


RUSSIAN = ("batch_mean_missing", "softmax_ce_normalized_twice", "softmax_missing_sum_term")
# make test asks the faults whose sealed prose had leaked (finding 6, and the output softmax's
# row sum) in both languages; make test-long asks every other fault too (about 8 s more)
FIRST = RUSSIAN


def _cases() -> list:
    """The faults a quiz on SMALL_SPEC's (Llama) config can draw; the GPT-2 family's own on GPT2_SPEC
    (the faults both families share are asked on Llama's), one of them in make test."""
    from app.settings import Settings

    cfg = resolve(TraceSpec.model_validate(SMALL_SPEC), Settings()).cfg
    drawn = sorted(f for f in CATALOGUE if not CATALOGUE[f].requires(cfg))
    english = [pytest.param(f, "en", "llama", marks=() if f in FIRST else pytest.mark.long) for f in drawn]
    gpt2 = sorted(f for f in CATALOGUE if CATALOGUE[f].family == "gpt2")
    on_gpt2 = [
        pytest.param(f, lang, "gpt2", marks=() if (f, lang) == (gpt2[0], "en") else pytest.mark.long)
        for f in gpt2
        for lang in ("en", "ru")
    ]
    return english + [(fault, "ru", "llama") for fault in RUSSIAN] + on_gpt2


@pytest.mark.parametrize(("fault", "lang", "family"), _cases())
def test_no_sealed_step_of_a_quiz_judges_its_numbers(app_client, corrects, fault, lang, family):
    correct, correct_ctx = corrects(family)
    learner = TestClient(app_client.app)  # a learner of its own: nothing answered, nothing probed
    number, layer = _quiz_hiding(learner, fault, SPECS[family])
    hidden = post_trace(learner, {**SPECS[family], "quiz": number})
    name = CATALOGUE[fault].step_name(layer)
    hidden["broken"] = next(s["index"] for s in hidden["steps"] if s["name"] == name and s["phase"] == "backward")
    leaks = _sealed_words_that_differ(learner, hidden, correct_ctx, correct, layer or 0, lang)
    assert not leaks, f"a sealed quiz hiding {fault} judges its numbers: {leaks}"

    # the verdict the seal held back speaks once the quiz is answered
    answered = learner.post(f"/api/traces/{hidden['id']}/quiz/answer", json={"step": hidden["broken"]})
    assert answered.status_code == 200 and answered.json()["correct"], answered.text
    assert _answer(learner, hidden, f"/steps/{hidden['broken']}")["gradcheck"]["passed"] is False
