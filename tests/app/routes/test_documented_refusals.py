"""Every refusal the API really gives is in its OpenAPI document (issue 35, finding 10): the 429 of a
guesser's wrong admin keys on POST /api/models, /api/sessions and /api/traces, the 503 of
POST /api/sessions at max_sessions; and the link every trace's summary declares to GET .../quiz
leads to an answer for any trace (`quiz: false` for one that hides no bug), not a 404."""

from __future__ import annotations

import pytest

from app.schemas.buglab import LearnerQuiz
from tests.helpers.client import make_client, post_trace
from tests.helpers.specs import SMALL_SPEC

KEY = "right-key"
TRAINING = {**SMALL_SPEC, "optimizer": {"name": "sgd", "lr": 0.1}, "train_steps": 1}
WRITES = {
    "/api/models": {"files": {"file": ("m.npz", b"not a model", "application/octet-stream")}},
    "/api/sessions": {"json": {"spec": SMALL_SPEC}},
    "/api/traces": {"json": TRAINING},  # training needs the admin key
}


def _documented(client, path: str, method: str = "post") -> set[int]:
    return {int(code) for code in client.get("/openapi.json").json()["paths"][path][method]["responses"]}


@pytest.mark.parametrize("path", WRITES)
def test_a_guessers_429_is_documented(path):
    client = make_client(admin_key=KEY, key_failures_per_minute=1)  # no lifespan
    wrong = {"X-Admin-Key": "wrong"}
    assert client.post(path, headers=wrong, **WRITES[path]).status_code == 403
    refused = client.post(path, headers=wrong, **WRITES[path])
    assert refused.status_code == 429 and "Retry-After" in refused.headers, refused.text
    assert {403, 429} <= _documented(client, path)


def test_the_503_at_max_sessions_is_documented(tmp_path):
    client = make_client(max_sessions=1, lessons_dir=tmp_path)  # no lessons to check
    assert client.post("/api/sessions", json={"spec": SMALL_SPEC}).status_code == 201
    full = client.post("/api/sessions", json={"spec": SMALL_SPEC})
    assert full.status_code == 503, full.text
    assert 503 in _documented(client, "/api/sessions")


def test_the_quiz_link_leads_to_an_answer_for_every_trace():
    client = make_client()
    if client:
        links = client.get("/openapi.json").json()["paths"]["/api/traces"]["post"]["responses"]["200"]["links"]
        assert links["GetQuiz"]["operationId"] == "quiz_state_api_traces__trace_id__quiz_get"
        for spec in (SMALL_SPEC, {**SMALL_SPEC, "quiz": 3}):
            trace = post_trace(client, spec)
            state = client.get(f"/api/traces/{trace['id']}/quiz")
            assert state.status_code == 200, state.text
            LearnerQuiz.model_validate_json(state.content)
            assert state.json()["quiz"] is ("quiz" in spec)
