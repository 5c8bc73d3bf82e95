"""Qwen over HTTP: random-init Qwen3 (QK-norm, heads wider than n_embd / n_head) and Qwen2 (q/k/v
biases) specs, and a Qwen3 directory written by transformers' save_pretrained served with
`xt serve --model` (XT_MODEL_PATHS): every step of each is answered (200) with its gradient check
passed, the new ops' steps carry their formulas, shapes and figures like any other step, and the
served model's loss is transformers' own."""

from __future__ import annotations

import numpy as np
import pytest

import xt_core
from tests.helpers.client import make_client, post_trace
from tests.helpers.env import skip_unless_installed
from tests.helpers.qwen_models import hf_model, load_pretrained
from tests.helpers.specs import SMALL_CONFIG

SPECS = {
    "qwen3": {"config": {**SMALL_CONFIG, "head_dim": 6, "qk_norm": True}, "text": "the cat sat on the mat", "seed": 1},
    "qwen2": {"config": {**SMALL_CONFIG, "qkv_bias": True}, "text": "the cat sat on the mat", "seed": 2},
}
SPECS["qwen2-trained"] = {**SPECS["qwen2"], "optimizer": {"name": "adamw", "lr": 0.01}, "train_steps": 1}
NEW_KINDS = {"qwen3": "qk_norm", "qwen2": "bias", "qwen2-trained": "bias"}  # trained: its update step too


@pytest.fixture(scope="module")
def client():
    with make_client() as c:
        yield c


def walk(client, summary: dict, kind: str) -> None:
    """Every step of a trace answered with a green check, `kind`'s steps among them, complete."""
    failing, kinds = [], set()
    for step in summary["steps"]:
        view = client.get(f"/api/traces/{summary['id']}/steps/{step['index']}")
        assert view.status_code == 200, (step["name"], view.text[:300])
        body = view.json()
        kinds.add(body["kind"])
        if not body["gradcheck"]["passed"]:
            failing.append(step["name"])
        if body["kind"] == kind:
            assert body["formula"] and body["figures"] and body["shapes"], step["name"]
    assert not failing and kind in kinds


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_step_of_a_random_init_qwen_is_served_with_a_green_check(client, name):
    summary = post_trace(client, SPECS[name])
    assert {k: v for k, v in SPECS[name]["config"].items() if k in ("head_dim", "qk_norm", "qkv_bias")}.items() <= (
        summary["config"].items()
    )
    walk(client, summary, NEW_KINDS[name])


@pytest.mark.torch
@pytest.mark.long  # transformers' first import in its worker and a full walk: make test-long
def test_a_served_qwen3_directory_walks_every_step_and_agrees_with_transformers(tmp_path):
    skip_unless_installed("torch", "transformers", hint="pip install -e '.[reference]'")
    directory = tmp_path / "tiny-qwen3"
    hf_model("qwen3-wide-heads-untied").float().save_pretrained(directory)
    tokens = [[5, 17, 30, 2, 2, 9, 7, 39, 0, 6, 3]]
    with make_client(model_paths=(directory,)) as served:
        summary = post_trace(served, {"model": directory.name, "tokens": tokens, "dtype": "float64"})
        assert summary["config"]["qk_norm"] and summary["config"]["head_dim"] == 16
        walk(served, summary, "qk_norm")
    model, hf = load_pretrained(directory)
    assert (
        abs(summary["loss"] - hf.hf_step(model, xt_core.Config(**summary["config"]), np.array(tokens))["loss"]) <= 1e-5
    )
