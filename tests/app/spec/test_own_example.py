"""A spec that names a model and no text walks the model's own first example (issue 34): the
induction model knows only its alphabet, so the random init's default text would be a 422."""

from __future__ import annotations

from tests.helpers.client import post_trace


def test_a_model_alone_walks_its_own_example(client):
    listed = {m["name"]: m for m in client.get("/api/models").json()["models"]}
    summary = post_trace(client, {"model": "induction"})
    assert summary["spec"]["text"] == listed["induction"]["examples"][0]
    assert summary["spec"]["model"] == "induction"


def test_a_random_init_alone_still_walks_the_default_text(client):
    from app.spec import DEFAULT_TEXT

    summary = post_trace(client, {"config": {"n_layer": 1, "n_embd": 16, "n_head": 2, "n_kv_head": 1}})
    assert summary["spec"]["text"] == DEFAULT_TEXT


def test_a_given_text_is_still_the_one_walked(client):
    assert post_trace(client, {"model": "induction", "text": "abcabc"})["spec"]["text"] == "abcabc"
