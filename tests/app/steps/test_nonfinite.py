"""A diverging run through the API: NaN/inf in the trace never break an answer (200, and JSON
a strict parser accepts: non-finite values are null), and the trace summary names the first
step holding them, which these tests find again on their own from the recorded arrays."""

from __future__ import annotations

import io
import itertools
import json

import numpy as np
import pytest

import xt_core
from tests.helpers.specs import DIVERGING_SPEC
from xt_core.checkpoint import Checkpoint, save
from xt_core.text.byte_char import CharTokenizer
from xt_core.training.loop import train, train_step
from xt_core.training.optim import SGD

# The overflows these tests provoke on purpose warn in NumPy; they are the subject, not a problem.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

# One step more and the training itself breaks: the recorded step starts from NaN weights.
BROKEN_IN_TRAINING = {**DIVERGING_SPEC, "train_steps": 6}


def strict_json(text: str):
    """json.loads that refuses NaN, Infinity and -Infinity (Python's parser accepts them)."""

    def refuse(token):
        raise ValueError(f"non-standard JSON token {token}")

    return json.loads(text, parse_constant=refuse)


def ok_json(response):
    assert response.status_code == 200, response.text
    return strict_json(response.text)


@pytest.fixture(scope="module")
def diverged(client) -> dict:
    return ok_json(client.post("/api/traces", json=DIVERGING_SPEC))


# ---------------------------------------------------------------------- the same step, rebuilt


def rebuild(summary: dict, steps: int) -> xt_core.Trace:
    """The spec's step straight from xt_core: seeded init, `steps` SGD steps on the batch, then
    the recorded training step. Config and token ids come from the summary; nothing else does."""
    cfg = xt_core.Config.from_dict(summary["config"])
    inputs = np.array(summary["tokens"]["inputs"])
    targets = np.array(summary["tokens"]["targets"])
    optimizer = SGD(lr=100.0, weight_decay=1.0)
    params = xt_core.init_params(cfg, seed=1, dtype=np.float32)
    with np.errstate(all="ignore"):
        params, state, _ = train(cfg, params, optimizer, itertools.repeat((inputs, targets)), steps)
        return train_step(cfg, params, inputs, targets, optimizer, state)


def broken(array, masked_scores: bool = False) -> int:
    """Entries that are NaN or ±inf, where a forward attention score's −∞ above the diagonal
    (the causal mask) is its value, not a failure."""
    array = np.asarray(array)
    ok = np.isfinite(array)
    if masked_scores:
        T = array.shape[-1]
        ok |= np.isneginf(array) & (np.arange(T)[None, :] > np.arange(T)[:, None])
    return int((~ok).sum())


def first_broken_step(trace: xt_core.Trace) -> tuple[int, str, str]:
    """(index, name, phase) of the first record whose values hold NaN/inf: a forward step's
    inputs and output, a backward step's gradient and contributions, the update's new weights."""
    for record in trace.records:
        if record.phase == "update":
            arrays = list(trace.update.params.values())
        elif record.phase == "backward":
            arrays = [trace.grad(record.name), *record.contributions.values()]
        else:
            names = [n for n in (*record.inputs, record.name) if n not in ("tokens", "targets")]
            arrays = [trace[n] for n in names]
        forward_scores = record.phase != "backward" and record.kind == "scores"
        if any(broken(a, forward_scores and a is trace[record.name]) for a in arrays):
            return record.index, record.name, record.phase
    raise AssertionError("the rebuilt trace holds no NaN/inf")


# ---------------------------------------------------------------------- tests


def test_the_summary_names_the_first_step_with_nan_or_inf(diverged):
    first = diverged["first_nonfinite"]
    assert first is not None
    trace = rebuild(diverged, DIVERGING_SPEC["train_steps"])
    assert (first["index"], first["name"], first["phase"]) == first_broken_step(trace)
    assert (first["name"], first["phase"]) == ("layers.0.attention.scores", "forward")
    assert first["tensor"] == "layers.0.attention.scores"
    assert first["count"] == broken(trace["layers.0.attention.scores"], masked_scores=True) > 0
    assert diverged["steps"][first["index"]]["name"] == first["name"]
    assert "try a smaller learning rate" in first["advice"]
    assert diverged["loss"] is None  # NaN travels as null
    assert diverged["training"]["steps"] == 5


def test_recorded_tensors_agree_step_by_step(client, diverged):
    """Through GET .../tensors (npy): every forward output before the named step is finite; its own is not."""
    first = diverged["first_nonfinite"]
    base = f"/api/traces/{diverged['id']}/tensors"
    for step in diverged["steps"][: first["index"] + 1]:
        response = client.get(f"{base}/{step['name']}", params={"format": "npy"})
        assert response.status_code == 200, response.text
        array = np.load(io.BytesIO(response.content), allow_pickle=False)
        count = broken(array, masked_scores=step["name"].endswith(".scores"))
        assert (count > 0) == (step["index"] == first["index"]), step["name"]
    as_json = ok_json(client.get(f"{base}/{first['name']}", params={"format": "json"}))
    assert None in np.ravel(np.array(as_json["data"], dtype=object))  # non-finite -> null


def test_every_step_answers_with_strict_json_and_warns_from_the_first_on(client, diverged):
    first = diverged["first_nonfinite"]["index"]
    for step in diverged["steps"]:
        view = ok_json(client.get(f"/api/traces/{diverged['id']}/steps/{step['index']}"))
        nan_warnings = [w for w in view["warnings"] if "NaN" in w]
        if step["index"] < first:
            assert not nan_warnings, (step["index"], nan_warnings)
        elif step["index"] == first:
            assert any(w.startswith("layers.0.attention.scores holds") for w in nan_warnings), view["warnings"]
            # the float64 twin checks the rule fine; the badge must still say the float32 values broke
            assert view["gradcheck"]["passed"] and view["gradcheck"]["float32_nonfinite"], view["gradcheck"]


def test_jacobians_of_a_diverged_trace_answer_null_not_500(client, diverged):
    base = f"/api/traces/{diverged['id']}/jacobian"
    attention = ok_json(client.get(base, params={"layer": 0, "head": 0, "pos": 3}))
    output = ok_json(client.get(base, params={"layer": "output", "pos": 3}))
    assert attention["kind"] == "attention" and output["kind"] == "output"


def test_a_run_broken_during_training_points_at_the_first_step(client):
    summary = ok_json(client.post("/api/traces", json=BROKEN_IN_TRAINING))
    first = summary["first_nonfinite"]
    assert (first["index"], first["name"], first["phase"]) == first_broken_step(rebuild(summary, 6))
    assert (first["index"], first["tensor"]) == (0, "tok_embeddings")  # the weights it starts from
    assert "during training" in first["advice"] and "training step 6 of 6" in first["advice"]
    assert summary["training"]["last_loss"] is None


def test_a_healthy_trace_has_no_first_nonfinite(client, trace):
    assert trace["first_nonfinite"] is None
    view = ok_json(client.get(f"/api/traces/{trace['id']}/steps/0"))
    assert view["gradcheck"]["passed"] and view["gradcheck"]["float32_nonfinite"] is False


# ---------------------------------------------------------------------- checkpoints with huge weights

CFG = xt_core.Config(vocab_size=26, n_layer=1, n_head=2, n_kv_head=2, n_embd=16, ffn_hidden=24, seq_len=32)


def scaled_params(scales: dict[str, float]) -> dict[str, np.ndarray]:
    """A seeded init with some parameters multiplied: large, but every value finite."""
    params = xt_core.init_params(CFG, seed=3)
    for name, scale in scales.items():
        params[name] = params[name] * np.float32(scale)
    return params


def upload_scaled(client, tmp_path, scales: dict[str, float]) -> str:
    params = scaled_params(scales)
    path = save(tmp_path / "huge.safetensors", Checkpoint(CFG, params, CharTokenizer("abcdefghijklmnopqrstuvwxyz")))
    response = client.post("/api/models", files={"file": (path.name, path.read_bytes(), "application/octet-stream")})
    assert response.status_code == 201, response.text
    return response.json()["name"]


def test_huge_checkpoint_weights_overflow_without_training(client, tmp_path):
    scales = {"layers.0.attention.wq": 1e20, "layers.0.attention.wk": 1e20}  # q·k ~ 1e40: beyond float32
    model = upload_scaled(client, tmp_path, scales)
    summary = ok_json(client.post("/api/traces", json={"model": model, "text": "abcabcabcabc"}))
    first = summary["first_nonfinite"]
    ids = np.array(summary["tokens"]["inputs"]), np.array(summary["tokens"]["targets"])
    with np.errstate(all="ignore"):
        expected = first_broken_step(xt_core.forward_backward(CFG, scaled_params(scales), *ids))
    assert (first["index"], first["name"], first["phase"]) == expected
    assert "overflowed the float32 range" in first["advice"]  # no training: not a learning-rate problem


def test_an_update_that_overflows_is_the_first_step(client, tmp_path):
    """Forward and backward finite, the update not: norm gains of 1e37 times -99 leave float32."""
    model = upload_scaled(client, tmp_path, {"norm": 1e37})
    spec = {"model": model, "text": "abcabcabcabc", "optimizer": {"name": "sgd", "lr": 100.0, "weight_decay": 1.0}}
    summary = ok_json(client.post("/api/traces", json=spec))
    first = summary["first_nonfinite"]
    assert (first["index"], first["phase"]) == (len(summary["steps"]) - 1, "update")
    assert first["tensor"].startswith("the updated ") and "smaller learning rate" in first["advice"]
    view = ok_json(client.get(f"/api/traces/{summary['id']}/steps/{first['index']}"))
    assert any("The updated weights hold NaN or infinite values" in w for w in view["warnings"])


def test_an_rmsnorm_whose_mean_square_overflows_is_the_first_step(client, tmp_path):
    """Embeddings of ~1e20: every recorded value stays finite (RMSNorm outputs 0), the loss sits
    at ln V with zero gradients; still a broken run, and the banner must say where it broke."""
    model = upload_scaled(client, tmp_path, {"tok_embeddings": 1e20})
    summary = ok_json(client.post("/api/traces", json={"model": model, "text": "abcabcabcabc"}))
    first = summary["first_nonfinite"]
    assert first is not None, summary["loss"]
    assert (first["name"], first["phase"]) == ("layers.0.attention_norm.out", "forward")
    assert first["tensor"] == "embedding (its mean square)" and first["unit"] == "row(s) overflowed"
    assert first["count"] == len(summary["tokens"]["inputs"][0])  # every position's row
    with np.errstate(all="ignore"):
        ids = np.array(summary["tokens"]["inputs"]), np.array(summary["tokens"]["targets"])
        trace = xt_core.forward_backward(CFG, scaled_params({"tok_embeddings": 1e20}), *ids)
    assert first_broken_step(trace)[0] > first["index"]  # no NaN/inf recorded up to there
    assert not np.any(trace["layers.0.attention_norm.out"])  # the collapse the warning names
    view = ok_json(client.get(f"/api/traces/{summary['id']}/steps/{first['index']}"))
    assert any(w.startswith("The mean square of embedding overflowed float32") for w in view["warnings"])
