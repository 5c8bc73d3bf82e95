"""Shared fixtures: a small app and one small trace (1 layer, grouped-query attention, two
sequences) posted once per test module; keeps the app suite fast on 2 cores."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from tests.helpers.client import make_client, post_trace
from tests.helpers.gguf_files import write_stand_in
from tests.helpers.specs import BATCH_SPEC, SMALL_SPEC


@pytest.fixture(scope="module")
def client() -> TestClient:
    with make_client() as c:
        yield c


@pytest.fixture(scope="module")
def trace(client) -> dict:
    return post_trace(client, SMALL_SPEC)


@pytest.fixture(scope="module")
def batch_trace(client) -> dict:
    return post_trace(client, BATCH_SPEC)


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory):
    """A models directory holding the SmolLM2 stand-in (tests/helpers/gguf_files.py), for the
    modules that test the real model's paths in milliseconds."""
    return write_stand_in(tmp_path_factory.mktemp("models"))


@pytest.fixture(scope="module")
def stand_in_client(models_dir) -> TestClient:
    with make_client(models_dir=models_dir) as c:
        yield c
