"""A fetched real model in the app, without the real file: a tiny llama GGUF with a byte-level
BPE tokenizer stored under SmolLM2's name (`smollm2-135m.gguf`, as `xt models fetch` stores it),
with a vocabulary of 600 (beyond what views draw whole). Listed, usable in every kind of spec
(walk page, API, bug lab, optimizer update), held to its own limits; its weights shared by
every trace; vocabulary-sized views show the tokens that matter; absent, the home page and the
listing say how to get it. The real SmolLM2: tests/app/test_smollm2_views.py."""

from __future__ import annotations

import numpy as np
import pytest

import xt_core
from app.checkpoints.registry import load_checkpoint
from app.settings import Settings
from app.spec import TraceSpec, resolve
from app.steps.axes import VOCAB_SHOWN
from app.traces.training import initial_params
from tests.helpers.client import make_client
from tests.helpers.gguf_files import STAND_IN, STAND_IN_NAME, STAND_IN_TEXT
from xt_core.model import param_shapes

NAME, CFG, TEXT = STAND_IN_NAME, STAND_IN, STAND_IN_TEXT


@pytest.fixture(scope="module")
def client(stand_in_client):
    return stand_in_client


@pytest.fixture(scope="module")
def trace(client) -> dict:
    response = client.post("/api/traces", json={"model": NAME, "text": TEXT})
    assert response.status_code == 200, response.text
    return response.json()


def step_index(trace: dict, name: str, phase: str) -> int:
    return next(s["index"] for s in trace["steps"] if s["name"] == name and s["phase"] == phase)


def figure(client, trace, name, phase, figure_id) -> dict:
    response = client.get(f"/api/traces/{trace['id']}/steps/{step_index(trace, name, phase)}")
    assert response.status_code == 200, response.text
    return next(f for f in response.json()["figures"] if f["id"] == figure_id)


def test_the_listing_names_it_by_its_stored_name(client):
    body = client.get("/api/models").json()
    model = next(m for m in body["models"] if m["name"] == NAME)
    assert model["kind"] == "real" and model["tokenizer"] == "bpe" and not model["shipped"]
    assert model["config"]["vocab_size"] == 600 and model["examples"]
    assert body["fetchable"] == []
    page = client.get("/").text
    assert 'data-group="real"' in page and f'value="{NAME}"' in page


def test_absent_the_listing_and_home_page_say_how_to_get_it(tmp_path):
    with make_client(models_dir=tmp_path) as c:
        body = c.get("/api/models").json()
        assert NAME not in [m["name"] for m in body["models"]]
        assert [m["name"] for m in body["fetchable"]] == [NAME]
        assert "make real-model" in body["fetchable"][0]["command"]
        assert "make real-model" in c.get("/").text
        response = c.post("/api/traces", json={"model": NAME, "text": TEXT})
        assert response.status_code == 422 and "unknown model" in response.text


def test_tokens_are_shown_as_their_text_pieces(trace):
    labels = trace["tokens"]["input_labels"][0]
    assert labels[:3] == ["t", "he", "␣world"]  # the tiny vocabulary's merges; a leading space drawn visibly


def test_every_trace_borrows_the_loaded_weights(models_dir):
    settings = Settings(models_dir=models_dir)
    spec = resolve(TraceSpec(model=NAME, text=TEXT), settings)
    params = initial_params(spec)
    shared = load_checkpoint(spec.checkpoint).params
    assert all(params[name] is shared[name] and not shared[name].flags.writeable for name in shared)
    trace = xt_core.forward_backward(spec.cfg, params, spec.inputs, spec.targets)
    own = trace.nbytes()
    assert (
        own
        < xt_core.forward_backward(
            spec.cfg, {k: v.copy() for k, v in params.items()}, spec.inputs, spec.targets
        ).nbytes()
    )
    float64 = resolve(TraceSpec(model=NAME, text=TEXT, dtype="float64"), settings)
    assert all(v.dtype == np.float64 for v in initial_params(float64).values())  # converted, not shared


def test_its_own_limits_hold(client):
    two_rows = client.post("/api/traces", json={"model": NAME, "tokens": [[1, 2, 3], [3, 2, 1]]})
    assert two_rows.status_code == 422 and "at most 1 sequences" in two_rows.text
    sizes = client.post("/api/traces", json={"model": NAME, "text": TEXT, "config": {"n_layer": 2}})
    assert sizes.status_code == 422 and "fixes the config" in sizes.text
    random_bpe = client.post("/api/traces", json={"text": TEXT, "tokenizer": "bpe"})
    assert (
        random_bpe.status_code == 422
        and 'a random init has no "bpe" tokenizer' in random_bpe.json()["detail"][0]["msg"]
    )


def test_vocabulary_views_draw_the_targets_and_the_likeliest_tokens(client, trace):
    entry = figure(client, trace, "output_probs", "loss", "output.output_probs")
    columns = entry["figure"]["data"][0]["x"]
    assert len(columns) <= VOCAB_SHOWN and "of the 600 tokens are drawn" in entry["note"]
    targets = trace["tokens"]["target_labels"][0]
    assert set(targets) <= set(columns)  # every target of the sequence has its column
    arriving = figure(client, trace, "logits", "backward", "arriving.logits")
    assert "largest |gradient|" in arriving["note"] and len(arriving["figure"]["data"][0]["x"]) <= VOCAB_SHOWN


def test_the_embedding_gradient_shows_the_batch_rows_and_says_the_rest_are_zero(client, trace):
    entry = figure(client, trace, "embedding", "backward", "contribution.tok_embeddings")
    rows = entry["figure"]["data"][0]["y"]
    distinct = len(set(trace["tokens"]["input_labels"][0]))
    assert len(rows) == distinct and "are exactly zero" in entry["note"]
    head = figure(client, trace, "logits", "backward", "contribution.tok_embeddings")  # dense: every row
    assert len(head["figure"]["data"][0]["y"]) == VOCAB_SHOWN and "rows of largest |gradient|" in head["note"]


def test_the_walk_page_bug_lab_and_an_update_work(client, trace):
    assert client.get(f"/walk?model={NAME}&text=the+world").status_code == 200
    faulty = client.post("/api/traces", json={"model": NAME, "text": TEXT, "faults": ["softmax_missing_sum_term"]})
    assert faulty.status_code == 200, faulty.text
    broken = next(s for s in faulty.json()["steps"] if s["phase"] == "backward" and s["name"].endswith(".probs"))
    step = client.get(f"/api/traces/{faulty.json()['id']}/steps/{broken['index']}").json()
    assert not step["gradcheck"]["passed"]
    for optimizer in ({"name": "sgd", "lr": 0.1}, {"name": "adamw"}):
        body = client.post("/api/traces", json={"model": NAME, "text": TEXT, "optimizer": optimizer}).json()
        update = client.get(f"/api/traces/{body['id']}/steps/{len(body['steps']) - 1}").json()
        assert update["gradcheck"]["passed"] and len(update["update"]["params"]) == len(param_shapes(CFG))
