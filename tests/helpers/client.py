"""The app in process (FastAPI's TestClient), its uploads kept out of the repo."""

from __future__ import annotations

import tempfile
from pathlib import Path

from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings

# Starlette's TestClient sends `Host: testserver`: allowed in tests only (the default is loopback).
TEST_HOSTS = ("testserver", *Settings().allowed_hosts)


def make_client(*, follow_redirects: bool = True, **overrides) -> TestClient:
    """A client of a new app with Settings(**overrides). Uploads and runs recorded from the page go to
    fresh directories, never to the repo's data/."""
    overrides.setdefault("models_dir", Path(tempfile.mkdtemp(prefix="xt-test-models-")))
    overrides.setdefault("recorded_runs_dir", Path(tempfile.mkdtemp(prefix="xt-test-runs-")))
    overrides.setdefault("allowed_hosts", TEST_HOSTS)
    return TestClient(create_app(Settings(**overrides)), follow_redirects=follow_redirects)


def post_trace(client, spec: dict) -> dict:
    """POST /api/traces, asserted 200: the trace summary."""
    response = client.post("/api/traces", json=spec)
    assert response.status_code == 200, response.text
    return response.json()


def posted_context(client, spec: dict):
    """POST the spec: (its summary, the TraceContext the server answers its views from)."""
    from app.steps.context import TraceContext

    summary = post_trace(client, spec)
    store = client.app.state.services.store
    stored = store.spec(summary["id"])
    return summary, TraceContext(stored, store.get(stored), client.app.state.settings)


def step_answer(client, summary: dict, name: str, phase: str) -> dict:
    """GET the view of the trace's step `name` in `phase`, asserted 200."""
    step = next(s for s in summary["steps"] if s["name"] == name and s["phase"] == phase)
    response = client.get(f"/api/traces/{summary['id']}/steps/{step['index']}")
    assert response.status_code == 200, response.text[:300]
    return response.json()
