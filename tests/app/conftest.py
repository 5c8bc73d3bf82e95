"""Shared fixtures: a small app and one small trace (1 layer, grouped-query attention, two
sequences) posted once per test module; keeps the app suite fast on 2 cores."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings

# 1 layer, 4 query heads sharing 2 kv heads, width 16: every op of the step, tiny arrays.
SMALL_CONFIG = {"n_layer": 1, "n_head": 4, "n_kv_head": 2, "n_embd": 16, "ffn_hidden": 24, "seq_len": 32}
SMALL_SPEC = {"config": SMALL_CONFIG, "text": "the cat sat on the mat", "seed": 1}
# Two sequences of token ids (T = 7): exercises ?seq=1.
BATCH_SPEC = {
    "config": {**SMALL_CONFIG, "vocab_size": 12},
    "tokens": [[1, 2, 3, 4, 5, 6, 7, 8], [8, 7, 6, 5, 4, 3, 2, 1]],
}


# Starlette's TestClient sends `Host: testserver`: allowed in tests only (the default is loopback).
TEST_HOSTS = ("testserver", *Settings().allowed_hosts)


def make_client(**overrides) -> TestClient:
    # Uploads go to a fresh directory, never to the repo's data/models.
    overrides.setdefault("models_dir", Path(tempfile.mkdtemp(prefix="xt-test-models-")))
    overrides.setdefault("allowed_hosts", TEST_HOSTS)
    return TestClient(create_app(Settings(**overrides)))


@pytest.fixture(scope="module")
def client() -> TestClient:
    with make_client() as c:
        yield c


@pytest.fixture(scope="module")
def trace(client) -> dict:
    response = client.post("/api/traces", json=SMALL_SPEC)
    assert response.status_code == 200, response.text
    return response.json()


@pytest.fixture(scope="module")
def batch_trace(client) -> dict:
    response = client.post("/api/traces", json=BATCH_SPEC)
    assert response.status_code == 200, response.text
    return response.json()
