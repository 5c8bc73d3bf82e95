"""Requests that claim memory in proportion to the model, on a toy model with the largest vocabulary
a spec may ask for (4,096): the output softmax's Jacobian is never built V × V (its check neither),
a tensor's JSON is refused past max_json_tensor_entries before a list is made of it, a .npy
answer streams the recorded array instead of copying it, and the bug lab's diff compares a V × C
gradient without float64 copies of it. Memory is measured with tracemalloc
(numpy reports its buffers to it), never timed."""

from __future__ import annotations

import io
import tracemalloc

import numpy as np
import pytest

from tests.helpers.client import make_client, post_trace
from tests.helpers.specs import SMALL_CONFIG

V = 4096  # Settings.max_vocab_size: the full Jacobian would be V² float64 = 128 MiB
TOKENS = np.random.default_rng(3).integers(0, V, (4, 33)).tolist()  # logits: 4 × 32 × 4096 float32 = 2 MiB


@pytest.fixture(scope="module")
def client():
    with make_client(max_json_tensor_entries=1000) as c:
        yield c


@pytest.fixture(scope="module")
def trace(client) -> dict:
    return post_trace(client, {"config": {**SMALL_CONFIG, "vocab_size": V}, "tokens": TOKENS, "seed": 2})


def peak_bytes_of(fn):
    """fn()'s answer and the most memory traced at once while it ran (every thread)."""
    tracemalloc.start()
    try:
        answer = fn()
        return answer, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_output_jacobian_builds_only_the_shown_block_and_checks_the_whole_row(client, trace):
    url = f"/api/traces/{trace['id']}/jacobian"
    store = client.app.state.services.store
    store.get(store.spec(trace["id"])).grad("logits")  # the head recomputed first (xt_core.recompute): not traced
    response, peak = peak_bytes_of(lambda: client.get(url, params={"layer": "output", "pos": 3, "top_k": 5}))
    assert response.status_code == 200, response.text
    assert peak < V * V * 8 / 16, f"{peak:,} bytes traced: a V × V matrix was built"
    row = response.json()
    assert 5 <= len(row["indices"]) <= 6 and len(row["p"]) == len(row["chain"]) == len(row["indices"])
    assert row["ok"] and row["max_rel_error"] < 1e-4

    recorded = store.get(store.spec(trace["id"]))
    p = recorded["output_probs"][0, 3].astype(np.float64)
    full = (np.diag(p) - np.outer(p, p)) @ recorded.grad("output_probs")[0, 3].astype(np.float64)  # the row, by J
    error = np.abs(full - recorded.grad("logits")[0, 3]).max()
    assert row["max_abs_error"] == pytest.approx(error, rel=1e-3, abs=1e-12)  # the whole row's, not the block's
    np.testing.assert_allclose(row["chain"], full[row["indices"]], rtol=1e-6, atol=1e-12)


def test_tensor_json_past_the_limit_is_422_naming_format_the_size_and_the_limit(client, trace):
    response = client.get(f"/api/traces/{trace['id']}/tensors/logits", params={"format": "json"})
    assert response.status_code == 422, response.text[:200]
    (error,) = response.json()["detail"]
    assert error["loc"] == ["query", "format"]
    for part in ("524,288 entries (4 × 32 × 4096)", "1,000", "max_json_tensor_entries", "format=npy"):
        assert part in error["msg"], (part, error["msg"])
    small = client.get(f"/api/traces/{trace['id']}/tensors/tokens", params={"format": "json"})
    assert small.status_code == 200 and small.json()["data"] == [row[:-1] for row in TOKENS]


def test_npy_streams_the_recorded_array_without_copying_it(client, trace):
    store = client.app.state.services.store
    logits = store.get(store.spec(trace["id"]))["logits"]
    url = f"/api/traces/{trace['id']}/tensors/logits"

    def download() -> int:
        with client.stream("GET", url) as response:
            assert response.status_code == 200
            assert int(response.headers["content-length"]) == logits.nbytes + 128  # the header: 128 bytes
            return sum(len(piece) for piece in response.iter_bytes())

    received, peak = peak_bytes_of(download)
    assert received == logits.nbytes + 128
    # the client's own buffer holds the body once; a copy of the array per request would double it
    assert peak < 1.5 * logits.nbytes, f"{peak:,} bytes traced for a {logits.nbytes:,}-byte tensor"
    body = client.get(url).content
    np.testing.assert_array_equal(np.load(io.BytesIO(body), allow_pickle=False), logits)


def test_a_faulty_embedding_gradient_is_compared_without_float64_copies_of_it():
    """GET .../steps/{index}/diff compares the faulty and correct V × C embedding gradients: a block
    at a time in float64, never whole (SmolLM2's: 0.9 GB of temporaries per request before)."""
    config = {**SMALL_CONFIG, "vocab_size": V, "n_embd": 128, "n_head": 4, "n_kv_head": 2}
    spec = {"config": config, "tokens": TOKENS[:1], "seed": 2, "faults": ["tied_embedding_one_contribution"]}
    with make_client() as c:
        trace = post_trace(c, spec)
        index = next(s["index"] for s in trace["steps"] if s["name"] == "embedding" and s["phase"] == "backward")
        url = f"/api/traces/{trace['id']}/steps/{index}/diff"
        c.get(url)  # the correct trace built once, outside the measurement
        response, peak = peak_bytes_of(lambda: c.get(url))
    assert response.status_code == 200, response.text[:200]
    as_float64 = V * 128 * 8
    assert peak < as_float64, f"{peak:,} bytes traced: the {as_float64:,}-byte float64 copy of the gradient is made"
    assert "tok_embeddings" in [entry["tensor"] for entry in response.json()["tensors"]]  # the V × C one
