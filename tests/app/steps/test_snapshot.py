"""The JSON of every answer built from a trace stays byte-identical while code moves.

For a fixed set of specs (every kind of step, two sequences, untied embeddings, a bug-lab fault,
SGD and AdamW update steps after training, float64, a quiz: its step views before the answer) this
fetches, through the HTTP API only, the trace summary, every step view, one enlarged head, both
Jacobians, a fault's diff, the checks and a quiz answer. `snapshots/<kernels>/views.json` holds a
digest of each answer's bytes (its git diff names the answers that changed);
`snapshots/<kernels>/answers.tsv.xz` the answers themselves (about 7 MB of JSON, under 1 MB
compressed), so a failure prints, for each changed answer, the paths that differ with the old and
the new value, and writes both answers, indented, to test-artifacts/snapshot/.

<kernels> is the BLAS kernels numpy runs (OpenBLAS picks them by CPU, and a machine may pin them:
SkylakeX on an Intel Xeon or an AMD Zen 4, Haswell where OPENBLAS_CORETYPE says so): a float32 sum
ends in other bits under other kernels, so each set of kernels has its own answers, made from the
same code. Under kernels with none, the answers must still have the stored answers' shape (keys,
lengths, types, the words of every string; numbers free: tests.helpers.json_diff.shape_differences).
A deliberate change to what a view shows regenerates every set:
`XT_UPDATE_SNAPSHOTS=1 pytest tests/app/steps/test_snapshot.py` under each kernel
(`OPENBLAS_CORETYPE=Haswell` picks one), their diff in the same commit.
"""

from __future__ import annotations

import hashlib
import json
import lzma
import os
import shutil
from pathlib import Path

import pytest
import threadpoolctl

from tests.helpers.client import make_client
from tests.helpers.json_diff import report, shape_differences

SNAPSHOTS = Path(__file__).parent / "snapshots"
ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts" / "snapshot"
REPORTED = 5  # changed answers reported in full (paths, old and new); the rest by name
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


def _spec_answers(client, spec: dict) -> dict[str, bytes]:
    posted = client.post("/api/traces", json=spec, headers={"Accept-Encoding": "identity"})
    assert posted.status_code == 200, posted.text[:300]
    summary = posted.json()
    trace_id, out = summary["id"], {"summary": posted.content}
    base = f"/api/traces/{trace_id}"
    for step in summary["steps"]:
        i = step["index"]
        for seq in range(summary["n_seq"]):
            out[f"step {i} seq {seq}"] = _get(client, f"{base}/steps/{i}?seq={seq}")
        if step["name"] == "output_probs" and step["phase"] == "backward":
            out[f"step {i} pos 2"] = _get(client, f"{base}/steps/{i}?pos=2")
        if step["name"].endswith("attention.probs") and step["phase"] == "forward":
            out[f"head {i}"] = _get(client, f"{base}/steps/{i}/head?head=1")
        if spec.get("faults") and step["phase"] == "backward":
            out[f"diff {i}"] = _get(client, f"{base}/steps/{i}/diff")
    out["jacobian attention"] = _get(client, f"{base}/jacobian?layer=0&head=1&pos=3")
    out["jacobian output"] = _get(client, f"{base}/jacobian?layer=output&top_k=3")
    if "quiz" in spec:  # its checks only once answered
        backward = [s["index"] for s in summary["steps"] if s["phase"] == "backward"]
        probe = client.post(f"{base}/quiz/probe", json={"step": backward[2]})
        assert probe.status_code == 200, probe.text[:300]
        out["quiz probe"] = _without_voter(probe)
        answer = client.post(f"{base}/quiz/answer", json={"step": backward[3]})
        assert answer.status_code == 200, answer.text[:300]
        out["quiz answer"] = _without_voter(answer)
    if spec.get("faults") or "quiz" in spec:
        out["checks"] = _get(client, f"{base}/checks?wait=true")
    if summary["training"] is not None:
        out["update param"] = _get(client, f"{base}/update?param=layers.0.attention.wq")
    return out


def digests(answers: dict[str, dict[str, bytes]]) -> dict[str, dict[str, str]]:
    return {name: {key: _digest(body) for key, body in bodies.items()} for name, bodies in answers.items()}


def encode_answers(answers: dict[str, dict[str, bytes]]) -> bytes:
    """The answers as a line each (compact JSON has no raw newline), sorted, xz-compressed."""
    lines = [
        b"%s\t%s\t%s\n" % (name.encode(), key.encode(), body) for name in answers for key, body in answers[name].items()
    ]
    return lzma.compress(b"".join(sorted(lines)), preset=6)


def decode_answers(data: bytes) -> dict[str, dict[str, bytes]]:
    answers: dict[str, dict[str, bytes]] = {}
    for line in lzma.decompress(data).splitlines():
        name, key, body = line.split(b"\t", 2)
        answers.setdefault(name.decode(), {})[key.decode()] = body
    return answers


def changed_answers(expected: dict, found: dict) -> list[tuple[str, str]]:
    """(spec, key) of every answer whose digest differs, is new or is gone."""
    return [
        (name, key)
        for name in sorted(set(expected) | set(found))
        for key in sorted(set(expected.get(name, {})) | set(found.get(name, {})))
        if expected.get(name, {}).get(key) != found.get(name, {}).get(key)
    ]


def change_report(changed: list[tuple[str, str]], old: dict, new: dict, artifacts: Path | None) -> str:
    """What changed in the first REPORTED answers (paths, old and new values), the others by name;
    both JSON of each reported answer written, indented, under `artifacts`."""
    parts = [f"{len(changed)} answers changed"]
    if artifacts is not None:
        shutil.rmtree(artifacts, ignore_errors=True)  # only this run's answers
    for name, key in changed[:REPORTED]:
        before, after = old.get(name, {}).get(key), new.get(name, {}).get(key)
        label = f"{name} / {key}"
        if before is None or after is None:
            parts.append(f"{label}: {'new' if before is None else 'gone'}")
            continue
        before_json, after_json = json.loads(before), json.loads(after)
        if before_json == after_json:
            parts.append(f"{label}: the same JSON value in other bytes (key order, spacing or number format)")
        else:
            parts.append(report(label, before_json, after_json))
        if artifacts is not None:
            stem = artifacts / name / key.replace(" ", "_")
            stem.parent.mkdir(parents=True, exist_ok=True)
            for suffix, value in (("old", before_json), ("new", after_json)):
                stem.with_suffix(f".{suffix}.json").write_text(json.dumps(value, indent=1, ensure_ascii=False))
    if len(changed) > REPORTED:
        parts.append("and " + ", ".join(f"{name} / {key}" for name, key in changed[REPORTED:]))
    if artifacts is not None:
        parts.append(f"old and new JSON of the first {min(len(changed), REPORTED)}: {artifacts}")
    return "\n".join(parts)


def blas_kernels() -> str:
    """The kernels numpy's BLAS runs ("SkylakeX", "Haswell"; OpenBLAS's name for them)."""
    blas = [m for m in threadpoolctl.threadpool_info() if m["user_api"] == "blas"]
    return str(blas[0].get("architecture") or blas[0]["internal_api"]) if blas else "none"


def stored_for(kernels: str) -> tuple[Path, Path]:
    """(digests, answers) of the answers made under `kernels`."""
    return SNAPSHOTS / kernels / "views.json", SNAPSHOTS / kernels / "answers.tsv.xz"


def test_views_are_unchanged(client):
    found = {name: _spec_answers(client, spec) for name, spec in SPECS.items()}
    kernels = blas_kernels()
    snapshot, answers = stored_for(kernels)
    if os.environ.get("XT_UPDATE_SNAPSHOTS"):
        snapshot.parent.mkdir(exist_ok=True)
        snapshot.write_text(json.dumps(digests(found), indent=1, sort_keys=True) + "\n")
        answers.write_bytes(encode_answers(found))
        pytest.skip(f"snapshots of {kernels} written")
    if not snapshot.exists():
        _assert_same_shape(found, kernels)
        return
    expected = json.loads(snapshot.read_text())
    stored = decode_answers(answers.read_bytes())
    assert digests(stored) == expected, f"{answers.name} does not hold the answers of {snapshot.name}: regenerate both"
    changed = changed_answers(expected, digests(found))
    assert not changed, change_report(changed, stored, found, ARTIFACTS)


def _assert_same_shape(found: dict[str, dict[str, bytes]], kernels: str) -> None:
    """Under kernels without answers of their own: every answer has the shape of the first stored set's."""
    made = sorted(p.parent.name for p in SNAPSHOTS.glob("*/answers.tsv.xz"))
    assert made, f"no stored answers in {SNAPSHOTS}"
    stored = decode_answers(stored_for(made[0])[1].read_bytes())
    assert sorted((n, k) for n in stored for k in stored[n]) == sorted((n, k) for n in found for k in found[n])
    unlike = {
        f"{name} / {key}": shape_differences(json.loads(stored[name][key]), json.loads(body))
        for name in found
        for key, body in found[name].items()
    }
    unlike = {label: where for label, where in unlike.items() if where}
    assert not unlike, f"under {kernels} (stored: {made}), answers unlike {made[0]}'s in more than numbers: {unlike}"


def test_a_change_is_reported_by_its_path_with_the_old_and_new_value(tmp_path):
    old = {"spec": {"step 1 seq 0": b'{"title":"RMSNorm","figures":[{"rows":[[1.5,2.0]]}]}', "summary": b'{"a":1}'}}
    new = {"spec": {"step 1 seq 0": b'{"title":"RMSNorm","figures":[{"rows":[[1.5,2.5]]}]}', "summary": b'{"a": 1}'}}
    assert decode_answers(encode_answers(old)) == old
    changed = changed_answers(digests(old), digests(new))
    assert changed == [("spec", "step 1 seq 0"), ("spec", "summary")]
    text = change_report(changed, old, new, tmp_path)
    assert "spec / step 1 seq 0:\n  figures[0].rows[0][1]: 2.0 -> 2.5" in text
    assert "spec / summary: the same JSON value in other bytes" in text
    written = json.loads((tmp_path / "spec" / "step_1_seq_0.new.json").read_text())
    assert written["figures"][0]["rows"] == [[1.5, 2.5]]


def test_under_other_kernels_numbers_are_free_and_everything_else_is_not():
    old = {
        "title": "RMSNorm of 3 rows",
        "z": {"dtype": "f4", "bdata": "AAAA", "shape": "1, 1"},
        "argmax": [3],
        "ok": True,
    }
    new_numbers = {
        "title": "RMSNorm of 4 rows",
        "z": {"dtype": "f4", "bdata": "AAEA", "shape": "1, 1"},
        "argmax": [7],
        "ok": True,
    }
    assert shape_differences(old, new_numbers) == []
    assert [p for p, _, _ in shape_differences(old, {**old, "title": "LayerNorm of 3 rows"})] == ["title"]
    sentence = {"note": "Largest difference over 21 positions: 0. Shown: 10 tokens."}
    assert (
        shape_differences(sentence, {"note": "Largest difference over 21 positions: 2.78e-17. Shown: 10 tokens."}) == []
    )
    assert [p for p, _, _ in shape_differences(old, {**old, "ok": False})] == ["ok"]
    assert [p for p, _, _ in shape_differences(old, {**old, "argmax": [3, 1]})] == ["argmax"]
    assert [p for p, _, _ in shape_differences(old, {**old, "z": {**old["z"], "shape": "1, 2"}})] == ["z"]
