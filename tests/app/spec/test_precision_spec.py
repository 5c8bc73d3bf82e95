"""A spec in bfloat16 or float16: its loss-scale fields checked and named when refused, canonical (in
the trace id and the permalink) only for a low-precision dtype, and the step built in that precision."""

from __future__ import annotations

import pytest

from app.settings import Settings
from app.spec import TraceSpec, resolve
from app.spec.query import spec_from_query, spec_to_query
from app.traces.precision import precision_json
from app.traces.store import build_trace
from app.traces.working import check_bytes, view_bytes
from tests.helpers.client import post_trace

SMALL = {"n_layer": 1, "n_head": 2, "n_kv_head": 2, "n_embd": 16, "ffn_hidden": 24, "seq_len": 16}


def resolved(**fields):
    return resolve(TraceSpec(config=SMALL, text="the cat sat", **fields), Settings())


def test_a_low_precision_spec_names_its_fields_in_its_canonical_form():
    spec = resolved(dtype="float16", loss_scale=1024, loss_scale_growth=50)
    assert spec.canonical["dtype"] == "float16"
    assert {k: spec.canonical[k] for k in ("loss_scale", "loss_scale_growth", "flush_to_zero")} == {
        "loss_scale": 1024.0,
        "loss_scale_growth": 50,
        "flush_to_zero": False,
    }
    assert spec.dtype == "float32"  # the arrays: float32 master weights, a float32 trace's size
    assert (spec.precision.name, spec.precision.loss_scale) == ("float16", 1024.0)
    assert "loss_scale" not in resolved().canonical  # a float32 spec keeps its id (tests/app/spec/test_trace_ids.py)
    assert resolved(dtype="bfloat16").id != resolved(dtype="float16").id != resolved().id


def test_the_permalink_carries_the_precision():
    spec = resolved(dtype="bfloat16", loss_scale=2.0**16, flush_to_zero=True)
    query = spec_to_query(spec.canonical)
    assert (query["dtype"], query["loss_scale"], query["flush_to_zero"]) == ("bfloat16", "65536", "true")
    assert resolve(spec_from_query(query), Settings()).id == spec.id
    largest = resolved(dtype="float16", loss_scale=2.0**32, loss_scale_growth=1)
    assert spec_to_query(largest.canonical)["loss_scale"] == "4294967296"  # whole: not %g's 4.29497e+09
    assert resolve(spec_from_query(spec_to_query(largest.canonical)), Settings()).id == largest.id


@pytest.mark.parametrize(
    ("fields", "field", "says"),
    [
        ({"loss_scale": 8}, "loss_scale", "loss_scale applies to a bfloat16 or float16 step; this one is float32"),
        ({"dtype": "float64", "flush_to_zero": True}, "flush_to_zero", "this one is float64"),
        ({"dtype": "float16", "loss_scale": 3}, "loss_scale", "a power of two from 1 to 2^32, got 3"),
        ({"dtype": "float16", "loss_scale": 2.0**40}, "loss_scale", "a power of two from 1 to 2^32"),
        ({"dtype": "float16", "loss_scale_growth": 0}, "loss_scale_growth", "between 1 and 100000, got 0"),
        ({"dtype": "float8"}, "dtype", "'float32', 'float64', 'bfloat16' or 'float16'"),
        ({"dtype": "float16", "flush_to_zero": 1}, "flush_to_zero", "must be true or false"),
    ],
)
def test_a_bad_precision_field_is_a_4xx_naming_it(client, fields, field, says):
    response = client.post("/api/traces", json={"config": SMALL, "text": "the cat", **fields})
    assert response.status_code == 422
    detail = response.json()["detail"][0]
    assert detail["loc"][-1] == field
    assert says in detail["msg"]


def test_a_float16_training_under_the_dynamic_scaler_skips_the_steps_that_overflow(client):
    """From 2^32 every float16 step overflows: each halves the scale and skips its update, so the
    loss never moves; at a static 2^8 the same training lowers it."""
    spec = {"config": SMALL, "text": "the cat sat", "dtype": "float16", "optimizer": {"name": "sgd", "lr": 0.5}}
    too_high = post_trace(client, {**spec, "loss_scale": 2.0**32, "loss_scale_growth": 1, "train_steps": 3})
    assert too_high["dtype"] == "float16"
    assert too_high["training"]["first_loss"] == too_high["training"]["last_loss"]
    # the recorded step overflows too: its update is skipped, said so, and moves nothing
    update = client.get(f"/api/traces/{too_high['id']}/steps/{len(too_high['steps']) - 1}").json()
    assert update["update"]["skipped"] is True
    assert update["update"]["loss_after"] == update["update"]["loss_before"]
    assert all(row["update_rms"] == 0 for row in update["update"]["params"])
    assert any("update was skipped" in warning and "2^28" in warning for warning in update["warnings"])
    fitting = post_trace(client, {**spec, "loss_scale": 2.0**8, "train_steps": 3})
    assert fitting["training"]["last_loss"] < fitting["training"]["first_loss"]


def test_a_low_precision_step_s_views_and_checks(client):
    """Every step's gradient check passes in float64 (the twin's exact math); a fault still fails."""
    for dtype in ("bfloat16", "float16"):
        summary = post_trace(client, {"config": SMALL, "text": "the cat sat", "dtype": dtype})
        for index in (3, len(summary["steps"]) - 2):
            view = client.get(f"/api/traces/{summary['id']}/steps/{index}").json()
            assert view["gradcheck"]["passed"], (dtype, index)
            # the gradient on screen is the format's: its round-off is reported under its name
            assert view["gradcheck"][f"{dtype}_roundoff"] > 0 and "float32_roundoff" not in view["gradcheck"]
    faulty = post_trace(
        client, {"config": SMALL, "text": "the cat sat", "dtype": "bfloat16", "faults": ["softmax_missing_sum_term"]}
    )
    step = next(s for s in faulty["steps"] if s["name"] == "layers.0.attention.scores" and s["phase"] == "backward")
    assert not client.get(f"/api/traces/{faulty['id']}/steps/{step['index']}").json()["gradcheck"]["passed"]


def test_the_numbers_health_route(client):
    summary = post_trace(client, {"config": SMALL, "text": "the cat sat", "dtype": "float16", "loss_scale": 256})
    answer = client.get(f"/api/traces/{summary['id']}/precision").json()
    assert (answer["dtype"], answer["loss_scale"], answer["unit_roundoff"]) == ("float16", 256.0, 2.0**-11)
    assert {op["kind"]: op["precision"] for op in answer["ops"]}["softmax"] == "float32"
    names = [tensor["name"] for tensor in answer["tensors"]]
    assert names == [step["name"] for step in summary["steps"] if step["phase"] in ("forward", "loss")]
    probs = answer["tensors"][names.index("layers.0.attention.probs")]
    assert probs["value"]["held_in"] == "float32"
    assert 0 < probs["value"]["rel_error"] < 10 * 2.0**-11
    assert answer["first_losing"] is None or answer["first_losing"]["which"] in ("value", "grad")
    params = {param["name"]: param["grad"] for param in answer["params"]}
    assert params["layers.0.attention.wq"]["held_in"] == "float16" and params["norm"]["held_in"] == "float32"
    assert all(0 < grad["rel_error"] < 10 * 2.0**-11 for grad in params.values())
    assert answer["update"] is None  # no training step
    float32 = post_trace(client, {"config": SMALL, "text": "the cat sat"})
    refused = client.get(f"/api/traces/{float32['id']}/precision")
    assert refused.status_code == 422
    assert refused.json()["detail"][0]["loc"] == ["path", "trace_id"]
    assert "is a float32 step" in refused.json()["detail"][0]["msg"]
    assert client.get("/api/traces/0123456789abcdef0123/precision").status_code == 404
    quiz = post_trace(client, {"config": SMALL, "text": "the cat sat", "dtype": "float16", "quiz": 3})
    refused = client.get(f"/api/traces/{quiz['id']}/precision")
    assert refused.status_code == 403 and "quiz" in refused.json()["detail"]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_the_softmax_checks_allow_the_format_s_round_off(client, dtype):
    """The chain rule J @ dL/dp = dL/dscores and the output's (p − onehot)/N hold to the format's
    round-off (CHAIN_RULE, SOFTMAX_IDENTITY: xt_core/checks/tolerances.py), not float32's."""
    summary = post_trace(client, {"config": SMALL, "text": "the cat sat on", "dtype": dtype})
    for layer in ("0", "output"):
        answer = client.get(f"/api/traces/{summary['id']}/jacobian?layer={layer}&head=0&pos=5").json()
        assert answer["ok"], layer
    step = next(s for s in summary["steps"] if s["phase"] == "backward" and s["name"] == "output_probs")
    view = client.get(f"/api/traces/{summary['id']}/steps/{step['index']}").json()
    assert "identity" in [figure["id"] for figure in view["figures"]]
    assert not any("deviates" in warning for warning in map(str, view["warnings"])), view["warnings"]


def test_a_step_compared_across_precisions_names_each_and_weighs_the_same(client):
    """The same spec in float32 and bfloat16: compare aligns them and says each one's precision;
    the low-precision trace is no larger than the float32 one (its arrays are float32)."""
    spec = {"config": SMALL, "text": "the cat sat on"}
    a, b = post_trace(client, {**spec, "dtype": "float32"}), post_trace(client, {**spec, "dtype": "bfloat16"})
    answer = client.get(f"/api/traces/{a['id']}/steps/5/compare/{b['id']}").json()
    assert (answer["a"]["dtype"], answer["b"]["dtype"]) == ("float32", "bfloat16")
    float32, bfloat16 = (resolved(dtype=d) for d in ("float32", "bfloat16"))
    assert build_trace(bfloat16).nbytes() <= build_trace(float32).nbytes()


def test_a_real_model_s_parameter_gradients_are_left_out(monkeypatch):
    """Their comparison holds a float64 copy of every weight and gradient: past the bound, null."""
    from app.traces import precision

    trace = build_trace(resolved(dtype="bfloat16"))
    assert len(precision.precision_json(trace)["params"]) == len(trace.param_names)
    monkeypatch.setattr(precision, "PARAM_HEALTH_MAX_PARAMS", trace.cfg.n_params() - 1)
    assert precision.precision_json(trace)["params"] is None


def test_the_numbers_health_holds_its_working_bytes_while_it_runs(client, monkeypatch):
    """Its float64 twin's replays of every segment count in the one budget, as a check job's do."""
    services = client.app.state.services
    summary = post_trace(client, {"config": SMALL, "text": "the cat sat on", "dtype": "bfloat16"})
    trace = services.store.get(services.store.spec(summary["id"]))
    seen, made = [], precision_json

    def seeing(held_trace):
        seen.append((services.admission.holding, services.store.reserved))
        return made(held_trace)

    monkeypatch.setattr("app.routes.precision.precision_json", seeing)
    assert client.get(f"/api/traces/{summary['id']}/precision").status_code == 200
    assert seen == [(1, check_bytes(trace) + view_bytes(trace))]
    assert services.admission.holding == 0 and services.store.reserved == 0
