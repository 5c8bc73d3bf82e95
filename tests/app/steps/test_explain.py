"""Steps, blocks, titles and explanations of the walkthrough."""

from __future__ import annotations

import numpy as np
import pytest

import xt_core
from app.steps import explain, titles

CFG = xt_core.Config(vocab_size=12, n_layer=2, n_head=4, n_kv_head=2, n_embd=16, ffn_hidden=24, seq_len=8)


@pytest.fixture(scope="module")
def trace():
    params = xt_core.init_params(CFG, seed=0)
    return xt_core.forward_backward(CFG, params, np.arange(6)[None], np.arange(1, 7)[None])


def test_blocks_are_in_model_order():
    ids = [b["id"] for b in titles.blocks(CFG)]
    assert ids == [
        "embedding", "layers.0.attention", "layers.0.ffn", "layers.1.attention", "layers.1.ffn", "norm", "head", "loss",
    ]  # fmt: skip
    assert [b["layer"] for b in titles.blocks(CFG)][1:5] == [0, 0, 1, 1]


@pytest.mark.parametrize(
    ("name", "block"),
    [
        ("embedding", "embedding"),
        ("layers.1.attention_norm.out", "layers.1.attention"),
        ("layers.0.attention.q_rot", "layers.0.attention"),
        ("layers.0.attention_residual", "layers.0.attention"),
        ("layers.1.ffn_norm.out", "layers.1.ffn"),
        ("layers.0.feed_forward.swiglu", "layers.0.ffn"),
        ("layers.0.ffn_residual", "layers.0.ffn"),
        ("norm.out", "norm"),
        ("logits", "head"),
        ("output_probs", "loss"),
        ("token_loss", "loss"),
        ("loss", "loss"),
    ],
)
def test_block_of(name, block):
    assert titles.block_of(name) == block


def test_steps_follow_the_records(trace):
    steps = titles.steps(trace)
    assert [s["index"] for s in steps] == [r.index for r in trace.records]
    assert [s["name"] for s in steps] == [r.name for r in trace.records]
    assert all(s["title"] and s["block"] for s in steps)
    block_ids = {b["id"] for b in titles.blocks(CFG)}
    assert {s["block"] for s in steps} == block_ids
    assert steps[0]["title"] == "Token embedding lookup"
    assert steps[-1]["title"] == "Token embedding lookup — backward"
    assert steps[1]["title"].startswith("Layer 0 · RMSNorm")


def test_steps_name_their_group_and_op(trace):
    steps = titles.steps(trace)
    groups = titles.groups(CFG, has_update=False)
    assert [g["id"] for g in groups] == ["embedding", *(f"layers.{L}" for L in range(CFG.n_layer)), "output"]
    assert [s["group"] for s in steps if s["phase"] == "forward"][:2] == ["embedding", "layers.0"]
    assert {s["group"] for s in steps} == {g["id"] for g in groups}
    for step in steps:
        group = next(g for g in groups if g["id"] == step["group"])
        assert group["layer"] == step["layer"], step
    # the same op in every layer and both directions: its name without the layer, its words without either
    probs = [s for s in steps if s["op"] == "attention.probs"]
    assert len(probs) == 2 * CFG.n_layer
    assert {s["op_title"] for s in probs} == {"Attention softmax over keys"}
    assert {s["group"] for s in probs} == {f"layers.{L}" for L in range(CFG.n_layer)}
    by_name = {(s["name"], s["phase"]): s for s in steps}
    assert (
        by_name[("output_probs", "loss")]["group"] == "output" and by_name[("logits", "backward")]["group"] == "output"
    )
    assert by_name[("norm.out", "forward")]["op_title"] == "Final RMSNorm"


# What every step's text must say about its own op (a phrase the op's rule makes true), by kind and phase.
_OWN_RULE = {
    ("embedding", "forward"): "lookup", ("embedding", "backward"): "np.add.at",
    ("rmsnorm", "forward"): "r = 1/√(mean(x²)+ε)", ("rmsnorm", "backward"): "projection term",
    ("linear", "forward"): "Y = X·W", ("linear", "backward"): "dW = Xᵀ·dY",
    ("rope", "forward"): "θ^(−2c/hd)", ("rope", "backward"): "transposed rotation",
    ("scores", "forward"): "causal mask", ("scores", "backward"): "⌊m/G⌋",
    ("softmax", "forward"): "probability distribution", ("softmax", "backward"): "J·dL/d",
    ("attend", "forward"): "weighted by", ("attend", "backward"): "dv = Pᵀ·dO",
    ("merge_heads", "forward"): "re-layout", ("merge_heads", "backward"): "re-layout",
    ("residual", "forward"): "added to the residual stream", ("residual", "backward"): "= I (the identity)",
    ("swiglu", "forward"): "silu(a) ⊙ u", ("swiglu", "backward"): "silu′(a)",
    ("unembed", "forward"): "logits = n·Wᵀ", ("unembed", "backward"): "dW += dlogitsᵀ·n",
    ("token_loss", "forward"): "−log of the probability", ("token_loss", "backward"): "dL/dp_target",
    ("mean", "forward"): "ln V", ("mean", "backward"): "1/N for every position",
}  # fmt: skip


def test_every_step_explains_its_own_rule(trace):
    for record in trace.records:
        text = explain.explanation(record, trace)
        phase = "backward" if record.phase == "backward" else "forward"
        assert _OWN_RULE[(record.kind, phase)] in text, (record.name, record.phase, text)
        assert "{" not in text.replace("{m", "").replace("{κ", ""), (record.name, text)
        assert "the C++ reference" not in text, (record.name, text)


def _explain(trace, name, phase):
    record = next(r for r in trace.records if r.name == name and (r.phase == "backward") == (phase == "backward"))
    return explain.explanation(record, trace)


@pytest.mark.parametrize(
    ("name", "phase", "phrases"),
    [
        ("output_probs", "backward", ["must NOT be here", "already normalized", "(p − onehot)/N"]),
        ("layers.1.attention.out", "backward", ["NOT dres", "FFN contribution"]),
        ("layers.0.feed_forward.gate", "backward", ["dW = Xᵀ·dY", "X comes first"]),
        ("loss", "backward", ["BEFORE", "exactly once"]),
        ("layers.0.attention.q", "backward", ["once, at the loss, before any matmul", "sum of three"]),
        ("layers.0.attention.k_rot", "backward", ["transposed rotation"]),
        ("layers.0.ffn_residual", "backward", ["residual gradients add"]),
        ("layers.1.ffn_norm.out", "backward", ["projection term", "The two add", "perpendicular to x"]),
        ("layers.0.attention.probs", "backward", ["diag(p) − p·pᵀ", "Jacobian"]),
        ("layers.0.attention.scores", "forward", ["causal mask", "1/√hd", "grouped-query"]),
        ("logits", "backward", ["tied embeddings", "add"]),
    ],
)
def test_explanations_quote_the_classic_mistakes(trace, name, phase, phrases):
    text = _explain(trace, name, phase)
    for phrase in phrases:
        assert phrase in text, (phrase, text)
