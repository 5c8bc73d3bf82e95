"""Trace ids of today's specs, stored: a trace id is a hash of the canonical spec (app.spec.resolve),
and a permalink, a class session or a lesson holds it. A new config field (the model families'
head_dim, positions, norm_type, ...) leaves its default out of the canonical spec, so none of
these change. The ids were computed at main cbae01f, before the families' fields existed."""

from __future__ import annotations

import json

import pytest

from app.settings import Settings
from app.spec import TraceSpec, resolve

SMALL = {"n_layer": 1, "n_head": 4, "n_kv_head": 2, "n_embd": 16, "ffn_hidden": 24, "seq_len": 32}
GQA_UNTIED = {
    "n_layer": 2, "n_head": 8, "n_kv_head": 2, "n_embd": 32, "tie_embeddings": False, "rope_theta": 500.0, "norm_eps": 1e-6
}  # fmt: skip

STORED_IDS = {
    "default": ({}, "b6c91dc176e60fdbf522"),
    "small": ({"config": SMALL, "text": "the cat sat on the mat", "seed": 1}, "a91bf709f0636528daae"),
    "gqa untied": ({"config": GQA_UNTIED, "seed": 7}, "9cf0ff622da9b6ec66c1"),
    "byte tokenizer": ({"tokenizer": "byte", "text": "hello there"}, "43c4236109834e8ba41c"),
    "tokens": (
        {"config": {"vocab_size": 12, "n_layer": 1}, "tokens": [[1, 2, 3, 4, 5, 6, 7, 8], [8, 7, 6, 5, 4, 3, 2, 1]]},
        "1d7ac6615added52376e",
    ),
    "float64": ({"dtype": "float64", "text": "abcabc"}, "b5cacd71ec9da9df3a22"),
    "faults": (
        {"faults": ["rmsnorm_missing_projection", "gqa_kv_not_summed"], "fault_layer": 0},
        "fc93ef27eae3f16f21fa",
    ),
    "quiz": ({"quiz": 3}, "e36768a745faf0e3a216"),
    "adamw, train_steps": ({"optimizer": {"name": "adamw", "lr": 0.01}, "train_steps": 3}, "7dc86c32e96415d4c51b"),
    "sgd momentum": ({"optimizer": {"name": "sgd", "lr": 0.1, "momentum": 0.9}}, "8da8964f484f30aeb3fa"),
    "demo induction": ({"model": "induction", "text": "abcdabcdab"}, "d2d75ecff7d48b2cd124"),
    "demo text": ({"model": "text", "text": "the cat"}, "bf01019c48577d3d981d"),
    "demo induction, float64, train_steps": (
        {"model": "induction", "text": "xyzxyzx", "train_steps": 2, "dtype": "float64"},
        "2246605eb8c658159f22",
    ),
}

# One canonical spec in full: the config holds exactly the fields it held before the families.
SMALL_CANONICAL = (
    '{"model": null, "config": {"vocab_size": 6, "n_layer": 1, "n_head": 4, "n_kv_head": 2, "n_embd": 16, '
    '"ffn_hidden": 24, "seq_len": 32, "tie_embeddings": true, "rope_theta": 10000.0, "norm_eps": 1e-05}, '
    '"tokenizer": "char", "seed": 1, "text": "the cat", "tokens": null, "dtype": "float32", "faults": [], '
    '"fault_layer": null, "quiz": null, "optimizer": null, "train_steps": 0}'
)


@pytest.mark.parametrize("name", STORED_IDS)
def test_todays_specs_keep_their_trace_ids(name):
    spec, stored = STORED_IDS[name]
    assert resolve(TraceSpec.model_validate(spec), Settings()).id == stored


def test_a_canonical_config_holds_only_the_fields_it_held():
    spec = {"config": SMALL, "text": "the cat", "seed": 1}
    assert json.dumps(resolve(TraceSpec.model_validate(spec), Settings()).canonical) == SMALL_CANONICAL
