"""Step views stay light on the classroom config (4 layers, 8 heads, width 256, 128
positions, byte tokens, with an update step): every kind of step's raw JSON under 300 kB, the
head grids a downsampled overview, and one head's every value on demand from the head route.

The layers repeat one another's shapes, so `make test` views one step per op and phase (49 of
the 157: every op, the update step, and every layer among them); the long version views all
157 in `make loadtest` (XT_LOADTEST=1). `make loadbench` prints every kind's size, raw and
gzipped, over HTTP (benchmarks/load.py)."""

from __future__ import annotations

import base64
import io
import json
import re
from dataclasses import replace

import numpy as np
import pytest

from app.steps import view as views
from app.steps.context import TraceContext
from app.steps.kind import split_budget
from tests.helpers.client import post_trace
from tests.helpers.env import sized
from tests.helpers.specs import class_spec
from xt_core.checks.directional import DirectionCheck, StepCheck

LIMIT = 300_000  # bytes of raw (uncompressed) JSON per step view
# The class spec (T = 128 = seq_len, the largest views the class config draws) with an update step.
CLASS_SPEC = {**class_spec(), "optimizer": {"name": "adamw"}}
HEAVY = ("attention.scores", "attention.probs", "attention.heads", "attention_residual", "feed_forward.swiglu")


@pytest.fixture(scope="module")
def trace(client) -> dict:
    body = post_trace(client, CLASS_SPEC)
    assert body["T"] == 128 and body["config"]["n_head"] == 8
    return body


@pytest.fixture(scope="module")
def ctx(client, trace) -> TraceContext:
    store = client.app.state.services.store
    spec = store.spec(trace["id"])
    return TraceContext(spec, store.get(spec), client.app.state.settings)


def stand_in_check(ctx: TraceContext, index: int) -> StepCheck:
    """A gradient check of the same JSON size as the real one, without the ~0.2 s a real
    check of a class-size step costs (the payload does not depend on its numbers)."""
    record = ctx.trace.records[index]
    names = [*record.inputs, record.name] if record.phase != "update" else list(ctx.trace.param_names)
    value = -0.12345678901234567
    return StepCheck(
        index, [DirectionCheck(n, value, value, 1.2345678901234e-9, value, 1.2345678901234e-9) for n in names], 1e-3
    )


def decoded(z: dict) -> np.ndarray:
    values = np.frombuffer(base64.b64decode(z["bdata"]), dtype=np.dtype(z["dtype"]))
    return values.reshape(tuple(int(s) for s in z["shape"].split(",")))


def op_of(step: dict) -> tuple[str, str]:
    """What a step does, whatever its layer: ("attention.probs", "backward")."""
    return re.sub(r"^layers\.\d+\.", "", step["name"]), step["phase"]


def one_step_per_op(steps: list[dict], n_layer: int) -> list[dict]:
    """A step of every (op, phase), the i-th op's from layer i mod n_layer: every layer appears."""
    by_op: dict[tuple[str, str], list[dict]] = {}
    for step in steps:
        by_op.setdefault(op_of(step), []).append(step)
    return [group[i % n_layer] if len(group) == n_layer else group[0] for i, group in enumerate(by_op.values())]


def test_every_kind_of_step_view_is_under_300_kb(ctx, trace):
    assert len(trace["steps"]) == 157 and trace["steps"][-1]["phase"] == "update"
    shown = sized(one_step_per_op(trace["steps"], 4), trace["steps"])
    assert {op_of(s) for s in shown} == {op_of(s) for s in trace["steps"]}  # every op, phase and layer
    assert {s["layer"] for s in shown} == {None, 0, 1, 2, 3}
    sizes, kinds = {}, set()
    for step in shown:
        body = views.step_view_json(ctx, step["index"], 0, 0, stand_in_check(ctx, step["index"]))
        sizes[(step["index"], step["name"], step["phase"])] = len(body)
        kinds.add((json.loads(body)["kind"], step["phase"]))
    print(f"\n{len(sizes)} step views, {len(kinds)} kinds of view; largest {max(sizes.values()):,} bytes")
    over = {key: size for key, size in sizes.items() if size >= LIMIT}
    assert not over, f"step views over {LIMIT} bytes: {over}"


def test_the_step_budget_is_shared_by_need_and_weight():
    # a small figure takes what it needs; a head grid (weight 2) gets twice a 2-D heatmap's share
    assert split_budget([100, 10**6, 10**6], [1.0, 1.0, 2.0], 40_000) == [100, 13_300, 26_600]
    assert split_budget([0, 5_000, 10**6], [1.0, 1.0, 1.0], 40_000) == [0, 5_000, 35_000]  # bars: no cells


def test_a_view_over_the_byte_budget_gets_fewer_cells(ctx, trace):
    """max_step_bytes is a hard bound: a view over it is redrawn with half the cells, ..."""
    index = next(s["index"] for s in trace["steps"] if s["name"] == "layers.2.attention.probs")
    check = stand_in_check(ctx, index)
    usual = views.step_view_json(ctx, index, 0, 0, check)
    tight = replace(ctx, settings=replace(ctx.settings, max_step_bytes=len(usual) // 2))
    assert len(views.step_view_json(tight, index, 0, 0, check)) <= len(usual) // 2


@pytest.mark.parametrize("name", HEAVY)
@pytest.mark.parametrize("phase", ["forward", "backward"])
def test_the_heaviest_steps_through_the_route(client, trace, name, phase):
    """The route (real gradient check, cached bytes) answers the same light view."""
    index = next(s["index"] for s in trace["steps"] if s["name"] == f"layers.3.{name}" and s["phase"] == phase)
    response = client.get(f"/api/traces/{trace['id']}/steps/{index}", headers={"Accept-Encoding": "identity"})
    assert response.status_code == 200 and len(response.content) < LIMIT
    for grid in (f for f in response.json()["figures"] if f["heads"]):
        assert grid["heads"]["pooled"]  # 8 heads × 128 × 128 is far over the step's cell budget
        if grid["heads"]["shape"] == [128, 128]:
            assert grid["heads"]["shown"] == [43, 43]  # 3×3 blocks
        assert "Downsampled" in grid["note"] and "every value" in grid["note"]


@pytest.mark.parametrize("params", [{"layer": 3, "head": 7, "pos": 127}, {"layer": "output", "top_k": 64}])
def test_jacobian_rows_are_under_300_kb(client, trace, params):
    response = client.get(f"/api/traces/{trace['id']}/jacobian", params=params)
    assert response.status_code == 200 and len(response.content) < LIMIT


def _tensor(client, trace, name: str, grad: bool) -> np.ndarray:
    response = client.get(f"/api/traces/{trace['id']}/tensors/{name}", params={"grad": grad})
    return np.load(io.BytesIO(response.content))


@pytest.mark.parametrize(
    ("name", "phase", "figure", "grad"),
    [
        ("layers.3.attention.probs", "backward", "arriving.layers.3.attention.probs", True),
        ("layers.0.attention.probs", "forward", "input.layers.0.attention.scores", False),  # −∞ masked
    ],
)
def test_one_head_at_full_resolution(client, trace, name, phase, figure, grad):
    index = next(s["index"] for s in trace["steps"] if s["name"] == name and s["phase"] == phase)
    url = f"/api/traces/{trace['id']}/steps/{index}/head"
    response = client.get(url, params={"figure": figure, "head": 5}, headers={"Accept-Encoding": "identity"})
    assert response.status_code == 200 and len(response.content) < LIMIT
    body = response.json()
    assert (body["index"], body["head"], body["seq"], body["grid"]) == (index, 5, 0, figure)
    assert body["heads"] == {"count": 8, "shape": [128, 128], "head": 5} and "head 5" in body["title"]
    tensor = _tensor(client, trace, figure.split(".", 1)[1], grad)[0, 5]
    expected = np.where(np.isfinite(tensor), tensor, np.nan).astype(np.float32)
    shown = decoded(body["figure"]["data"][0]["z"])
    np.testing.assert_array_equal(shown, expected)  # every value, NaN where masked
    assert len(body["figure"]["data"][0]["y"]) == 128 and "pooled" not in body["figure"]["data"][0]["hovertemplate"]
    again = client.get(url, params={"figure": figure, "head": 5}, headers={"Accept-Encoding": "gzip"})
    assert again.headers["content-encoding"] == "gzip" and again.json() == body  # cached bytes, both encodings


@pytest.mark.parametrize(
    ("params", "field", "message"),
    [
        ({"head": 8}, "head", "between 0 and 7"),
        ({"head": -1}, "head", "between 0 and 7"),
        ({"head": 0, "figure": "output.nope"}, "figure", "one of this step's head grids"),
        ({"head": 0, "seq": 1}, "seq", "between 0 and 0"),
        ({}, "head", "required"),
    ],
)
def test_bad_head_queries_are_422_naming_the_field(client, trace, params, field, message):
    index = next(s["index"] for s in trace["steps"] if s["name"] == "layers.1.attention.probs")
    response = client.get(f"/api/traces/{trace['id']}/steps/{index}/head", params=params)
    assert response.status_code == 422
    detail = response.json()["detail"][0]
    assert detail["loc"] == ["query", field] and message in detail["msg"]


def test_a_step_without_heads_or_out_of_range(client, trace):
    base = f"/api/traces/{trace['id']}/steps"
    response = client.get(f"{base}/0/head", params={"head": 0})
    assert response.status_code == 422 and "no grid of attention heads" in response.json()["detail"][0]["msg"]
    response = client.get(f"{base}/{len(trace['steps'])}/head", params={"head": 0})
    assert response.status_code == 404 and "out of range" in response.json()["detail"]
