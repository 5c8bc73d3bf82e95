"""A random-init Qwen over HTTP: Qwen3 (QK-norm, heads wider than n_embd / n_head) and Qwen2
(q/k/v biases) specs are built, every step of each is answered (200) with its gradient check
passed, and the new ops' steps carry their formulas, shapes and figures like any other step."""

from __future__ import annotations

import pytest

from tests.helpers.client import make_client, post_trace
from tests.helpers.specs import SMALL_CONFIG

SPECS = {
    "qwen3": {"config": {**SMALL_CONFIG, "head_dim": 6, "qk_norm": True}, "text": "the cat sat on the mat", "seed": 1},
    "qwen2": {"config": {**SMALL_CONFIG, "qkv_bias": True}, "text": "the cat sat on the mat", "seed": 2},
}
NEW_KINDS = {"qwen3": "qk_norm", "qwen2": "bias"}


@pytest.fixture(scope="module")
def client():
    with make_client() as c:
        yield c


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_step_of_a_random_init_qwen_is_served_with_a_green_check(client, name):
    summary = post_trace(client, SPECS[name])
    assert {k: v for k, v in SPECS[name]["config"].items() if k in ("head_dim", "qk_norm", "qkv_bias")}.items() <= (
        summary["config"].items()
    )
    failing, kinds = [], set()
    for step in summary["steps"]:
        view = client.get(f"/api/traces/{summary['id']}/steps/{step['index']}")
        assert view.status_code == 200, (step["name"], view.text[:300])
        body = view.json()
        kinds.add(body["kind"])
        if not body["gradcheck"]["passed"]:
            failing.append(step["name"])
        if body["kind"] == NEW_KINDS[name]:
            assert body["formula"] and body["figures"] and body["shapes"], step["name"]
    assert not failing and NEW_KINDS[name] in kinds
