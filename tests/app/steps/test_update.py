"""The update step and training from the page: optimizer and train_steps validation, the
update step's figures and line search, one parameter's ΔW, progress, determinism."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from app.figures import update as update_figures
from app.spec import TraceSpec, resolve, spec_from_query
from app.steps.update import line_search_etas
from tests.helpers.client import make_client, post_trace
from tests.helpers.specs import SMALL_CONFIG, UPDATE_FIGURES

TEXT = "the cat sat on the mat"
SGD_SPEC = {"config": SMALL_CONFIG, "text": TEXT, "seed": 1, "optimizer": {"name": "sgd", "lr": 0.5}}
TRAINED_SPEC = {"config": SMALL_CONFIG, "text": TEXT, "seed": 1, "train_steps": 20, "dtype": "float64"}


@pytest.fixture(scope="module")
def sgd_trace(client) -> dict:
    return post_trace(client, SGD_SPEC)


@pytest.fixture(scope="module")
def update_step(client, sgd_trace) -> dict:
    last = sgd_trace["steps"][-1]["index"]
    response = client.get(f"/api/traces/{sgd_trace['id']}/steps/{last}")
    assert response.status_code == 200
    return json.loads(response.content, parse_constant=lambda name: pytest.fail(f"bare {name} in JSON"))


def error(response) -> tuple[list, str]:
    entry = response.json()["detail"][0]
    return entry["loc"], entry["msg"]


# ---------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("optimizer", "field", "words"),
    [
        ({"name": "adam"}, "name", '"sgd" or "adamw"'),
        ({"lr": 0.1}, "name", '"sgd" or "adamw"'),
        ({"name": "sgd", "lr": -1}, "lr", "positive"),
        ({"name": "sgd", "lr": 1e9}, "lr", "at most 100"),
        ({"name": "adamw", "lr": 50}, "lr", "at most 10"),
        ({"name": "sgd", "lr": "0.1"}, "lr", "'0.1'"),
        ({"name": "sgd", "lr": True}, "lr", "True"),
        ({"name": "sgd", "momentum": 1.5}, "momentum", "at most 0.999"),
        ({"name": "sgd", "beta1": 0.9}, "beta1", "sgd has no field"),
        ({"name": "adamw", "eps": 0}, "eps", "positive"),
    ],
)
def test_optimizer_mistakes_are_422_naming_the_field(client, optimizer, field, words):
    response = client.post("/api/traces", json={"text": TEXT, "optimizer": optimizer})
    assert response.status_code == 422
    loc, msg = error(response)
    assert loc == ["body", "optimizer", field] and words in msg


def test_a_non_finite_lr_is_422(client):
    body = b'{"text": "abc", "optimizer": {"name": "sgd", "lr": Infinity}}'
    response = client.post("/api/traces", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 422 and error(response)[0] == ["body", "optimizer", "lr"]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"text": TEXT, "train_steps": 501}, "between 0 and 500"),
        ({"text": TEXT, "train_steps": -1}, "greater than or equal to 0"),
        (
            {
                "text": TEXT * 5,
                "train_steps": 500,
                "config": {"n_layer": 4, "n_embd": 256, "ffn_hidden": 1024, "seq_len": 128},
            },
            "at most",
        ),
    ],
)
def test_train_steps_limits_are_422(client, body, words):
    response = client.post("/api/traces", json=body)
    assert response.status_code == 422
    loc, msg = error(response)
    assert loc[-1] == "train_steps" and words in msg


def test_optimizer_query_mistakes_name_the_parameter(client):
    settings = client.app.state.settings
    for query, field in (({"text": TEXT, "lr": "0.1"}, "lr"), ({"text": TEXT, "optimizer": "sgd", "lr": "fast"}, "lr")):
        with pytest.raises(Exception) as caught:
            resolve(spec_from_query(query), settings)
        assert caught.value.loc == ("query", field)
    page = client.get("/walk", params={"text": TEXT, "optimizer": "sgd", "lr": "-3", "step": "0"})
    assert page.status_code == 422 and 'id="error-lr"' in page.text


def test_train_steps_alone_trains_with_adamw_at_3e_3_and_the_permalink_says_so(client):
    body = client.post("/api/traces", json={"text": TEXT, "config": SMALL_CONFIG, "train_steps": 3}).json()
    assert body["spec"]["optimizer"] == {
        "name": "adamw", "lr": 0.003, "beta1": 0.9, "beta2": 0.999, "eps": 1e-08, "weight_decay": 0.01,
    }  # fmt: skip
    assert body["query"]["optimizer"] == "adamw" and body["query"]["lr"] == "0.003"
    assert body["query"]["train_steps"] == "3" and "beta1" not in body["query"]  # defaults stay out of the URL
    assert resolve(spec_from_query(body["query"]), client.app.state.settings).id == body["id"]


# ---------------------------------------------------------------------- the update step


def test_an_optimizer_makes_the_trace_end_with_the_update(sgd_trace):
    last = sgd_trace["steps"][-1]
    assert last == {**last, "name": "update", "phase": "update", "block": "update", "layer": None}
    assert last["title"] == "Parameter update: one SGD step"
    assert sgd_trace["blocks"][-1]["id"] == "update"
    assert last["group"] == "update" and sgd_trace["groups"][-1] == {
        "id": "update",
        "label": "Optimizer update",
        "layer": None,
    }
    assert last["op"] == "update" and last["op_title"] == last["title"]
    assert [s["phase"] for s in sgd_trace["steps"]].count("update") == 1
    training = sgd_trace["training"]
    assert training["steps"] == 0 and training["optimizer_label"] == "SGD, lr 0.5"
    assert training["loss_after"] < sgd_trace["loss"]


def test_the_update_step_returns_its_figures(update_step):
    assert [f["id"] for f in update_step["figures"]] == UPDATE_FIGURES
    for figure in update_step["figures"]:
        assert figure["figure"]["data"], figure["id"]
        assert figure["table"]["rows"], figure["id"]
    assert update_step["gradcheck"]["passed"] and update_step["gradcheck"]["checks"][0]["tensor"] == "parameters"
    assert "<math" in update_step["formula"]["update"]["mathml"]
    info = update_step["update"]
    assert info["loss_after"] < info["loss_before"] and info["optimizer"]["name"] == "sgd"
    names = [p["name"] for p in info["params"]]
    assert names[0] == "tok_embeddings" and info["shown"] in names
    assert all(p["grad_norm"] > 0 and p["update_ratio"] > 0 for p in info["params"])
    bars = next(f for f in update_step["figures"] if f["id"] == "update.ratio")["figure"]
    assert bars["layout"]["xaxis"]["type"] == "log" and bars["data"][0]["orientation"] == "h"


def test_sgd_moves_each_parameter_by_minus_lr_times_its_gradient(client, sgd_trace, update_step):
    """ΔW = −lr·g, so RMS(ΔW) = lr·‖g‖/√n for every parameter."""
    for p in update_step["update"]["params"]:
        n = math.prod(p["shape"])
        assert p["update_rms"] == pytest.approx(0.5 * p["grad_norm"] / math.sqrt(n), rel=1e-5)


def test_the_line_search_follows_the_first_order_prediction_for_small_steps(update_step):
    search = update_step["update"]["line_search"]
    eta, loss, first = (np.array(search[k]) for k in ("eta", "loss", "first_order"))
    loss0 = update_step["update"]["loss_before"]
    assert np.all(np.diff(eta) > 0) and len(eta) == 25
    assert first == pytest.approx(loss0 - eta * search["grad_norm_sq"])
    assert abs(loss[0] - first[0]) < 1e-3 * loss0  # tiny η: the gradient's promise holds
    assert np.nanmin(loss) < loss0  # somewhere along −g the loss goes down
    figure = next(f for f in update_step["figures"] if f["id"] == "update.line_search")["figure"]
    assert figure["layout"]["xaxis"]["type"] == "log"
    assert [t["name"].split(",")[0] for t in figure["data"][:2]] == ["loss(W − η·g)", "loss − η‖g‖²"]
    assert any(s.get("x0") == 0.5 for s in figure["layout"]["shapes"])  # the SGD lr, marked


def test_line_search_etas_straddle_where_the_prediction_reaches_zero():
    etas = line_search_etas(2.0, 4.0)  # η₀ = 0.5
    assert etas[0] == pytest.approx(5e-4) and etas[-1] == pytest.approx(5.0)
    assert line_search_etas(2.0, 4.0, lr=100.0)[-1] == pytest.approx(300.0)
    assert line_search_etas(2.0, 0.0).size == 0


def test_figure_builders_are_pure():
    bars = update_figures.parameter_bars([1e-3, 2e-5], ["a", "b"], title="t", value_name="v", reference=1e-3)
    assert bars.layout.xaxis.type == "log" and list(bars.data[0].y) == ["a", "b"]
    curve = update_figures.loss_curve([3.0, 2.0], 1.5, 1.2, title="t")
    assert [len(t.x) for t in curve.data] == [2, 1, 1] and list(curve.data[1].x) == [3]


def test_one_parameters_delta_and_gradient(client, sgd_trace):
    url = f"/api/traces/{sgd_trace['id']}/update"
    body = client.get(url, params={"param": "layers.0.attention.wq"}).json()
    assert [f["id"] for f in body["figures"]] == ["update.delta", "update.grad"]
    assert [f["title"] for f in body["figures"]] == [
        "Update ΔW of the layer 0 query weights Wq",
        "Gradient g of the layer 0 query weights Wq",
    ]
    norm = client.get(url, params={"param": "norm"}).json()
    assert norm["figures"][0]["figure"]["data"][0]["type"] == "bar"  # a 1-D gain: bars
    unknown = client.get(url, params={"param": "../secrets"})
    assert unknown.status_code == 422 and error(unknown)[0] == ["query", "param"]


def test_a_trace_without_an_optimizer_has_no_update(client):
    body = client.post("/api/traces", json={"config": SMALL_CONFIG, "text": TEXT}).json()
    assert body["training"] is None and body["steps"][-1]["phase"] == "backward"
    assert client.get(f"/api/traces/{body['id']}/update", params={"param": "norm"}).status_code == 404


# ---------------------------------------------------------------------- training from the page


def test_train_steps_train_first_and_report_progress(client):
    body = client.post("/api/traces", json=TRAINED_SPEC).json()
    training = body["training"]
    assert training["steps"] == 20 and body["loss"] < training["first_loss"] / 2
    progress = client.get(f"/api/traces/{body['id']}/progress").json()
    assert progress["state"] == "done" and progress["done"] == progress["total"] == 20
    assert progress["loss"] == pytest.approx(training["last_loss"])
    assert client.get("/api/traces/nope/progress").json()["state"] == "pending"
    last = body["steps"][-1]["index"]
    step = client.get(f"/api/traces/{body['id']}/steps/{last}").json()
    loss = next(f for f in step["figures"] if f["id"] == "update.loss")
    assert len(loss["figure"]["data"][0]["x"]["bdata"]) > 0 and loss["table"]["index"][20] == "step 21 (this one)"
    assert step["update"]["train_steps"] == 20 and step["gradcheck"]["passed"]


def test_train_steps_are_deterministic():
    answers = []
    for _ in range(2):
        with make_client() as fresh:  # a new server: nothing cached
            body = fresh.post("/api/traces", json={**TRAINED_SPEC, "dtype": "float32"}).json()
            answers.append((body["id"], body["loss"], body["training"]))
    assert answers[0] == answers[1]
    other = resolve(TraceSpec.model_validate({**TRAINED_SPEC, "train_steps": 21}), make_client().app.state.settings)
    assert other.id != answers[0][0]


def test_the_walk_page_offers_to_train_more(client):
    query = {"text": TEXT, "n_layer": "1", "n_head": "2", "n_kv_head": "2", "n_embd": "8", "ffn_hidden": "12"}
    html = client.get(client.get("/walk", params=query, follow_redirects=False).headers["location"]).text
    assert "No update step" in html and "train_steps=10" in html and "train_steps=100" in html
    trained = client.get("/walk", params={**query, "train_steps": "495"}, follow_redirects=False).headers["location"]
    html = client.get(trained).text
    assert "AdamW, lr 0.003" in html and "trained 495 steps" in html
    assert "train_steps=505" not in html and "Show in float64" in html  # past the limit: no button
