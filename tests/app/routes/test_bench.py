"""The bench's routes: a page of a tensor (GET .../tensors/{name}/slice) equals the .npy's slice,
its limits are 422s naming the field; a compare of the same step of two traces shows float32's
round-off against float64 (rel ~1e-7), SGD against AdamW on the update step, and refuses traces
that do not align (422 naming what differs) and quizzes (403)."""

from __future__ import annotations

import asyncio
import io
import tempfile
from pathlib import Path

import httpx
import numpy as np
import pytest

from app.main import create_app
from app.settings import Settings
from app.steps import compare
from tests.helpers.aio import run_async
from tests.helpers.client import TEST_HOSTS, make_client, post_trace
from tests.helpers.specs import BATCH_SPEC

TRAINED = {**BATCH_SPEC, "optimizer": {"name": "adamw"}, "train_steps": 1}


def npy(client, trace_id: str, name: str, grad: bool = False) -> np.ndarray:
    answer = client.get(f"/api/traces/{trace_id}/tensors/{name}", params={"grad": str(grad).lower()})
    return np.load(io.BytesIO(answer.content))


def as_array(values) -> np.ndarray:
    return np.array([[np.nan if v is None else v for v in row] for row in values])


def test_slices_equal_the_npy(client, batch_trace):
    tid = batch_trace["id"]
    probs = npy(client, tid, "layers.0.attention.probs", grad=True)  # (2, H, 7, 7)
    page = client.get(
        f"/api/traces/{tid}/tensors/layers.0.attention.probs/slice",
        params={"grad": "true", "at": "1,2", "rows": "3:7", "cols": "1:5"},
    ).json()
    assert (page["rows"], page["cols"], page["at"], page["axes"]) == ([3, 7], [1, 5], [1, 2], ["B", "H", "T", "T"])
    np.testing.assert_array_equal(as_array(page["values"]), probs[1, 2, 3:7, 1:5])
    assert page["row_labels"][0] == f"3 {batch_trace['tokens']['input_labels'][1][3]}"
    weights = npy(client, tid, "tok_embeddings")
    page = client.get(f"/api/traces/{tid}/tensors/tok_embeddings/slice", params={"rows": "4:12"}).json()
    np.testing.assert_array_equal(as_array(page["values"]), weights[4:12, : page["cols"][1]])
    assert page["n_rows"] == 12 and len(page["row_labels"]) == 8


def test_find_jumps_to_a_token(client, trace):
    labels = trace["tokens"]["input_labels"][0]
    wanted = next(i for i, label in enumerate(labels) if label == "m")
    page = client.get(
        f"/api/traces/{trace['id']}/tensors/layers.0.attention_norm.out/slice", params={"find": "m"}
    ).json()
    assert page["rows"][0] == wanted and page["row_labels"][0] == f"{wanted} m"
    np.testing.assert_array_equal(
        as_array(page["values"])[0],
        npy(client, trace["id"], "layers.0.attention_norm.out")[0, wanted, : page["cols"][1]],
    )


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"rows": "0:9999"}, "rows"),
        ({"rows": "5:2"}, "rows"),
        ({"rows": "a:b"}, "rows"),
        ({"cols": "0:70"}, "cols"),  # 70 > max_slice_cols, the tensor is narrower: out of range
        ({"at": "0,0,0"}, "at"),
        ({"at": "9"}, "at"),
        ({"find": "no such token"}, "find"),
        ({"find": "m", "find_in": "cols"}, "find"),  # a feature axis holds no tokens
    ],
)
def test_slice_limits_name_the_field(client, trace, params, field):
    answer = client.get(f"/api/traces/{trace['id']}/tensors/layers.0.attention_norm.out/slice", params=params)
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"][0]["loc"] == ["query", field]


def test_float32_against_float64_shows_the_round_off(client, batch_trace):
    double = post_trace(client, {**BATCH_SPEC, "dtype": "float64"})
    index = next(
        s["index"] for s in batch_trace["steps"] if s["name"] == "layers.0.attention.probs" and s["phase"] == "backward"
    )
    answer = client.get(f"/api/traces/{batch_trace['id']}/steps/{index}/compare/{double['id']}")
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert (body["a"]["dtype"], body["b"]["dtype"]) == ("float32", "float64")
    for tensor in body["tensors"]:
        assert 1e-9 < tensor["difference"]["rel"] < 1e-5, tensor["label"]  # float32's round-off
        assert [f["id"].split(".")[1] for f in tensor["figures"]] == ["A", "B", "B − A"]
    value = body["tensors"][0]
    a = npy(client, batch_trace["id"], "layers.0.attention.probs").astype(np.float64)
    b = npy(client, double["id"], "layers.0.attention.probs")
    assert value["difference"]["rel"] == pytest.approx(np.linalg.norm(b - a) / np.linalg.norm(a), rel=1e-9)


def test_sgd_against_adamw_on_the_update_step(client):
    adamw = post_trace(client, TRAINED)
    sgd = post_trace(client, {**TRAINED, "optimizer": {"name": "sgd"}})
    update = adamw["steps"][-1]["index"]
    body = client.get(f"/api/traces/{adamw['id']}/steps/{update}/compare/{sgd['id']}").json()
    assert body["phase"] == "update" and [t["label"] for t in body["tensors"]] == ["ΔW", "gradient"]
    assert body["tensors"][0]["difference"]["rel"] > 0.1  # the two rules move the weights differently


def test_misaligned_traces_are_refused(client, batch_trace, trace):
    answer = client.get(f"/api/traces/{batch_trace['id']}/steps/3/compare/{trace['id']}")
    assert answer.status_code == 422
    error = answer.json()["detail"][0]
    assert (
        error["loc"] == ["path", "b"]
        and "config.vocab_size: 12 in a" in error["msg"]
        and "batch: 2 × 7" in error["msg"]
    )
    trained = post_trace(client, TRAINED)
    answer = client.get(f"/api/traces/{batch_trace['id']}/steps/3/compare/{trained['id']}")
    assert answer.status_code == 422 and "b has an update step" in answer.text
    assert client.get(f"/api/traces/{batch_trace['id']}/steps/3/compare/nope").status_code == 404


def test_find_in_the_columns_jumps_to_a_vocabulary_token(client, trace):
    """The logits' columns are the vocabulary: find_in=cols moves them to the token's id."""
    url = f"/api/traces/{trace['id']}/tensors/logits/slice"
    everything = client.get(url).json()
    wanted = everything["col_labels"].index("m")
    page = client.get(url, params={"find": "m", "find_in": "cols", "cols": "0:2"}).json()
    assert page["cols"] == [wanted, wanted + 2] and page["col_labels"][0] == "m"
    np.testing.assert_array_equal(
        as_array(page["values"]), npy(client, trace["id"], "logits")[0, : page["rows"][1], wanted : wanted + 2]
    )


def test_a_compares_difference_is_held_in_the_trace_budget(monkeypatch):
    """B − A (float64, the size of the compared tensor) and both traces' replays count in cache_bytes
    while the compare runs (app.traces.working), and are let go after it. A client of its own: no
    trace but these two is cached, so none is evicted to make room."""
    with make_client() as client:
        batch_trace = post_trace(client, BATCH_SPEC)
        double = post_trace(client, {**BATCH_SPEC, "dtype": "float64"})
        url = compare_url(batch_trace, double)
        services = client.app.state.services
        seen, made = [], compare.compare_view
        monkeypatch.setattr(
            compare,
            "compare_view",
            lambda *args: seen.append((services.admission.holding, services.store.reserved)) or made(*args),
        )
        before = services.store.reserved
        assert client.get(url).status_code == 200
        entries = int(np.prod(npy(client, batch_trace["id"], "logits").shape))
        assert seen and seen[0][0] == 1 and seen[0][1] - before >= 8 * entries
        assert services.admission.holding == 0 and services.store.reserved == before


def compare_url(a: dict, b: dict) -> str:
    index = next(s["index"] for s in a["steps"] if s["name"] == "logits" and s["phase"] == "backward")
    return f"/api/traces/{a['id']}/steps/{index}/compare/{b['id']}"


def test_a_compare_waits_for_room_in_the_budget_instead_of_a_503():
    """With the budget held by other work a compare waits for room, as a build does (it answered 503
    before: issue 35, finding 7), and answers once that work lets its bytes go. No small lane's room
    kept (small_build_bytes 0): the other work holds every byte left."""

    async def scenario():
        app = create_app(Settings(models_dir=Path(tempfile.mkdtemp()), allowed_hosts=TEST_HOSTS, small_build_bytes=0))
        services, store = app.state.services, app.state.services.store
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            a = (await http.post("/api/traces", json=BATCH_SPEC)).json()
            b = (await http.post("/api/traces", json={**BATCH_SPEC, "dtype": "float64"})).json()
            traces = [store.cached(store.spec(t["id"])) for t in (a, b)]  # in use: never evicted
            let_go = await services.admission.hold(store.settings.cache_bytes - store.live_bytes - store.reserved)
            answer = asyncio.ensure_future(http.get(compare_url(a, b)))
            for _ in range(1000):  # until the compare's job asks for its bytes (or it answered)
                if services.admission.working or answer.done():
                    break
                await asyncio.sleep(0.01)
            assert not answer.done() and len(services.admission.working) == 1  # it waits for room
            let_go()
            assert (await answer).status_code == 200 and all(t is not None for t in traces)
        services.shutdown()

    run_async(scenario())
