"""Every JSON answer matches the response model its route declares (app/schemas), for the
answers the fuzzer reaches rarely: the update step, a failed check's warning, a deferred check,
a quiz sealed and answered, the output softmax's Jacobian, a diff, a revealed poll, a real
model's listing. A model refuses a key it does not name (additionalProperties: false), so an
answer that gains or loses a field fails here."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from app.schemas import buglab, checkpoints, sessions, traces, training
from tests.helpers.asgi import following
from tests.helpers.client import make_client, post_trace
from tests.helpers.specs import BATCH_SPEC, SMALL_CONFIG, SMALL_SPEC

FAULTY = {**BATCH_SPEC, "faults": ["batch_mean_missing"], "optimizer": {"name": "sgd", "lr": 0.1}}
QUIZ = {"config": SMALL_CONFIG, "text": "abcabcabc", "quiz": 7}


def conforms(response, model: type[BaseModel], status: int = 200) -> dict:
    assert response.status_code == status, response.text
    model.model_validate_json(response.content)
    return response.json()


@pytest.fixture(scope="module")
def client(models_dir):
    with make_client(models_dir=models_dir) as c:
        yield c


def test_trace_step_views_checks_and_jacobians(client):
    plain = post_trace(client, {**SMALL_SPEC, "optimizer": {"name": "adamw", "lr": 0.01}, "train_steps": 1})
    faulty = post_trace(client, FAULTY)
    for trace in (plain, faulty):
        tid = trace["id"]
        conforms(client.post("/api/traces", json=trace["spec"]), traces.TraceSummary)
        for step in trace["steps"]:
            view = conforms(client.get(f"/api/traces/{tid}/steps/{step['index']}"), traces.StepView)
            conforms(client.get(f"/api/traces/{tid}/steps/{step['index']}/check"), traces.StepCheckAnswer)
        assert view["update"]["optimizer"]["name"] in ("adamw", "sgd")
        conforms(client.get(f"/api/traces/{tid}/jacobian?layer=output&top_k=3"), traces.JacobianView)
        conforms(client.get(f"/api/traces/{tid}/update?param=norm"), training.ParamUpdate)
        conforms(client.get(f"/api/traces/{tid}/progress"), training.Progress)
    warned = [client.get(f"/api/traces/{faulty['id']}/steps/{s['index']}/check").json() for s in faulty["steps"]]
    assert any(w["warning"] for w in warned), "the faulty trace has a failed check's warning"
    backward = next(s["index"] for s in faulty["steps"] if s["phase"] == "backward")
    diff = conforms(client.get(f"/api/traces/{faulty['id']}/steps/{backward}/diff"), buglab.DiffView)
    assert diff["verdict"]


def test_a_view_answered_before_its_check():
    with make_client(view_check_max_params=0) as deferred:  # every model counts as large
        tid = post_trace(deferred, SMALL_SPEC)["id"]
        assert conforms(deferred.get(f"/api/traces/{tid}/steps/3"), traces.StepView)["gradcheck"] == {"pending": True}
        conforms(deferred.get(f"/api/traces/{tid}/steps/3/check"), traces.StepCheckAnswer)


def test_a_quiz_sealed_then_answered(client):
    quiz = post_trace(client, QUIZ)
    tid, backward = quiz["id"], [s["index"] for s in quiz["steps"] if s["phase"] == "backward"]
    sealed = conforms(client.get(f"/api/traces/{tid}/steps/{backward[0]}"), traces.StepView)
    assert sealed["gradcheck"] == {"sealed": True}
    assert "ok" not in conforms(client.get(f"/api/traces/{tid}/jacobian?layer=0"), traces.JacobianView)
    assert client.get(f"/api/traces/{tid}/steps/{backward[0]}/diff").status_code == 403  # it costs a probe
    conforms(client.post(f"/api/traces/{tid}/quiz/probe", json={"step": backward[0]}), buglab.ProbeAnswer)
    assert "verdict" in conforms(client.get(f"/api/traces/{tid}/steps/{backward[0]}/diff"), buglab.DiffView)
    conforms(client.post(f"/api/traces/{tid}/quiz/answer", json={"step": backward[1]}), buglab.QuizVerdict)
    assert conforms(client.get(f"/api/traces/{tid}/quiz"), buglab.LearnerQuiz)["answered"] is True


def test_a_session_polled_and_revealed(client):
    opened = conforms(client.post("/api/sessions", json={"spec": FAULTY}), sessions.SessionOpened, 201)
    code, key = opened["code"], {"X-Presenter-Key": opened["presenter_key"]}
    conforms(client.post(f"/api/sessions/{code}/poll", json={"action": "open"}, headers=key), sessions.SessionState)
    step = next(s["index"] for s in post_trace(client, FAULTY)["steps"] if s["phase"] == "backward")
    client.get(f"/join/{code}", follow_redirects=False)  # the student's seat in the class
    following(client.app, code, client.cookies.get("xt_seat", path=f"/api/sessions/{code}/"))
    conforms(client.post(f"/api/sessions/{code}/answers", json={"step": step}), sessions.Answered)
    conforms(client.post(f"/api/sessions/{code}/state", json={"step": step}, headers=key), sessions.SessionState)
    assert "counts" not in conforms(client.get(f"/api/sessions/{code}"), sessions.SessionState)["poll"]
    conforms(client.post(f"/api/sessions/{code}/poll", json={"action": "reveal"}, headers=key), sessions.SessionState)
    revealed = conforms(client.get(f"/api/sessions/{code}"), sessions.SessionState)
    assert revealed["poll"]["reveal"]["faults"][0]["name"] == "batch_mean_missing"
    assert revealed["poll"]["counts"] == {str(step): 1}
    names = [lesson["name"] for lesson in conforms(client.get("/api/lessons"), sessions.Lessons)["lessons"]]
    conforms(client.get(f"/api/lessons/{names[0]}"), sessions.Lesson)


def test_models_listing_tokenize_and_catalogue(client):
    listing = conforms(client.get("/api/models"), checkpoints.ModelListing)
    real = [m for m in listing["models"] if m["kind"] == "real"]
    assert real and "default_lr" in real[0], "the SmolLM2 stand-in is listed with its extras"
    assert all("default_lr" not in m for m in listing["models"] if m["kind"] == "demo")
    conforms(client.get("/api/tokenize?model=text&text=the%20cat"), checkpoints.TokenizePreview)
    conforms(client.get(f"/api/tokenize?model={real[0]['name']}&text=hello"), checkpoints.TokenizePreview)
    conforms(client.get("/api/faults?tie_embeddings=false"), buglab.Catalogue)
