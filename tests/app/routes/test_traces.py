"""Every route of the JSON API: shapes of the answers, every step kind, error paths, NaN safety."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from app.settings import Settings
from app.spec import TraceSpec, resolve, spec_from_query
from app.spec.cost import spec_cost
from app.traces.cache import LRU
from tests.helpers.client import make_client
from tests.helpers.specs import SMALL_CONFIG, SMALL_SPEC

STEP_KEYS = {
    "index", "name", "phase", "layer", "title", "block", "kind", "explanation", "formula", "shapes",
    "figures", "gradcheck", "jacobian", "warnings",
}  # fmt: skip
ROLES = {"input", "output", "grad", "attention", "jacobian", "loss", "residual", "check"}
N_STEPS = 48  # 1 layer: 24 ops forward (incl. loss), 24 backward


def assert_valid_json(response) -> dict:
    # Starlette would refuse NaN; parse strictly to be sure none slipped through as a bare token
    return json.loads(response.content, parse_constant=lambda name: pytest.fail(f"bare {name} in JSON"))


def error_fields(response) -> list[str]:
    return [entry["loc"][-1] for entry in response.json()["detail"]]


# ---------------------------------------------------------------------- POST /api/traces


def test_post_trace_answers_the_contract(trace):
    assert set(trace) == {
        "id",
        "loss",
        "spec",
        "query",
        "config",
        "dtype",
        "n_seq",
        "T",
        "tokens",
        "blocks",
        "steps",
        "groups",
        "training",
        "first_nonfinite",
    }
    assert trace["training"] is None  # no optimizer: no update step
    assert trace["dtype"] == "float32" and trace["n_seq"] == 1 and trace["T"] == len(SMALL_SPEC["text"]) - 1
    assert trace["loss"] > 0
    tokens = trace["tokens"]
    assert len(tokens["inputs"][0]) == len(tokens["input_labels"][0]) == trace["T"]
    assert tokens["input_labels"][0][:3] == ["t", "h", "e"] and tokens["target_labels"][0][:2] == ["h", "e"]
    assert [s["index"] for s in trace["steps"]] == list(range(N_STEPS))
    phases = [s["phase"] for s in trace["steps"]]
    assert phases == sorted(phases, key=["forward", "loss", "backward"].index)
    block_ids = [b["id"] for b in trace["blocks"]]
    assert block_ids == ["embedding", "layers.0.attention", "layers.0.ffn", "norm", "head", "loss"]
    assert {s["block"] for s in trace["steps"]} == set(block_ids)
    assert [g["id"] for g in trace["groups"]] == ["embedding", "layers.0", "output"]
    assert {s["group"] for s in trace["steps"]} == {"embedding", "layers.0", "output"}


def test_post_trace_id_is_the_spec_and_the_query_is_a_permalink(client, trace):
    again = client.post("/api/traces", json=SMALL_SPEC).json()
    assert again["id"] == trace["id"]
    settings = client.app.state.settings
    assert resolve(spec_from_query(trace["query"]), settings).id == trace["id"]
    assert resolve(TraceSpec.model_validate(trace["spec"]), settings).id == trace["id"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"config": {"n_embd": 15}, "text": "abc"}, "n_embd"),
        ({"config": {"n_layer": 99}, "text": "abc"}, "n_layer"),
        ({"text": "a"}, "text"),
        ({"text": "abc", "colour": "red"}, "colour"),
        ({"tokens": [1, 2, 999], "config": {"vocab_size": 10}}, "tokens"),
    ],
)
def test_post_trace_spec_errors_are_422_naming_the_field(client, body, field):
    response = client.post("/api/traces", json=body)
    assert response.status_code == 422
    assert field in error_fields(response)


def test_a_trace_too_big_to_hold_is_refused_before_it_is_built(client):
    """Every size within its own limit, all at once, in float64: its build would hold ~3 GB."""
    config = {"n_layer": 8, "n_head": 16, "n_kv_head": 16, "n_embd": 256, "ffn_hidden": 688, "seq_len": 256}
    tokens = np.random.default_rng(0).integers(0, 256, (4, 257)).tolist()
    store = client.app.state.services.store
    traces_before = len(store)
    spec = {"config": {**config, "vocab_size": 256}, "tokens": tokens, "dtype": "float64"}
    response = client.post("/api/traces", json=spec)
    assert response.status_code == 422, response.text
    assert "config" in error_fields(response)
    message = response.json()["detail"][0]["msg"]
    assert "max_trace_bytes" in message and "4 sequence(s) × 256 positions" in message
    assert len(store) == traces_before  # refused before building anything


# ---------------------------------------------------------------------- GET .../steps/{index}


@pytest.mark.parametrize("index", range(N_STEPS))
def test_every_step_has_figures_formulas_and_a_passing_gradcheck(client, trace, index):
    response = client.get(f"/api/traces/{trace['id']}/steps/{index}")
    assert response.status_code == 200
    step = assert_valid_json(response)
    assert set(step) == STEP_KEYS
    shared = ("index", "name", "phase", "layer", "title", "block")  # the summary adds group, op, op_title
    assert {k: step[k] for k in shared} == {k: trace["steps"][index][k] for k in shared}
    assert step["explanation"] and step["formula"]["forward"]["mathml"].startswith("<math")
    assert step["formula"]["backward"]["latex"] and step["formula"]["backward"]["mathml"].startswith("<math")
    assert step["name"] in step["shapes"]
    assert step["gradcheck"]["passed"], step["gradcheck"]
    assert step["gradcheck"]["checks"] and step["warnings"] == []
    assert len(step["figures"]) >= 1
    assert len({f["id"] for f in step["figures"]}) == len(step["figures"])
    for figure in step["figures"]:
        assert figure["role"] in ROLES and figure["title"]
        assert figure["figure"]["data"] and "template" not in figure["figure"]["layout"]
        table = figure["table"]
        assert len(table["rows"]) == len(table["index"]) and all(len(r) == len(table["columns"]) for r in table["rows"])
    is_softmax_backward = step["kind"] == "softmax" and step["phase"] == "backward"
    assert (step["jacobian"] is not None) == is_softmax_backward


def _step(client, trace, name, phase, **params) -> dict:
    """The step computing `name` (phase "forward": the forward or loss op) or its backward."""
    index = next(
        s["index"] for s in trace["steps"] if s["name"] == name and (s["phase"] == "backward") == (phase == "backward")
    )
    response = client.get(f"/api/traces/{trace['id']}/steps/{index}", params=params)
    assert response.status_code == 200, response.text
    return response.json()


def _figure(step, figure_id) -> dict:
    return next(f for f in step["figures"] if f["id"] == figure_id)


@pytest.mark.parametrize("phase", ["forward", "backward"])
@pytest.mark.parametrize("name", ["layers.0.attention.scores", "layers.0.attention.probs", "layers.0.attention.heads"])
def test_attention_steps_show_every_head_with_token_labels(client, trace, name, phase):
    step = _step(client, trace, name, phase)
    grids = [f for f in step["figures"] if f["role"] == "attention"]
    assert grids
    for grid in grids:
        heatmaps = [t for t in grid["figure"]["data"] if t["type"] == "heatmap"]
        assert len(heatmaps) == 4
        assert [a["text"] for a in grid["figure"]["layout"]["annotations"]] == [f"head {h}" for h in range(4)]
        assert heatmaps[0]["y"][:2] == ["0 t", "1 h"]


def test_small_head_grids_are_whole_and_the_head_route_repeats_one_panel(client, trace):
    """A grid within the cell budget is sent whole (`heads.pooled` false); the head route
    answers the same values for one head, as a figure entry of its own."""
    step = _step(client, trace, "layers.0.attention.probs", "backward")
    grid = _figure(step, "arriving.layers.0.attention.probs")
    T = trace["T"]
    assert grid["heads"] == {"count": 4, "shape": [T, T], "shown": [T, T], "pooled": False}
    assert all(f["heads"] is None for f in step["figures"] if f["role"] != "attention")
    # without `figure`: the step's first grid
    response = client.get(f"/api/traces/{trace['id']}/steps/{step['index']}/head", params={"head": 2})
    assert response.status_code == 200
    head = response.json()
    assert head["grid"] == grid["id"] and head["id"] == f"{grid['id']}.head2" and head["role"] == "attention"
    keys = {
        "index",
        "seq",
        "head",
        "grid",
        "id",
        "title",
        "role",
        "figure",
        "table",
        "note",
        "heads",
        "download",
        "stats",
    }
    assert set(head) == keys and head["title"] == "Gradient arriving at the layer 0 attention probabilities, head 2"
    assert head["download"] == f"/api/traces/{trace['id']}/tensors/layers.0.attention.probs?grad=true"
    panel = grid["figure"]["data"][2]["z"]
    assert head["figure"]["data"][0]["z"] == panel and head["figure"]["data"][0]["y"][:2] == ["0 t", "1 h"]


def test_gradient_figures_use_a_zero_centred_diverging_scale(client, trace):
    step = _step(client, trace, "layers.0.feed_forward.gate", "backward")
    for figure in step["figures"]:
        heatmap = figure["figure"]["data"][0]
        assert heatmap["zmid"] == 0 and heatmap["colorscale"][0][1] == "rgb(5,48,97)"  # RdBu reversed: blue first
    weight = _figure(step, "contribution.layers.0.feed_forward.w1")
    assert weight["title"] == "Weight gradient from this op: layer 0 gate weights W1"
    assert weight["download"] is None  # this op's contribution, not a recorded gradient
    grid = _step(client, trace, "layers.0.attention.probs", "backward")["figures"][0]
    assert grid["figure"]["layout"]["coloraxis"]["cmid"] == 0


def test_softmax_backward_steps_point_to_their_jacobian(client, trace):
    attention = _step(client, trace, "layers.0.attention.probs", "backward")
    assert attention["jacobian"] == {"kind": "attention", "layer": 0, "n_head": 4, "T": trace["T"]}
    output = _step(client, trace, "output_probs", "backward", pos=3)
    assert output["jacobian"] == {"kind": "output", "T": trace["T"]}
    identity = _figure(output, "identity")
    assert identity["role"] == "check" and "position 3" in identity["title"]
    assert identity["table"]["columns"] == ["p", "onehot", "(p − onehot)/N", "recorded dL/dlogits"]
    target_row = next(
        r for i, r in zip(identity["table"]["index"], identity["table"]["rows"], strict=True) if "target" in i
    )
    assert target_row[1] == 1 and target_row[2] == pytest.approx(target_row[3], rel=1e-4)


def test_loss_steps_show_the_per_token_loss_with_targets(client, trace):
    for name, phase in [("token_loss", "forward"), ("loss", "forward"), ("loss", "backward")]:
        loss = _figure(_step(client, trace, name, phase), "loss.per_token")
        assert loss["role"] == "loss"
        bars = loss["figure"]["data"][0]
        assert bars["type"] == "bar" and bars["x"][0] == "0 t→h"
        assert loss["figure"]["layout"]["shapes"][0]["y0"] == pytest.approx(trace["loss"], rel=1e-6)


def test_residual_backward_shows_skip_branch_and_their_sum(client, trace):
    step = _step(client, trace, "layers.0.attention_residual", "backward")
    residual = _figure(step, "residual")
    assert residual["role"] == "residual" and len(residual["figure"]["data"]) == 3
    for row in residual["table"]["rows"]:
        for j in range(0, len(row), 3):
            assert row[j] + row[j + 1] == pytest.approx(row[j + 2], rel=1e-4, abs=1e-7)


def test_seq_selects_the_sequence_and_is_validated(client, batch_trace):
    base = f"/api/traces/{batch_trace['id']}/steps/0"
    first, second = client.get(base).json(), client.get(base, params={"seq": 1}).json()
    assert first["figures"][-1]["table"]["rows"] != second["figures"][-1]["table"]["rows"]
    response = client.get(base, params={"seq": 2})
    assert response.status_code == 422 and error_fields(response) == ["seq"]
    assert "between 0 and 1" in response.json()["detail"][0]["msg"]
    response = client.get(base, params={"pos": 99})
    assert response.status_code == 422 and error_fields(response) == ["pos"]


@pytest.mark.parametrize("index", [N_STEPS, 10_000, -1])
def test_step_out_of_range_is_404_naming_the_range(client, trace, index):
    response = client.get(f"/api/traces/{trace['id']}/steps/{index}")
    assert response.status_code == 404
    assert f"0 to {N_STEPS - 1}" in response.json()["detail"]


@pytest.mark.parametrize(
    "path", ["/steps/0", "/jacobian?layer=0", "/tensors/embedding"], ids=["steps", "jacobian", "tensors"]
)
def test_unknown_trace_id_is_404_saying_what_to_do(client, path):
    response = client.get(f"/api/traces/0123456789abcdef0000{path}")
    assert response.status_code == 404
    assert "POST its spec to /api/traces again" in response.json()["detail"]


def test_an_evicted_trace_is_rebuilt_from_its_spec():
    one = spec_cost(resolve(TraceSpec.model_validate(SMALL_SPEC), Settings())).nbytes
    with make_client(cache_bytes=one + 1) as client:  # every new build's room evicts the previous trace
        first = client.post("/api/traces", json=SMALL_SPEC).json()
        client.post("/api/traces", json={**SMALL_SPEC, "seed": 2})
        assert len(client.app.state.services.store) == 1
        response = client.get(f"/api/traces/{first['id']}/steps/1")
        assert response.status_code == 200 and response.json()["name"] == first["steps"][1]["name"]


def test_step_views_are_gzipped_timed_and_computed_in_the_bounded_pool(client, trace):
    url = f"/api/traces/{trace['id']}/steps/8"
    zipped = client.get(url, headers={"Accept-Encoding": "gzip"})
    plain = client.get(url, headers={"Accept-Encoding": "identity"})
    assert zipped.headers["content-encoding"] == "gzip" and "content-encoding" not in plain.headers
    assert zipped.json() == plain.json()
    assert plain.headers["server-timing"].startswith("total;dur=")
    executor = client.app.state.services.executor
    assert executor._max_workers == client.app.state.settings.worker_threads


# ---------------------------------------------------------------------- GET .../jacobian


def test_attention_jacobian_row(client, trace):
    response = client.get(f"/api/traces/{trace['id']}/jacobian", params={"layer": 0, "head": 3, "pos": 4})
    assert response.status_code == 200
    row = assert_valid_json(response)
    assert {k: row[k] for k in ("kind", "layer", "head", "seq", "pos")} == {
        "kind": "attention", "layer": 0, "head": 3, "seq": 0, "pos": 4,
    }  # fmt: skip
    assert row["labels"] == ["0 t", "1 h", "2 e", "3 ␣", "4 c"]
    assert len(row["p"]) == len(row["dprobs"]) == len(row["chain"]) == len(row["recorded"]) == 5
    assert sum(row["p"]) == pytest.approx(1, abs=1e-5)
    assert row["ok"] and row["max_rel_error"] < 1e-4
    assert row["chain"] == pytest.approx(row["recorded"], rel=1e-4, abs=1e-9)
    assert row["figure"]["data"][0]["type"] == "heatmap"
    assert len(row["vectors_figure"]["data"]) == 2


def test_output_jacobian_row_shows_top_k_and_the_target(client, trace):
    row = client.get(f"/api/traces/{trace['id']}/jacobian", params={"layer": "output", "pos": 2, "top_k": 3}).json()
    assert row["kind"] == "output" and row["layer"] == "output" and row["head"] is None
    assert 3 <= len(row["labels"]) <= 4 and any(label.endswith("(target)") for label in row["labels"])
    assert row["ok"]


def test_output_jacobian_of_a_vocabulary_under_ten_shows_every_token_by_default(client):
    """The page asks without top_k: the default (10) is cut to the vocabulary, not refused; an
    explicit top_k past it still is, naming the field and the limit."""
    spec = {"config": {**SMALL_CONFIG, "vocab_size": 6}, "tokens": [0, 1, 2, 3, 4, 5, 0, 1]}
    trace_id = client.post("/api/traces", json=spec).json()["id"]
    row = client.get(f"/api/traces/{trace_id}/jacobian", params={"layer": "output", "pos": 3})
    assert row.status_code == 200
    assert row.json()["indices"] == [0, 1, 2, 3, 4, 5] and row.json()["ok"]
    assert "the 6 most probable" in row.json()["note"]
    refused = client.get(f"/api/traces/{trace_id}/jacobian", params={"layer": "output", "top_k": 7})
    assert refused.status_code == 422 and error_fields(refused) == ["top_k"]
    assert "between 1 and 6" in refused.json()["detail"][0]["msg"]


def test_jacobian_defaults_to_the_last_position(client, trace):
    row = client.get(f"/api/traces/{trace['id']}/jacobian", params={"layer": 0}).json()
    assert row["pos"] == trace["T"] - 1 and row["head"] == 0 and len(row["labels"]) == trace["T"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"layer": 1}, "layer"),
        ({"layer": "first"}, "layer"),
        ({"layer": 0, "head": 4}, "head"),
        ({"layer": 0, "pos": 99}, "pos"),
        ({"layer": 0, "pos": -1}, "pos"),
        ({"layer": 0, "seq": 1}, "seq"),
        ({"layer": "output", "top_k": 0}, "top_k"),
        ({"layer": "output", "top_k": 10_000}, "top_k"),
        ({"layer": 0, "head": "x"}, "head"),
        ({}, "layer"),
    ],
)
def test_jacobian_bad_queries_are_422_naming_the_field(client, trace, params, field):
    response = client.get(f"/api/traces/{trace['id']}/jacobian", params=params)
    assert response.status_code == 422
    assert error_fields(response) == [field]


# ---------------------------------------------------------------------- GET .../tensors/{name}


def _trace_object(client, trace_id):
    store = client.app.state.services.store
    return store.get(store.spec(trace_id))


def test_tensor_as_npy_and_as_json(client, trace):
    recorded = _trace_object(client, trace["id"])
    response = client.get(f"/api/traces/{trace['id']}/tensors/layers.0.attention.probs")
    assert response.status_code == 200 and response.headers["content-type"] == "application/octet-stream"
    np.testing.assert_array_equal(np.load(io.BytesIO(response.content), allow_pickle=False),
                                  recorded["layers.0.attention.probs"])  # fmt: skip
    grad = client.get(f"/api/traces/{trace['id']}/tensors/layers.0.attention.wq", params={"grad": "true"})
    np.testing.assert_array_equal(np.load(io.BytesIO(grad.content)), recorded.grad("layers.0.attention.wq"))
    body = assert_valid_json(
        client.get(f"/api/traces/{trace['id']}/tensors/layers.0.attention.scores", params={"format": "json"})
    )
    assert body["shape"] == [1, 4, trace["T"], trace["T"]] and body["dtype"] == "float32" and not body["grad"]
    assert body["data"][0][0][0][1] is None  # a masked score, −∞, is null
    tokens = client.get(f"/api/traces/{trace['id']}/tensors/tokens", params={"format": "json"}).json()
    assert tokens["data"] == trace["tokens"]["inputs"]


@pytest.mark.parametrize(
    ("name", "params"),
    [("nope", {}), ("..", {}), ("%2e%2e%2fapp", {}), ("tokens", {"grad": "true"}), ("embedding.", {})],
)
def test_unknown_tensor_names_are_404(client, trace, name, params):
    response = client.get(f"/api/traces/{trace['id']}/tensors/{name}", params=params)
    assert response.status_code == 404


def test_tensor_bad_format_is_422(client, trace):
    response = client.get(f"/api/traces/{trace['id']}/tensors/embedding", params={"format": "csv"})
    assert response.status_code == 422 and error_fields(response) == ["format"]


# ---------------------------------------------------------------------- GET /api/models


def test_models_lists_presets_that_start_a_trace(client):
    body = client.get("/api/models").json()
    assert all(m["shipped"] for m in body["models"])  # demo checkpoints only: this app has no uploads
    names = [p["name"] for p in body["presets"]]
    assert names == ["tiny-1", "tiny-2", "class"]
    for preset in body["presets"]:
        assert preset["label"] and preset["config"]["n_layer"] >= 1
        spec = {"config": {k: v for k, v in preset["config"].items() if v is not None},
                "tokenizer": preset["tokenizer"], "text": preset.get("text", "hello world")}  # fmt: skip
        resolve(TraceSpec.model_validate(spec), client.app.state.settings)  # a valid spec, not built here


# ---------------------------------------------------------------------- NaN safety


def test_nan_and_inf_never_break_the_json():
    with make_client() as client:
        body = client.post("/api/traces", json={**SMALL_SPEC, "seed": 7}).json()
        recorded = _trace_object(client, body["id"])
        recorded["layers.0.attention.q"][0, 1, :3] = np.nan
        recorded.grad("layers.0.attention.q")[0, 2, 0] = np.inf
        recorded["output_probs"][0, 0, 0] = np.nan
        recorded.loss = float("nan")
        # traces never change in the server; this one was changed behind its back, so drop the
        # summary cached for its id (a re-posted spec is answered from that cache)
        client.app.state.services.answers.cache = LRU(100)
        assert client.post("/api/traces", json={**SMALL_SPEC, "seed": 7}).json()["loss"] is None
        for index in (s["index"] for s in body["steps"] if s["name"] in ("layers.0.attention.q", "output_probs")):
            response = client.get(f"/api/traces/{body['id']}/steps/{index}")
            assert response.status_code == 200
            step = assert_valid_json(response)
            assert any("NaN" in w for w in step["warnings"]), (step["name"], step["phase"], step["warnings"])
        response = client.get(f"/api/traces/{body['id']}/jacobian", params={"layer": "output", "pos": 0})
        assert response.status_code == 200 and assert_valid_json(response)["p"][0] is None
        data = client.get(f"/api/traces/{body['id']}/tensors/layers.0.attention.q", params={"format": "json"}).json()
        assert data["data"][0][1][:3] == [None, None, None]
