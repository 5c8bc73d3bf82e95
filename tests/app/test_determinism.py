"""Determinism across processes (issue 7, item 6): two independent servers (two uvicorn
subprocesses, two ports) given the same specs answer the same trace ids and bit-identical
tensors (.npy bytes compared exactly): a random init from a seed, a demo checkpoint, a fault
of the bug lab, a training run with its update step, float64, and a batch of token rows.

A trace is a pure function of its spec (DESIGN.md): no hidden state (time, id(), hash
randomisation, thread timing, BLAS threading, what the server did before) may leak into the
numbers. One server is the run's (tests/conftest.py: live_server, which other tests may have
used already), the other starts fresh for this module: one server start instead of two. A server
of its own: `make test-long` runs it (tests/conftest.py in_long_tier); within one process the same
bits for the same spec are tests/core/test_recompute.py's and tests/app/steps/test_snapshot.py's."""

from __future__ import annotations

import httpx
import pytest

from tests.helpers.server import running_server

TEXT = "the cat sat on the mat. the dog sat on the log."
# Values and gradients fetched for every spec: parameters, activations, the loss.
TENSORS = [
    ("tok_embeddings", False),
    ("tok_embeddings", True),
    ("layers.0.attention.wq", False),
    ("layers.0.attention.wq", True),
    ("layers.0.attention.probs", False),
    ("layers.0.feed_forward.swiglu", True),
    ("logits", False),
    ("logits", True),
    ("loss", False),
]


@pytest.fixture(scope="module")
def servers(live_server, live_models_dir):
    """The run's server and a fresh one with its models directory (always stopped: the data/models of a
    checkout may hold a fetched real model, whose header alone takes a second to read): a client of each."""
    with (
        running_server({"XT_MODELS_DIR": str(live_models_dir)}, timeout=120) as fresh,
        httpx.Client(base_url=live_server.base, timeout=120, trust_env=False) as first,
        httpx.Client(base_url=fresh.base, timeout=120, trust_env=False) as second,
    ):
        yield first, second


def preset(client: httpx.Client, name: str) -> dict:
    presets = {p["name"]: p for p in client.get("/api/models").json()["presets"]}
    config = {k: v for k, v in presets[name]["config"].items() if v is not None}
    return {"config": config, "tokenizer": presets[name]["tokenizer"]}


def applicable_fault(client: httpx.Client) -> str:
    faults = client.get("/api/faults").json()["faults"]
    return next(f["name"] for f in faults if f["applies"])


def specs(client: httpx.Client) -> dict[str, dict]:
    models = [m["name"] for m in client.get("/api/models").json()["models"]]
    assert "induction" in models, "the demo checkpoint ships with the repo"
    return {
        "tiny preset, seed 7": {**preset(client, "tiny-2"), "text": TEXT, "seed": 7},
        "demo model induction": {"model": "induction", "text": "xkqvbmxkqvbmxkqvbmxkqvbm"},
        "a bug-lab fault": {"text": TEXT, "seed": 3, "faults": [applicable_fault(client)]},
        "AdamW after 5 training steps": {"text": TEXT, "seed": 11, "optimizer": {"name": "adamw"}, "train_steps": 5},
        "float64": {"text": TEXT, "seed": 5, "dtype": "float64"},
        "two token rows": {
            "config": {"n_layer": 1, "n_head": 4, "n_kv_head": 2, "n_embd": 16, "ffn_hidden": 24, "vocab_size": 12},
            "tokens": [[1, 2, 3, 4, 5, 6, 7, 8], [8, 7, 6, 5, 4, 3, 2, 1]],
            "seed": 2,
        },
    }


def tensor(client: httpx.Client, trace_id: str, name: str, grad: bool) -> bytes:
    response = client.get(f"/api/traces/{trace_id}/tensors/{name}", params={"grad": str(grad).lower()})
    assert response.status_code == 200, f"{name} grad={grad}: {response.text}"
    assert response.content.startswith(b"\x93NUMPY")
    return response.content


@pytest.mark.long  # a fresh server of its own beside the run's: make test-long (tests/conftest.py in_long_tier)
@pytest.mark.parametrize(
    "label",
    ["tiny preset, seed 7", "demo model induction", "a bug-lab fault", "AdamW after 5 training steps", "float64",
     "two token rows"],
)  # fmt: skip
def test_two_servers_answer_identical_bits(servers, label):
    first, second = servers
    spec = specs(first)[label]
    assert specs(second)[label] == spec  # the catalogues agree too
    traces = [client.post("/api/traces", json=spec) for client in servers]
    for response in traces:
        assert response.status_code == 200, response.text
    one, two = (r.json() for r in traces)
    assert one["id"] == two["id"]
    assert one == two  # the whole summary: loss, tokens, steps, training losses
    for name, grad in TENSORS:
        assert tensor(first, one["id"], name, grad) == tensor(second, two["id"], name, grad), (name, grad)


@pytest.mark.long
def test_the_update_step_is_identical(servers):
    """The AdamW step itself (ΔW beside the gradient, figures as base64 float32) byte for byte."""
    spec = specs(servers[0])["AdamW after 5 training steps"]
    bodies = []
    for client in servers:
        trace = client.post("/api/traces", json=spec).json()
        response = client.get(
            f"/api/traces/{trace['id']}/update",
            params={"param": "layers.0.attention.wq"},
            headers={"Accept-Encoding": "identity"},
        )
        assert response.status_code == 200, response.text
        bodies.append(response.content)
    assert bodies[0] == bodies[1]
