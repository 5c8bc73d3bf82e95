"""Fixtures for the whole suite; the helpers the test modules import live in tests/helpers/."""

import collections
from pathlib import Path

import pytest

import xt_core
from tests.helpers.server import Server, running_server


def pytest_collection_modifyitems(items):
    """A test on a real server (it uses live_server, or is marked `server`: it starts its own
    or measures one's RSS or latency) runs in one xdist group, so under `pytest -n` no two of
    them run side by side and they share one live_server."""
    name_operations_in_node_ids(items)
    for item in items:
        if "live_server" in item.fixturenames and not item.get_closest_marker("server"):
            item.add_marker(pytest.mark.server)
        if item.get_closest_marker("server"):
            item.add_marker(pytest.mark.xdist_group("server"))


def name_operations_in_node_ids(items) -> None:
    """schemathesis names an item per API operation (test_api_never_fails[GET /healthz]), but
    under pytest 9 every one of them gets the function's node id; xdist schedules by node id
    and would run only one operation of tests/app/test_fuzz.py. The operation joins the id."""
    for item in items:
        suffix = item.name.removeprefix(getattr(item, "originalname", item.name))
        if suffix.startswith("[") and not item.nodeid.endswith(suffix):
            item._id = item._id.with_params(suffix[1:-1])  # pytest has no public setter
    repeated = sorted(nodeid for nodeid, n in collections.Counter(item.nodeid for item in items).items() if n > 1)
    if repeated:
        raise pytest.UsageError(f"test node ids must be unique (xdist runs one of each): {repeated[:3]}")


@pytest.fixture
def tiny():
    return xt_core.PRESETS["tiny"]


@pytest.fixture(scope="session")
def live_models_dir(tmp_path_factory) -> Path:
    """The live server's models directory (uploads; a test may link a fetched real model in)."""
    return tmp_path_factory.mktemp("uploaded-models")


@pytest.fixture(scope="session")
def live_server(live_models_dir) -> Server:
    """One `uvicorn app.main:app` on 127.0.0.1 with default settings for the run (browser,
    load and determinism tests), always stopped. Uploads made by the tests go to a fresh
    directory, never to the repo's data/models."""
    with running_server({"XT_MODELS_DIR": str(live_models_dir)}) as server:
        yield server
