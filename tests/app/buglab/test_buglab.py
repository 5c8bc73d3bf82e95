"""The bug lab through the API and the pages: faults in the spec, the catalogue, every
step's check (the first failing step is the faulted op), the faulty-vs-correct diff, and a
quiz that never names its fault before an answer."""

from __future__ import annotations

import re
import threading
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import parse_qs, urlsplit

import pytest
from fastapi.testclient import TestClient

import xt_core
from app import words
from app.buglab.catalogue import description
from app.settings import Settings
from app.spec import SpecError, TraceSpec, resolve, spec_from_query
from app.spec.faults import quiz_fault
from app.traces.cache import LRU
from app.traces.checks import ChecksBusy, ChecksRunner
from tests.helpers.specs import SMALL_CONFIG, SMALL_SPEC
from xt_core import Config
from xt_core.lab.faults import CATALOGUE

# Every name and every description of the catalogue, in every language: a quiz's pages must show none of them.
SECRETS = [*CATALOGUE, *(description(fault, lang) for fault in CATALOGUE.values() for lang in words.LANGUAGES)]
MHA_UNTIED = {**SMALL_CONFIG, "n_kv_head": 4, "tie_embeddings": False}


def post(client, **spec) -> dict:
    response = client.post("/api/traces", json={**SMALL_SPEC, **spec})
    assert response.status_code == 200, response.text
    return response.json()


def checks(client, trace_id: str) -> dict:
    response = client.get(f"/api/traces/{trace_id}/checks", params={"wait": "true"})
    assert response.status_code == 200, response.text
    return response.json()


def error_loc(response) -> list:
    assert response.status_code == 422, response.text
    return response.json()["detail"][0]["loc"]


def step_of(trace: dict, name: str, phase: str = "backward") -> int:
    return next(s["index"] for s in trace["steps"] if s["name"] == name and s["phase"] == phase)


# ---------------------------------------------------------------------- GET /api/faults


GPT2_FAULTS = {name for name, fault in CATALOGUE.items() if fault.family == "gpt2"}


def test_catalogue_lists_every_fault_with_the_step_it_breaks(client):
    body = client.get("/api/faults").json()
    assert body["fault_layer"] == 1  # the default config has 2 layers: the last one
    faults = {f["name"]: f for f in body["faults"]}
    assert set(faults) == set(CATALOGUE)
    for fault in faults.values():
        assert {"name", "op", "description", "correct", "faulty", "applies", "reason", "op_title"} <= set(fault)
        on_llama = CATALOGUE[fault["name"]].family == "llama"
        assert fault["applies"] == on_llama and (fault["reason"] is None) == on_llama
    assert faults["softmax_missing_sum_term"]["op"] == "layers.1.attention.probs"
    assert faults["softmax_missing_sum_term"]["op_title"] == "Layer 1 · Attention softmax over keys — backward"
    assert faults["batch_mean_missing"]["op"] == "loss"


def test_catalogue_says_which_faults_apply_to_a_config(client):
    body = client.get(
        "/api/faults", params={"n_head": 4, "n_kv_head": 4, "tie_embeddings": "false", "n_layer": 3}
    ).json()
    ruled_out = {f["name"]: f["reason"] for f in body["faults"] if not f["applies"]}
    assert set(ruled_out) == {"gqa_kv_not_summed", "tied_embedding_one_contribution", *GPT2_FAULTS}
    assert "grouped-query" in ruled_out["gqa_kv_not_summed"]
    assert ruled_out["layernorm_missing_mean"] == "needs the GPT-2 family (family = gpt2)"
    chosen_layer = client.get("/api/faults", params={"n_layer": 3, "fault_layer": 0}).json()
    assert {f["name"]: f["op"] for f in chosen_layer["faults"]}["rope_forward_rotation"] == "layers.0.attention.q_rot"


def test_catalogue_for_a_checkpoint_uses_its_config(client):
    model = client.get("/api/models").json()["models"][0]
    body = client.get("/api/faults", params={"model": model["name"]}).json()
    n_layer = model["config"]["n_layer"]
    assert body["fault_layer"] == n_layer - 1
    gqa = next(f for f in body["faults"] if f["name"] == "gqa_kv_not_summed")
    assert gqa["applies"] == (model["config"]["n_kv_head"] < model["config"]["n_head"])
    assert error_loc(client.get("/api/faults", params={"model": "no-such-model"})) == ["query", "model"]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"n_head": "x"}, "n_head"),
        ({"n_embd": 15}, "n_embd"),
        ({"fault_layer": 2}, "fault_layer"),
        ({"nope": 1}, "nope"),
    ],
)
def test_catalogue_rejects_a_bad_query_naming_the_field(client, query, field):
    assert error_loc(client.get("/api/faults", params=query)) == ["query", field]


# ---------------------------------------------------------------------- faults in the spec


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"faults": ["no_such_fault"]}, "faults"),
        ({"faults": ["gqa_kv_not_summed"], "config": MHA_UNTIED}, "faults"),  # n_kv_head == n_head
        ({"faults": ["tied_embedding_one_contribution"], "config": MHA_UNTIED}, "faults"),
        ({"faults": ["batch_mean_missing", "batch_mean_twice"]}, "faults"),  # both change step "loss"
        ({"faults": ["attention_scale_missing"], "fault_layer": 1}, "fault_layer"),  # 1 layer: only layer 0
        ({"quiz": 3, "faults": ["attention_scale_missing"]}, "quiz"),
        ({"quiz": -1}, "quiz"),
    ],
)
def test_bad_faults_answer_422_naming_the_field(client, extra, field):
    response = client.post("/api/traces", json={**SMALL_SPEC, **extra})
    assert error_loc(response)[-1] == field
    if field == "faults" and "no_such_fault" in str(extra):
        assert "no_such_fault" in response.json()["detail"][0]["msg"]


def test_faults_are_part_of_the_canonical_spec_and_the_permalink(client, trace):
    faulty = post(client, faults=["softmax_missing_sum_term", "attention_out_reads_dres"])
    assert faulty["id"] != trace["id"]
    assert faulty["spec"]["faults"] == ["attention_out_reads_dres", "softmax_missing_sum_term"]  # sorted
    assert faulty["spec"]["fault_layer"] == 0 and faulty["spec"]["quiz"] is None
    assert faulty["query"]["faults"] == "attention_out_reads_dres,softmax_missing_sum_term"
    settings = client.app.state.settings
    assert resolve(spec_from_query(faulty["query"]), settings).id == faulty["id"]
    reordered = {**faulty["query"], "faults": "softmax_missing_sum_term,attention_out_reads_dres"}
    reordered.pop("fault_layer")  # the default layer, said or not: the same trace
    assert resolve(spec_from_query(reordered), settings).id == faulty["id"]
    assert resolve(TraceSpec.model_validate(faulty["spec"]), settings).id == faulty["id"]
    assert trace["spec"]["faults"] == [] and trace["spec"]["fault_layer"] is None  # no faults: no layer


def test_a_walk_permalink_with_faults_renders_the_planted_bug(client):
    response = client.get("/walk", params={**post(client, faults=["rope_forward_rotation"])["query"], "step": 40})
    assert response.status_code == 200, response.text
    html = response.text
    assert "rope_forward_rotation" in html and CATALOGUE["rope_forward_rotation"].faulty in html
    assert "Layer 0 · RoPE rotates the queries — backward" in html


# ---------------------------------------------------------------------- GET .../checks


def test_without_faults_every_step_passes(client, trace):
    body = checks(client, trace["id"])
    assert body["complete"] and body["done"] == body["total"] == len(trace["steps"])
    assert [s["index"] for s in body["steps"]] == list(range(len(trace["steps"])))
    assert all(s["passed"] for s in body["steps"])
    assert body["first_failing"] is None and body["first_failing_final"]
    assert body["tolerance"] == 1e-6  # float32 traces are checked through their float64 twin
    assert body["figure"]["layout"]["yaxis"]["type"] == "log"


@pytest.mark.parametrize(
    "fault", ["softmax_ce_normalized_twice", "attention_out_reads_dres", "gqa_kv_not_summed", "batch_mean_missing"]
)
def test_the_first_failing_step_is_the_faulted_op_and_the_loss_is_unchanged(client, trace, fault):
    faulty = post(client, faults=[fault])
    assert faulty["loss"] == trace["loss"]
    body = checks(client, faulty["id"])
    expected = step_of(faulty, CATALOGUE[fault].step_name(0))
    assert body["first_failing"] == expected and body["first_failing_final"]
    by_index = {s["index"]: s for s in body["steps"]}
    assert not by_index[expected]["passed"]
    assert all(
        by_index[s["index"]]["passed"] for s in faulty["steps"] if s["phase"] == "backward" and s["index"] < expected
    )
    # the step view's badge agrees with the chart
    assert client.get(f"/api/traces/{faulty['id']}/steps/{expected}").json()["gradcheck"]["passed"] is False


def _tiny_trace(seed: int) -> xt_core.Trace:
    cfg = Config(vocab_size=8, n_layer=1, n_head=2, n_kv_head=2, n_embd=8, ffn_hidden=12, seq_len=4)
    return xt_core.forward_backward(cfg, xt_core.init_params(cfg, seed=seed), [1, 2, 3], [2, 3, 4])


def test_running_checks_jobs_hold_a_bounded_amount_of_traces():
    """A running job keeps its trace (no rebuild per step) and drops it when done; beyond
    max_running_bytes a new job is refused (the route answers 503 + Retry-After)."""
    first, second = _tiny_trace(0), _tiny_trace(1)
    gate = threading.Event()
    with ThreadPoolExecutor(1) as pool:
        pool.submit(gate.wait, 60)  # the pool is busy: the first job stays running
        runner = ChecksRunner(pool, LRU(1000), max_running_bytes=first.nbytes() + 1)
        job = runner.start("first", first)
        with pytest.raises(ChecksBusy):
            runner.start("second", second)
        assert runner.start("first", first) is job  # the same trace's job is found, not refused
        gate.set()
        job.finished.result(timeout=60)
        assert job.trace is None and all(r.passed for r in job.results())
        assert len(job.results()) == len(first.records)
        runner.start("second", second).finished.result(timeout=60)  # room again


def test_checks_of_an_unknown_trace_answer_404(client):
    assert client.get("/api/traces/0123456789abcdef0123/checks").status_code == 404


# ---------------------------------------------------------------------- GET .../steps/{index}/diff


def test_diff_shows_where_the_gradient_first_goes_wrong(client):
    faulty = post(client, faults=["softmax_missing_sum_term"])
    broken = step_of(faulty, "layers.0.attention.probs")
    at = client.get(f"/api/traces/{faulty['id']}/steps/{broken}/diff").json()
    arriving, *contributions = at["tensors"]
    assert arriving["identical"] and not any(c["identical"] for c in contributions)
    assert "this op's backward is the broken one" in at["verdict"]
    assert at["correct_id"] == post(client)["id"]  # the same spec without faults
    figure = at["figures"][0]
    assert figure["role"] == "diff" and len(figure["figure"]["data"]) == 3
    before = client.get(f"/api/traces/{faulty['id']}/steps/{broken - 1}/diff").json()  # ran just before
    assert all(t["identical"] for t in before["tensors"])
    after = client.get(f"/api/traces/{faulty['id']}/steps/{broken + 1}/diff").json()  # fed by the broken op
    assert not after["tensors"][0]["identical"] and "already wrong" in after["verdict"]


def test_diff_needs_a_faulty_trace_and_a_backward_step(client, trace):
    assert client.get(f"/api/traces/{trace['id']}/steps/30/diff").status_code == 404
    faulty = post(client, faults=["softmax_missing_sum_term"])
    assert error_loc(client.get(f"/api/traces/{faulty['id']}/steps/3/diff")) == ["path", "index"]
    assert client.get(f"/api/traces/{faulty['id']}/steps/999/diff").status_code == 404


# ---------------------------------------------------------------------- the quiz


def test_quiz_faults_fit_the_config_and_spread_over_the_catalogue():
    gqa_tied = Config(n_layer=1, n_head=4, n_kv_head=2, tie_embeddings=True)
    mha_untied = Config(n_layer=1, n_head=4, n_kv_head=4, tie_embeddings=False)
    settings = Settings(quiz_secret="one class")
    assert {quiz_fault(seed, gqa_tied, settings)[0] for seed in range(300)} == set(CATALOGUE) - GPT2_FAULTS
    picked = {quiz_fault(seed, mha_untied, settings)[0] for seed in range(300)}
    assert picked == set(CATALOGUE) - {"gqa_kv_not_summed", "tied_embedding_one_contribution", *GPT2_FAULTS}
    gpt2 = Config(n_layer=1, n_head=4, n_kv_head=4, tie_embeddings=True, family="gpt2")
    on_gpt2 = {quiz_fault(seed, gpt2, settings)[0] for seed in range(300)}
    assert on_gpt2 >= GPT2_FAULTS and not {"rmsnorm_missing_projection", "rope_forward_rotation"} & on_gpt2
    assert quiz_fault(7, gqa_tied, settings) == quiz_fault(7, gqa_tied, Settings(quiz_secret="one class"))


def test_the_quiz_number_alone_does_not_give_the_fault_or_its_layer():
    """The fault is the server's secret's: the same number on two servers, or offline, hides
    another fault; a layer-specific fault's layer is drawn too, and never in the spec."""
    two_layers = Config(n_layer=2, n_head=4, n_kv_head=2, tie_embeddings=True)
    ours, theirs = Settings(quiz_secret="ours"), Settings(quiz_secret="theirs")
    assert [quiz_fault(q, two_layers, ours) for q in range(40)] != [
        quiz_fault(q, two_layers, theirs) for q in range(40)
    ]
    layered = [
        layer for name, layer in (quiz_fault(q, two_layers, ours) for q in range(200)) if "{L}" in CATALOGUE[name].step
    ]
    assert set(layered) == {0, 1}
    spec = resolve(TraceSpec.model_validate({**SMALL_SPEC, "quiz": 3}), ours)
    assert spec.canonical["fault_layer"] is None and spec.canonical["faults"] == [] and spec.faults
    assert error_loc_of(
        lambda: resolve(TraceSpec.model_validate({**SMALL_SPEC, "quiz": 3, "fault_layer": 0}), ours)
    ) == (
        "body",
        "fault_layer",
    )


def error_loc_of(call) -> tuple:
    with pytest.raises(SpecError) as raised:
        call()
    return raised.value.loc


def hidden_step(client, quiz: dict) -> tuple[str, int]:
    """(the fault a quiz trace hides, its step): what only the server knows."""
    spec = resolve(TraceSpec.model_validate(quiz["spec"]), client.app.state.settings)
    name, layer = quiz_fault(spec.quiz, spec.cfg, client.app.state.settings)
    return name, step_of(quiz, CATALOGUE[name].step_name(layer))


def assert_hides_the_fault(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"the quiz gives its fault away: {secret!r}"


def test_the_quiz_never_names_its_fault_before_an_answer(client, trace):
    quiz = client.post("/api/traces", json={**SMALL_SPEC, "quiz": 11})
    assert quiz.status_code == 200
    assert_hides_the_fault(quiz.text)
    body = quiz.json()
    assert body["spec"]["faults"] == [] and body["spec"]["quiz"] == 11
    assert body["loss"] != trace["loss"]  # the quiz runs on weights of its own (tests/app/buglab/test_quiz_weights.py)
    assert_hides_the_fault(body["id"])
    page = client.get("/walk", params={**body["query"], "step": 0})
    assert page.status_code == 200
    assert_hides_the_fault(page.text)
    for step in body["steps"]:
        assert_hides_the_fault(client.get(f"/api/traces/{body['id']}/steps/{step['index']}").text)
    sealed = client.get(f"/api/traces/{body['id']}/checks", params={"wait": "true"})
    assert sealed.status_code == 403 and "probe" in sealed.json()["detail"]
    # and it does hide one: once answered, the first failing step is its op
    _, broken = hidden_step(client, body)
    assert client.post(f"/api/traces/{body['id']}/quiz/answer", json={"step": broken}).status_code == 200
    assert checks(client, body["id"])["first_failing"] == broken


def quiz_hiding(client, fault: str) -> tuple[int, int]:
    """(a quiz number, its layer) whose hidden fault is `fault` on this server."""
    settings = client.app.state.settings
    cfg = resolve(TraceSpec.model_validate(SMALL_SPEC), settings).cfg
    return next((q, layer) for q in range(1000) for name, layer in [quiz_fault(q, cfg, settings)] if name == fault)


@pytest.mark.parametrize("fault", ["softmax_missing_sum_term", "softmax_ce_normalized_twice"])
def test_a_sealed_jacobian_keeps_the_softmax_check_it_would_be(client, fault):
    """A softmax's fault shows in its Jacobian as J·dL/dp unlike the recorded gradient: side by
    side they are that step's check. Sealed, the answer holds J·dL/dp and not what it is compared with.
    A learner of its own (the same app, no cookie yet): an earlier test of this module may have
    answered the quiz of this number, and the server's random secret decides which number it is."""
    client = TestClient(client.app)
    number, layer = quiz_hiding(client, fault)
    quiz = post(client, quiz=number)
    base = f"/api/traces/{quiz['id']}"
    where = {"layer": "output"} if fault.startswith("softmax_ce") else {"layer": layer, "head": 1}
    sealed = client.get(f"{base}/jacobian", params=where)
    assert sealed.status_code == 200, sealed.text
    body = sealed.json()
    assert body["sealed"] is True and body["p"] and body["dprobs"] and body["chain"] and body["figure"]
    assert not {"recorded", "max_abs_error", "max_rel_error", "ok", "vectors_figure"} & set(body)
    assert client.post(f"{base}/quiz/answer", json={"step": hidden_step(client, quiz)[1]}).json()["correct"]
    opened = client.get(f"{base}/jacobian", params=where).json()
    assert opened["sealed"] is False and opened["ok"] is False and opened["recorded"] != opened["chain"]


def verdicts(view: dict) -> list:
    """What in a step view would tell right from wrong."""
    return [view["gradcheck"].get("passed"), view["gradcheck"].get("max_rel_error"), view["warnings"]]


def test_the_quiz_keeps_its_verdict_until_answered_except_where_probed(client):
    quiz = post(client, quiz=23)
    base = f"/api/traces/{quiz['id']}"
    _, broken = hidden_step(client, quiz)
    fresh = {
        "answered": False,
        "probes": {"used": [], "max": 3, "left": 3},
        "class": False,
        "revealed": False,
        "quiz": True,
    }
    assert client.get(f"{base}/quiz").json() == fresh
    for step in quiz["steps"]:
        view = client.get(f"{base}/steps/{step['index']}").json()
        assert view["gradcheck"] == {"sealed": True} and view["warnings"] == [], step
    # the numbers stay (the Jacobian's columns); the comparison with the correct backward costs a probe
    sealed_diff = client.get(f"{base}/steps/{broken}/diff")
    assert sealed_diff.status_code == 403 and "costs a probe" in sealed_diff.json()["detail"]
    jacobian = client.get(f"{base}/jacobian", params={"layer": 0, "head": 1, "pos": 3}).json()
    assert jacobian["sealed"] is True and jacobian["chain"] and "ok" not in jacobian and "recorded" not in jacobian

    probe = client.post(f"{base}/quiz/probe", json={"step": broken}).json()
    assert probe["gradcheck"]["passed"] is False and probe["probes"] == {"used": [broken], "max": 3, "left": 2}
    probed = client.get(f"{base}/steps/{broken}").json()
    assert verdicts(probed)[0] is False and any("gradient check failed" in w for w in probed["warnings"])
    diff = client.get(f"{base}/steps/{broken}/diff").json()
    assert diff["verdict"] and diff["figures"] and not all(t["identical"] for t in diff["tensors"])
    assert client.post(f"{base}/quiz/probe", json={"step": broken}).json()["probes"]["left"] == 2  # again: free
    others = [s["index"] for s in quiz["steps"] if s["index"] != broken][:3]
    for index in others[:2]:
        assert client.post(f"{base}/quiz/probe", json={"step": index}).status_code == 200
    spent = client.post(f"{base}/quiz/probe", json={"step": others[2]})
    assert spent.status_code == 409 and spent.json()["detail"] == (
        f"all 3 of your probes of this quiz are spent (steps {broken}, {others[0]}, {others[1]}); "
        "answer the quiz to see every check"
    )
    in_russian = client.post(f"{base}/quiz/probe", json={"step": others[2]}, params={"lang": "ru"}).json()["detail"]
    assert in_russian.startswith("пробы в этой викторине закончились: потрачены все 3 (шаги ")
    assert client.get(f"{base}/steps/{others[2]}").json()["gradcheck"] == {"sealed": True}
    assert error_loc(client.post(f"{base}/quiz/probe", json={"step": 999})) == ["body", "step"]

    answer = client.post(f"{base}/quiz/answer", json={"step": broken}).json()
    assert answer["correct"] is True and answer["answered"] is True and answer["probes"]["left"] == 0
    assert client.get(f"{base}/steps/{others[2]}").json()["gradcheck"]["passed"] in (True, False)
    assert "verdict" in client.get(f"{base}/steps/{broken}/diff").json()
    assert "ok" in client.get(f"{base}/jacobian", params={"layer": 0, "head": 1, "pos": 3}).json()
    not_a_quiz = post(client)
    assert client.post(f"/api/traces/{not_a_quiz['id']}/quiz/probe", json={"step": 1}).status_code == 404
    # its state answers (every trace's summary links there: issue 35, finding 10): no quiz, no probe
    none = {"answered": False, "probes": {"used": [], "max": 0, "left": 0}, "class": False, "revealed": False}
    assert client.get(f"/api/traces/{not_a_quiz['id']}/quiz").json() == none | {"quiz": False}


def test_answering_the_quiz_says_right_or_wrong_and_reveals_the_fault(client):
    quiz = post(client, quiz=5)
    hidden, broken = hidden_step(client, quiz)
    url = f"/api/traces/{quiz['id']}/quiz/answer"
    right = client.post(url, json={"step": broken}).json()
    assert right["correct"] is True and right["broken"]["index"] == broken
    fault = right["fault"]
    assert fault["name"] == hidden and fault["description"] == description(CATALOGUE[hidden])
    assert fault["correct"] == CATALOGUE[hidden].correct and fault["faulty"] == CATALOGUE[hidden].faulty
    other = next(s["index"] for s in quiz["steps"] if s["phase"] == "backward" and s["index"] != broken)
    wrong = client.post(url, json={"step": other}).json()
    assert wrong["correct"] is False and wrong["chosen"]["index"] == other and wrong["fault"]["name"] == hidden


def test_quiz_answers_are_validated(client, trace):
    quiz = post(client, quiz=5)
    url = f"/api/traces/{quiz['id']}/quiz/answer"
    assert error_loc(client.post(url, json={"step": 0})) == ["body", "step"]  # a forward step
    assert error_loc(client.post(url, json={"step": 999})) == ["body", "step"]
    assert client.post(url, json={}).status_code == 422
    assert client.post(f"/api/traces/{trace['id']}/quiz/answer", json={"step": 30}).status_code == 404


def test_quiz_page_starts_a_fresh_hidden_quiz(client):
    response = client.get("/quiz", params={"n_layer": 1, "text": "abcabc"}, follow_redirects=False)
    assert response.status_code == 303
    query = parse_qs(urlsplit(response.headers["location"]).query)
    assert query["quiz"][0].isdigit() and "faults" not in query and query["text"] == ["abcabc"]


def test_home_form_offers_the_bug_lab_and_its_quiz_choice(client):
    html = client.get("/").text
    assert 'name="faults"' in html and 'name="fault_layer"' in html and 'value="quiz"' in html
    for name in CATALOGUE:
        assert f'value="{name}"' in html
    form = {"form": "home", "text": "abcabc", "n_layer": "1", "faults": "quiz", "fault_layer": ""}
    response = client.get("/walk", params=form, follow_redirects=False)
    assert response.status_code == 303
    location = response.headers["location"]
    assert re.search(r"[?&]quiz=\d+", location) and "faults=" not in location
    prefilled = client.get("/", params={"faults": "rope_forward_rotation"}).text
    assert re.search(r'value="rope_forward_rotation"[^>]*\bselected', prefilled)


def test_a_hostile_fault_name_is_refused_and_shown_inert(client):
    hostile = "<script>alert(1)</script>"
    response = client.get("/walk", params={"text": "abcabc", "n_layer": 1, "faults": hostile, "step": 0})
    assert response.status_code == 422
    assert hostile not in response.text and "&lt;script&gt;alert(1)&lt;/script&gt;" in response.text
    assert 'id="error-faults"' in response.text  # the message sits next to the picker


GPT2_SPEC = {**SMALL_SPEC, "config": {**SMALL_CONFIG, "n_kv_head": 4, "family": "gpt2"}}


@pytest.mark.parametrize("fault", sorted(GPT2_FAULTS))
def test_a_gpt2_quiz_hides_a_gpt2_fault_until_answered(client, fault):
    """A GPT-2 quiz whose hidden fault is one of GPT-2's: every step sealed and explained without
    naming it; once answered, the first failing step is the fault's op."""
    client = TestClient(client.app)
    settings = client.app.state.settings
    cfg = resolve(TraceSpec.model_validate(GPT2_SPEC), settings).cfg
    number = next(q for q in range(1000) if quiz_fault(q, cfg, settings)[0] == fault)
    response = client.post("/api/traces", json={**GPT2_SPEC, "quiz": number})
    assert response.status_code == 200, response.text
    quiz = response.json()
    assert_hides_the_fault(response.text)
    for step in quiz["steps"]:
        view = client.get(f"/api/traces/{quiz['id']}/steps/{step['index']}")
        assert view.status_code == 200 and view.json()["gradcheck"] == {"sealed": True}, step
        assert view.json()["explanation"], step
        assert_hides_the_fault(view.text)
    name, broken = hidden_step(client, quiz)
    assert name == fault
    answer = client.post(f"/api/traces/{quiz['id']}/quiz/answer", json={"step": broken})
    assert answer.status_code == 200 and answer.json()["correct"]
    assert checks(client, quiz["id"])["first_failing"] == broken
