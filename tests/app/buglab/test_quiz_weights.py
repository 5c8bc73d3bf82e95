"""A quiz is found by checking each op's backward rule against the quiz trace's own numbers (or
by spending probes), never by comparing it with a correct trace (issue 35, finding 1): the quiz
runs on weights of its own, drawn from the server's secret (xt_core.lab.quiz_weights), and its
parameters' values stay with the server until the answer.

The attacker's script of the review, run as the test: build the quiz's spec without `quiz` (the
correct trace anyone may build), compare every backward step with the quiz's (the arriving
gradient and each contribution, as the bug lab's own diff does), and name the first op whose
arriving gradient agrees while a contribution differs. Before, that op was the broken one in
every quiz; now it is the same step whatever the quiz hides."""

from __future__ import annotations

import io

import numpy as np
import pytest
from fastapi.testclient import TestClient

import xt_core
from app.buglab.views import diff_view
from app.spec.faults import applicable_faults, quiz_fault
from tests.helpers.client import make_client, post_trace, posted_context
from tests.helpers.specs import SMALL_SPEC
from xt_core.lab.faults import CATALOGUE


@pytest.fixture(scope="module")
def client():
    return make_client(quiz_secret="weights")  # no lifespan: the lessons' checks play no part


@pytest.fixture(scope="module")
def public(client):
    """The quiz's spec without `quiz`: the correct trace anyone can build (or rebuild offline)."""
    return posted_context(client, SMALL_SPEC)


def _quizzes(client) -> dict[str, int]:
    """One quiz number per fault that applies to SMALL_SPEC (what only the server knows)."""
    settings = client.app.state.settings
    cfg = posted_context(client, SMALL_SPEC)[1].spec.cfg
    found: dict[str, int] = {}
    for number in range(2000):
        found.setdefault(quiz_fault(number, cfg, settings)[0], number)
        if len(found) == len(applicable_faults(cfg)):
            return found
    raise AssertionError(f"no quiz hides {sorted(set(applicable_faults(cfg)) - set(found))}")


def _broken_step(ctx) -> int:
    op = CATALOGUE[ctx.spec.faults[0]].step_name(ctx.spec.fault_layer)
    return next(r.index for r in ctx.trace.records if r.name == op and r.phase == "backward")


def _first_op_the_comparison_names(quiz_ctx, public_ctx) -> int | None:
    """The review's attack: the first backward step whose arriving gradient is the correct trace's
    while one of its contributions is not."""
    for record in quiz_ctx.trace.records:
        if record.phase != "backward":
            continue
        diff = diff_view(quiz_ctx, public_ctx, record.index, 0)
        arriving, *contributions = diff["tensors"]
        if arriving["identical"] and any(not c["identical"] for c in contributions):
            return record.index
    return None


def test_comparing_with_the_public_spec_names_no_broken_step(client, public):
    _, public_ctx = public
    loss_step = next(r.index for r in public_ctx.trace.records if r.name == "loss" and r.phase == "backward")
    named, pinned = {}, []
    for fault, number in sorted(_quizzes(client).items()):
        _, quiz_ctx = posted_context(client, {**SMALL_SPEC, "quiz": number})
        broken = _broken_step(quiz_ctx)
        named[fault] = _first_op_the_comparison_names(quiz_ctx, public_ctx)
        if broken != loss_step and named[fault] == broken:
            pinned.append(fault)
    # The loss's backward (dL/dℓ = 1/N) reads no weight: its fault is found by reading one number,
    # with or without a comparison. Every other quiz: the comparison names one step, the same
    # whatever the quiz hides (the first that reads a weight), and never the broken one.
    assert pinned == [], f"the comparison pins the broken step of {pinned}"
    beyond_the_loss = {step for fault, step in named.items() if CATALOGUE[fault].step != "loss"}
    assert len(beyond_the_loss) == 1, named


def test_every_step_that_reads_a_weight_differs_from_the_public_trace(client, public):
    """Not just "not identical": far beyond any tolerance a comparison could use (~30 % and more)."""
    _, public_ctx = public
    number = _quizzes(client)["softmax_missing_sum_term"]
    _, quiz_ctx = posted_context(client, {**SMALL_SPEC, "quiz": number})
    first_weighted = next(r.index for r in quiz_ctx.trace.records if r.name == "token_loss" and r.phase == "backward")
    for record in quiz_ctx.trace.records[first_weighted + 1 :]:
        if record.phase == "backward":
            a, b = quiz_ctx.trace.grad(record.name), public_ctx.trace.grad(record.name)
            assert np.linalg.norm(a - b) > 0.1 * np.linalg.norm(b), record.name


def _npy(response) -> np.ndarray:
    assert response.status_code == 200, response.text[:300]
    return np.load(io.BytesIO(response.content))


def test_the_quiz_weights_are_not_downloadable_until_the_answer(client):
    number = _quizzes(client)["swiglu_silu_for_derivative"]
    quiz = post_trace(client, {**SMALL_SPEC, "quiz": number, "optimizer": {"name": "adamw", "lr": 0.01}})
    base = f"/api/traces/{quiz['id']}"
    params = sorted(xt_core.param_shapes(xt_core.Config(**quiz["config"])))
    for name in params:
        for url, query in ((f"{base}/tensors/{name}", {}), (f"{base}/tensors/{name}", {"format": "json"}),
                           (f"{base}/tensors/{name}/slice", {})):  # fmt: skip
            refused = client.get(url, params=query)
            assert refused.status_code == 403, (url, refused.status_code)
            assert name in refused.json()["detail"] and "probe" in refused.json()["detail"]
        assert _npy(client.get(f"{base}/tensors/{name}", params={"grad": "true"})).shape  # its gradient stays
    update, last_backward = quiz["steps"][-1], quiz["steps"][-2]
    assert client.get(f"{base}/update", params={"param": params[0]}).status_code == 403
    shown = set()
    reading = [s["index"] for s in quiz["steps"] if s["phase"] in ("forward", "update")]  # where weights are drawn
    probed = (
        reading[1],
        last_backward["index"],
        update["index"],
    )  # a probed step unseals its verdict, never the weights
    for index in [*reading, *probed]:
        if len(shown) and index in probed:
            assert client.post(f"{base}/quiz/probe", json={"step": index}).status_code == 200
        shown |= {figure["id"] for figure in client.get(f"{base}/steps/{index}").json()["figures"]}
    assert not {f"input.{name}" for name in params} & shown and "update.delta" not in shown
    assert {"input.embedding", "update.grad"} <= shown  # activations and gradients stay
    rows = client.get(f"{base}/steps/{last_backward['index']}/diff")  # a probe-bought diff: no id of the twin
    assert rows.status_code == 200 and rows.json()["correct_id"] is None

    # answered: the weights are the learner's, and the offline rebuild gives the quiz's own numbers
    broken = next(
        s["index"] for s in quiz["steps"] if s["name"] == "layers.0.feed_forward.swiglu" and s["phase"] == "backward"
    )
    assert client.post(f"{base}/quiz/answer", json={"step": broken}).json()["correct"]
    weights = {name: _npy(client.get(f"{base}/tensors/{name}")) for name in params}
    tokens = _npy(client.get(f"{base}/tensors/tokens"))
    targets = _npy(client.get(f"{base}/tensors/targets"))
    rebuilt = xt_core.forward_backward(xt_core.Config(**quiz["config"]), weights, tokens, targets)
    assert rebuilt.loss == pytest.approx(quiz["loss"], rel=1e-6)
    assert client.get(f"{base}/update", params={"param": params[0]}).status_code == 200


def test_a_learner_who_has_not_answered_cannot_download_what_another_answered(client):
    number = _quizzes(client)["rope_forward_rotation"]
    quiz = post_trace(client, {**SMALL_SPEC, "quiz": number})
    assert (
        client.post(f"/api/traces/{quiz['id']}/quiz/answer", json={"step": quiz["steps"][-1]["index"]}).status_code
        == 200
    )
    assert client.get(f"/api/traces/{quiz['id']}/tensors/tok_embeddings").status_code == 200
    other = TestClient(client.app)  # the same server, a learner without the first one's cookie
    assert other.get(f"/api/traces/{quiz['id']}/tensors/tok_embeddings").status_code == 403


def test_the_honest_path_checks_an_op_on_the_quiz_numbers(client):
    """dscores = p ⊙ (dp − Σ p ⊙ dp), from the quiz trace's own downloads: wrong exactly where the
    quiz hides the softmax's missing sum term, right where it hides something else."""
    agree = {}
    for fault in ("softmax_missing_sum_term", "swiglu_silu_for_derivative"):
        quiz = post_trace(client, {**SMALL_SPEC, "quiz": _quizzes(client)[fault]})
        base = f"/api/traces/{quiz['id']}/tensors/layers.0.attention"
        p = _npy(client.get(f"{base}.probs")).astype(np.float64)
        dp = _npy(client.get(f"{base}.probs", params={"grad": "true"})).astype(np.float64)
        dscores = _npy(client.get(f"{base}.scores", params={"grad": "true"}))
        agree[fault] = np.allclose(p * (dp - (p * dp).sum(-1, keepdims=True)), dscores, rtol=1e-4, atol=1e-7)
    assert agree == {"softmax_missing_sum_term": False, "swiglu_silu_for_derivative": True}
