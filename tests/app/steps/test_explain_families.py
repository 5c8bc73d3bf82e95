"""A GPT-2 walk and a Qwen3 walk (QK-norm, with Qwen2's q/k/v biases) read a real explanation on
every step, in both languages: never the fallback "<kind> (<phase>).", never Llama's words for what
the family lacks (RoPE's rotated q̃, an RMSNorm in a GPT-2 sum), and the new ops' numbers are this
trace's (app/steps/measured_parts.py)."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import xt_core
from app.steps import explain

TINY = {"vocab_size": 12, "n_layer": 1, "n_head": 2, "n_kv_head": 2, "n_embd": 8, "ffn_hidden": 16, "seq_len": 8}
CONFIGS = {
    "gpt2": xt_core.Config(**TINY, family="gpt2"),
    "gpt2-exact": xt_core.Config(**TINY, family="gpt2", activation="gelu", norm_bias=False, tie_embeddings=False),
    "qwen3": xt_core.Config(**TINY, head_dim=6, qk_norm=True, qkv_bias=True),
}
TOKENS = np.array([[1, 2, 3, 4, 5, 6], [6, 5, 4, 3, 2, 1]])
NEW_KINDS = {"layernorm", "positions", "linear_bias", "gelu_tanh", "gelu", "bias", "qk_norm"}


@functools.cache
def _trace(name: str) -> xt_core.Trace:
    cfg = CONFIGS[name]
    return xt_core.forward_backward(cfg, xt_core.init_params(cfg, seed=0), TOKENS, np.roll(TOKENS, -1, axis=1))


@pytest.fixture(params=sorted(CONFIGS))
def trace(request):
    return _trace(request.param)


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_every_step_has_a_real_explanation(trace, lang):
    for record in trace.records:
        text = explain.explanation(record, trace, lang=lang)
        assert text != f"{record.kind} ({record.phase}).", record.name
        assert len(text) > 60 and text.rstrip().endswith((".", ")", "»")), (record.name, text)
        assert "{" not in text and "}" not in text, (record.name, text)  # no unfilled value


@pytest.mark.parametrize("name", ["gpt2", "gpt2-exact"])
def test_gpt2_is_not_told_in_llamas_words(name):
    trace = _trace(name)
    for record in trace.records:
        text = explain.explanation(record, trace)
        for llama in ("q̃", "RMSNorm(", "through RoPE", "the gate", "silu"):
            assert llama not in text, (record.name, llama)


def _explained(trace, kind: str, phase: str, lang: str = "en") -> str:
    record = next(r for r in trace.records if r.kind == kind and r.phase == phase)
    return explain.explanation(record, trace, lang=lang)


def test_the_new_ops_state_this_traces_numbers(trace):
    kinds = {r.kind for r in trace.records} & NEW_KINDS
    B, T = TOKENS.shape
    if "positions" in kinds:
        assert f"T = {T} positions, so it reads rows 0..{T - 1} of the table's 8" in _explained(
            trace, "positions", "forward"
        )
        assert f"rows {T}..7 of the 8 were not read: their largest |dL/dP| is 0." in _explained(
            trace, "positions", "backward"
        )
    if "layernorm" in kinds:
        assert "zero up to round-off" in _explained(trace, "layernorm", "backward")
        assert "ноль с точностью до округления" in _explained(trace, "layernorm", "backward", "ru")
    for kind in kinds & {"linear_bias", "bias"}:
        assert f"N = B·T = {B * T} rows ({B} × {T}) sum into db" in _explained(trace, kind, "backward")
    for kind in kinds & {"gelu_tanh", "gelu"}:
        record = next(r for r in trace.records if r.kind == kind)
        share = round(100 * float((np.asarray(trace[record.inputs[0]]) < 0).mean()))
        assert f"Here {share}% of the" in _explained(trace, kind, "forward")
        assert "Here the slope g′(a) ranges from" in _explained(trace, kind, "backward")
    if "qk_norm" in kinds:
        assert "RMS of the 2 heads before the norm ranges from" in _explained(trace, "qk_norm", "forward")


def test_layernorm_without_its_mean_term_is_told_by_its_row_sums():
    """The bug lab's layernorm_missing_mean: the explanation's numbers say dL/dx no longer sums to
    zero over a position; sealed (a quiz's step), the same numbers without the verdict."""
    from xt_core.lab.faults import overrides

    cfg = CONFIGS["gpt2"]
    faulty = xt_core.forward_backward(
        cfg,
        xt_core.init_params(cfg, seed=0),
        TOKENS,
        np.roll(TOKENS, -1, axis=1),
        backward_override=overrides(cfg, ["layernorm_missing_mean"]),
    )
    record = next(r for r in faulty.records if r.name == "layers.0.ffn_norm.out" and r.phase == "backward")
    assert "not zero, so this backward is not LayerNorm's" in explain.explanation(record, faulty)
    sealed = explain.explanation(record, faulty, judge=False)
    assert "Compare the two yourself" in sealed and "not zero" not in sealed and "up to round-off" not in sealed
