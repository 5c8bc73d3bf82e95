"""The model family's config fields in a spec (JSON body and /walk query): a part xt cannot compute
yet is a 422 naming the field and what it computes; an explicit head_dim is validated against the
limits, costed and built; a field named at its default leaves the canonical spec (and the trace id)
as it was (tests/app/spec/test_trace_ids.py holds today's ids)."""

from __future__ import annotations

import io

import numpy as np
import pytest

import xt_core
from app.settings import Settings
from app.spec import SpecError, TraceSpec, resolve, spec_from_query, spec_to_query
from app.spec.cost import step_terms
from tests.app.spec.test_trace_ids import STORED_IDS


def resolved(spec: dict, settings: Settings | None = None):
    return resolve(TraceSpec.model_validate(spec), settings or Settings())


@pytest.mark.parametrize(
    "field,value,computes",
    [
        ("family", "gpt3", "'llama', 'gpt2'"),
        ("positions", "learned", "'rope'"),
        ("norm_type", "layernorm", "'rmsnorm'"),
        ("activation", "gelu_tanh", "'swiglu'"),
        ("o_bias", True, "False"),
        ("mlp_bias", True, "False"),
        ("norm_bias", True, "False"),
        ("head_dim", 5, "must be even"),
    ],
)
def test_a_part_xt_cannot_compute_is_a_422_naming_the_field(client, field, value, computes):
    response = client.post("/api/traces", json={"config": {field: value}, "text": "abcabc"})
    assert response.status_code == 422, response.text
    detail = response.json()["detail"][0]
    assert detail["loc"] == ["body", "config", field] and computes in detail["msg"]
    page = client.get("/walk", params={field: str(value).lower(), "text": "abcabc"})
    assert page.status_code == 422 and field in page.text


@pytest.mark.parametrize("value", [0, 100_000, True, 2.5, "wide"])
def test_head_dim_is_a_whole_number_within_the_limits(value):
    with pytest.raises((SpecError, ValueError), match="head_dim|integer|true or false|whole"):
        resolved({"config": {"head_dim": value}, "text": "abcabc"})


def test_naming_a_default_keeps_the_trace_id():
    spec, stored = STORED_IDS["small"]
    defaults = {"family": "llama", "head_dim": 4, "positions": "rope", "norm_type": "rmsnorm", "qk_norm": False}
    assert resolved({**spec, "config": {**spec["config"], **defaults}}).id == stored


def test_an_explicit_head_dim_is_built_and_its_permalink_keeps_it(client):
    config = {"n_layer": 1, "n_head": 3, "n_kv_head": 1, "n_embd": 16, "head_dim": 6, "ffn_hidden": 24}
    spec = resolved({"config": config, "text": "the cat sat"})
    assert spec.cfg.head_dim == 6 and spec.canonical["config"]["head_dim"] == 6
    query = spec_to_query(spec.canonical)
    assert query["head_dim"] == "6"
    assert resolve(spec_from_query(query), Settings()).id == spec.id
    response = client.post("/api/traces", json={"config": config, "text": "the cat sat"})
    assert response.status_code == 200, response.text
    summary = response.json()
    assert summary["id"] == spec.id and summary["config"]["head_dim"] == 6
    heads = client.get(f"/api/traces/{spec.id}/tensors/layers.0.attention.heads")  # an .npy file
    assert heads.status_code == 200 and np.load(io.BytesIO(heads.content)).shape == (1, 3, 10, 6)


def test_the_cost_model_counts_the_heads_own_width():
    """step_terms' matmul count is every weight matrix's entries per token (forward, and twice
    that backward) plus attention's products: with hd set, Wq is (C, H*hd), not (C, C)."""
    cfg = xt_core.Config(n_layer=2, n_head=3, n_kv_head=1, n_embd=16, head_dim=10, ffn_hidden=24, vocab_size=30)
    n_seq, T = 2, 5
    matrices = sum(np.prod(s) for name, s in xt_core.param_shapes(cfg).items() if len(s) == 2)
    attention = cfg.n_layer * 2 * n_seq * cfg.n_head * T * T * cfg.head_dim
    assert step_terms(cfg, n_seq, T, 4)["matmul"] == 3 * (n_seq * T * matrices + attention)
