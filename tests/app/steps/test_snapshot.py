"""The JSON of every answer built from a trace stays byte-identical while code moves.

For a fixed set of specs (every kind of step, two sequences, untied embeddings, a bug-lab fault,
SGD and AdamW update steps after training, float64, a quiz: its step views before the answer) this hashes, through the HTTP API
only, the trace summary, every step view, one enlarged head, both Jacobians, a fault's diff, the
checks and a quiz answer, and compares with `snapshots/views.json`. A deliberate change to what a
view shows regenerates the file: `XT_UPDATE_SNAPSHOTS=1 pytest tests/app/test_snapshot.py`, and
the diff of that file goes into the same commit.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from tests.helpers.client import make_client

SNAPSHOT = Path(__file__).parent / "snapshots" / "views.json"
GQA = {"n_layer": 1, "n_head": 4, "n_kv_head": 2, "n_embd": 16, "ffn_hidden": 24, "seq_len": 32}
SPECS = {
    "gqa_char": {"config": GQA, "text": "the cat sat on the mat", "seed": 1},
    "untied_batch": {
        "config": {**GQA, "n_layer": 2, "vocab_size": 12, "tie_embeddings": False},
        "tokens": [[1, 2, 3, 4, 5, 6, 7, 8], [8, 7, 6, 5, 4, 3, 2, 1]],
    },
    "fault": {"config": GQA, "text": "abcabcabcab", "faults": ["softmax_missing_sum_term"]},
    "sgd_trained": {"config": GQA, "text": "hello hello", "optimizer": {"name": "sgd", "lr": 0.5}, "train_steps": 3},
    "adamw": {"config": GQA, "text": "hello hello", "optimizer": {"name": "adamw"}},
    "float64": {"config": {**GQA, "n_kv_head": 1}, "text": "abcab", "dtype": "float64", "seed": 3},
    "quiz": {"config": GQA, "text": "abcabcabcab", "quiz": 7},
}


def _digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()[:16]


def _get(client, url: str) -> bytes:
    response = client.get(url, headers={"Accept-Encoding": "identity"})
    assert response.status_code == 200, (url, response.text[:300])
    return response.content


def _without_voter(response) -> bytes:
    """The answer without the learner identity the server issued (random: not part of the view)."""
    return json.dumps({k: v for k, v in response.json().items() if k != "voter"}, sort_keys=True).encode()


@pytest.fixture(scope="module")
def client():
    """The quiz hides the fault its number and this secret choose (the process's own would change each run)."""
    with make_client(quiz_secret="snapshot") as c:
        yield c


def _spec_digests(client, spec: dict) -> dict[str, str]:
    posted = client.post("/api/traces", json=spec, headers={"Accept-Encoding": "identity"})
    assert posted.status_code == 200, posted.text[:300]
    summary = posted.json()
    trace_id, out = summary["id"], {"summary": _digest(posted.content)}
    base = f"/api/traces/{trace_id}"
    for step in summary["steps"]:
        i = step["index"]
        for seq in range(summary["n_seq"]):
            out[f"step {i} seq {seq}"] = _digest(_get(client, f"{base}/steps/{i}?seq={seq}"))
        if step["name"] == "output_probs" and step["phase"] == "backward":
            out[f"step {i} pos 2"] = _digest(_get(client, f"{base}/steps/{i}?pos=2"))
        if step["name"].endswith("attention.probs") and step["phase"] == "forward":
            out[f"head {i}"] = _digest(_get(client, f"{base}/steps/{i}/head?head=1"))
        if spec.get("faults") and step["phase"] == "backward":
            out[f"diff {i}"] = _digest(_get(client, f"{base}/steps/{i}/diff"))
    out["jacobian attention"] = _digest(_get(client, f"{base}/jacobian?layer=0&head=1&pos=3"))
    out["jacobian output"] = _digest(_get(client, f"{base}/jacobian?layer=output&top_k=3"))
    if "quiz" in spec:  # its checks only once answered
        backward = [s["index"] for s in summary["steps"] if s["phase"] == "backward"]
        probe = client.post(f"{base}/quiz/probe", json={"step": backward[2]})
        assert probe.status_code == 200, probe.text[:300]
        out["quiz probe"] = _digest(_without_voter(probe))
        answer = client.post(f"{base}/quiz/answer", json={"step": backward[3]})
        assert answer.status_code == 200, answer.text[:300]
        out["quiz answer"] = _digest(_without_voter(answer))
    if spec.get("faults") or "quiz" in spec:
        out["checks"] = _digest(_get(client, f"{base}/checks?wait=true"))
    if summary["training"] is not None:
        out["update param"] = _digest(_get(client, f"{base}/update?param=layers.0.attention.wq"))
    return out


def test_views_are_unchanged(client):
    found = {name: _spec_digests(client, spec) for name, spec in SPECS.items()}
    if os.environ.get("XT_UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
        pytest.skip("snapshots written")
    expected = json.loads(SNAPSHOT.read_text())
    changed = [
        f"{name}: {key}"
        for name in expected
        for key in sorted(set(expected[name]) | set(found.get(name, {})))
        if expected[name].get(key) != found.get(name, {}).get(key)
    ]
    assert not changed, f"{len(changed)} views changed, first: {changed[:10]}"
