"""What a learner reads is true of the trace it describes (issue 23): each test reads a step
view's explanation for a real spec over HTTP and checks its numbers and claims against the
recorded tensors of the same trace."""

from __future__ import annotations

import math

import numpy as np
import pytest

import xt_core
from app.steps import update, update_text
from app.steps.context import TraceContext
from tests.helpers.client import post_trace, posted_context, step_answer
from tests.helpers.specs import SMALL_CONFIG

TIED = {"config": SMALL_CONFIG, "text": "the cat sat on the mat", "seed": 1}
UNTIED = {"config": {**SMALL_CONFIG, "tie_embeddings": False}, "text": "the cat sat on the mat", "seed": 1}
MOMENTUM = {
    "config": SMALL_CONFIG,
    "text": "hello hello",
    "optimizer": {"name": "sgd", "lr": 0.5, "momentum": 0.9},
    "train_steps": 3,
}


@pytest.fixture(scope="module")
def tied(client):
    return posted_context(client, TIED)


@pytest.mark.parametrize("spec", [TIED, UNTIED], ids=["tied", "untied"])
def test_the_loss_step_states_this_traces_loss_and_ln_v(client, spec):
    summary, ctx = posted_context(client, spec)
    text = step_answer(client, summary, "loss", "loss")["explanation"]
    V = summary["config"]["vocab_size"]
    loss = float(ctx.trace.loss)
    assert f"L = {loss:.4f}" in text and f"ln V = {math.log(V):.4f}" in text, text
    assert f"V = {V} tokens" in text and f"N = B·T = {ctx.trace.targets.size} positions" in text
    gap = loss - math.log(V)
    assert f"scores {abs(gap):.2f} {'above' if gap > 0 else 'below'} it" in text, (gap, text)
    assert "A random model scores about" not in text


def test_the_output_softmax_backward_states_the_sum_inv_divides_by(client, tied):
    summary, ctx = tied
    text = step_answer(client, summary, "output_probs", "backward")["explanation"]
    p = np.asarray(ctx.trace["output_probs"], dtype=np.float64)
    sums = 1.0 / p.max(axis=-1)  # Σ_k e^(z_k − max z) at each position
    assert sums.min() > 1.0  # the divisor is not the softmax's sum of 1
    assert f"ranges from {sums.min():.4g} to {sums.max():.4g}" in text, text
    assert "softmax's sum" not in text
    N = ctx.trace.targets.size
    largest = float(np.abs(ctx.trace.grad("logits")).max())
    assert largest < 1 / N
    assert f"1/N = {1 / N:.3g}" in text and f"largest |dL/dlogits| recorded is {largest:.3g}" in text
    assert "zero up to round-off" in text


def test_the_tied_embedding_backward_names_the_lm_head_as_the_other_contribution(client, tied):
    summary, _ = tied
    text = step_answer(client, summary, "embedding", "backward")["explanation"]
    assert "LM head" in text and "the logits step" in text, text
    assert "here and at the embedding lookup" not in text
    logits = step_answer(client, summary, "logits", "backward")["explanation"]
    assert "embedding lookup's at the last backward step" in logits, logits


def test_the_final_norm_says_the_stream_ends_there(client, tied):
    summary, _ = tied
    text = step_answer(client, summary, "norm.out", "forward")["explanation"]
    assert "residual stream ends here" in text and "passes on unchanged" not in text, text
    inner = step_answer(client, summary, "layers.0.ffn_norm.out", "forward")["explanation"]
    assert "the residual stream h itself goes around it" in inner, inner


def test_the_sgd_update_text_is_true_with_momentum(client):
    summary, ctx = posted_context(client, MOMENTUM)
    view = step_answer(client, summary, "update", "update")
    text, shown = view["explanation"], view["update"]["shown"]
    assert "looks just like g" not in text and "ΔW = −η·b" in text and "μ = 0.9" in text, text
    cos = update_text.cosine(ctx.trace.update.per_param[shown].delta, ctx.trace.grads[shown])
    assert f"for {shown} cos(ΔW, g) = {cos:.2f}" in text
    assert cos > -0.99  # with momentum ΔW is not −η·g: the old claim was false here


def test_plain_sgd_says_delta_w_is_minus_g(client):
    summary, ctx = posted_context(client, {**MOMENTUM, "optimizer": {"name": "sgd", "lr": 0.5}, "train_steps": 0})
    view = step_answer(client, summary, "update", "update")
    shown = view["update"]["shown"]
    cos = update_text.cosine(ctx.trace.update.per_param[shown].delta, ctx.trace.grads[shown])
    assert cos == pytest.approx(-1.0, abs=1e-6)
    assert "the picture of g with its colours inverted" in view["explanation"]
    assert f"cos(ΔW, g) = {cos:.2f}" in view["explanation"]


def test_adamw_text_states_bias_correction_at_this_step(client):
    summary, _ = posted_context(client, {**MOMENTUM, "optimizer": {"name": "adamw"}, "train_steps": 0})
    text = step_answer(client, summary, "update", "update")["explanation"]
    assert "m̂/(√v̂ + ε_adam)" in text and "moves by m/√v" not in text, text
    assert f"= {0.1 / math.sqrt(0.001):.3g}" in text and "t = 1" in text  # uncorrected m/√v at t = 1: 3.16
    assert "decoupled" in text and "L2" in text


def test_the_attention_softmax_backward_measures_its_row_sums(client):
    summary, ctx = posted_context(client, {**TIED, "faults": ["softmax_missing_sum_term"]})
    text = step_answer(client, summary, "layers.0.attention.probs", "backward")["explanation"]
    assert "not zero, so this backward is not the softmax's" in text, text
    clean = step_answer(client, post_trace(client, TIED), "layers.0.attention.probs", "backward")["explanation"]
    assert "zero up to round-off" in clean and "J is symmetric" in clean


INDUCTION = {"model": "induction", "text": "xkqvbmxkqvbmxkqvbmxkqvbm"}
DEFAULT_FAULT = {
    "text": "the cat sat on the mat. the cat sat on the hat.",
    "tokenizer": "char",
    "faults": ["softmax_missing_sum_term"],
}


def _largest_row(ctx: TraceContext, name: str) -> tuple[tuple, float, float]:
    """The row of dL/dS whose |row sum| is largest: its index (seq, head, row), that sum, its Σ|entries|."""
    g = np.asarray(ctx.trace.grad(name), dtype=np.float64)
    sums, sizes = np.abs(g.sum(axis=-1)), np.abs(g).sum(axis=-1)
    row = np.unravel_index(int(sums.argmax()), sums.shape)
    return tuple(int(i) for i in row), float(sums[row]), float(sizes[row])


def test_a_correct_attention_backward_with_a_near_one_hot_row_is_zero_up_to_round_off(client):
    # Row 8 of head 2 puts P ≈ 1 on one key: its entries are all but zero, so its row sum is pure
    # round-off; judged against its own Σ|entries| it once read "not zero" on a correct backward.
    summary, ctx = posted_context(client, INDUCTION)
    text = step_answer(client, summary, "layers.1.attention.probs", "backward")["explanation"]
    (_, head, row), largest, _ = _largest_row(ctx, "layers.1.attention.scores")
    assert "zero up to round-off" in text and "not zero" not in text, text
    assert f"is {largest:.1e} (head {head}, row {row})" in text, text


def test_a_softmax_without_its_sum_term_reports_the_numbers_of_one_row(client):
    summary, ctx = posted_context(client, DEFAULT_FAULT)
    text = step_answer(client, summary, "layers.1.attention.probs", "backward")["explanation"]
    (_, head, row), largest, size = _largest_row(ctx, "layers.1.attention.scores")
    assert row > 0  # row 0 (a single key) always has Σ = Σ|·|: it must not lend the ratio
    assert "not zero, so this backward is not the softmax's" in text, text
    assert f"is {largest:.3g} (head {head}, row {row}, whose entries add up to {size:.3g} in |·|)" in text, text


def test_the_shortcut_figure_names_its_position_once_and_its_tokens(client, tied):
    summary, _ = tied
    titles = [f["title"] for f in step_answer(client, summary, "output_probs", "backward")["figures"]]
    shortcut = next(t for t in titles if "shortcut" in t)
    assert "at position 0 (input t → target h):" in shortcut, shortcut  # "the cat…": t then h


def test_residual_and_norm_backward_prose_speak_in_the_notations_symbols(client):
    summary, _ = posted_context(client, {**TIED, "config": {**SMALL_CONFIG, "n_layer": 2}})
    ffn = step_answer(client, summary, "layers.1.ffn_residual", "backward")["explanation"]
    assert "∂x′/∂h is I plus the branch's Jacobian" in ffn, ffn
    assert "the full dL/dh (layers.1.attention_residual in the recorded names)" in ffn
    assert "the gradient layers.1.attention_residual receives" not in ffn
    attention = step_answer(client, summary, "layers.1.attention_residual", "backward")["explanation"]
    assert attention.startswith("h = x + attention(RMSNorm(x)):") and "∂h/∂x is I plus" in attention, attention
    norm = step_answer(client, summary, "layers.0.attention_norm.out", "backward")["explanation"]
    assert "This is one of two contributions to dL/dx:" in norm and "(embedding in the recorded names)" in norm
    assert "the full gradient of embedding" not in norm and "gradient of embedding:" not in norm
    inner = step_answer(client, summary, "layers.1.ffn_norm.out", "backward")["explanation"]
    assert "contributions to dL/dh:" in inner and "hands h the gradient dL/dx′ unchanged" in inner, inner


def test_the_scores_backward_is_plain_unicode_text(client, tied):
    summary, _ = tied
    text = step_answer(client, summary, "layers.0.attention.scores", "backward")["explanation"]
    assert "{" not in text and "_" not in text.split(" Masked")[0], text
    assert "dq̃[m,i] = (1/√hd)·Σⱼ dS[m,i,j]·k̃[κ,j]" in text


def test_ropes_formula_names_its_pair_q_not_the_residual_streams_x(client, tied):
    summary, _ = tied
    formula = step_answer(client, summary, "layers.0.attention.q_rot", "forward")["formula"]
    latex = " ".join(part["latex"] for part in formula.values() if part)
    assert r"\tilde{q}_{2c}" in latex and "x_{2c}" not in latex and "y_{2c}" not in latex, latex


def test_momentum_text_and_whiskers_use_this_steps_t(client):
    summary, ctx = posted_context(client, MOMENTUM)
    view = step_answer(client, summary, "update", "update")
    text = view["explanation"]
    t = len(ctx.trace.train_losses) + 1
    assert t == 4 and "ΔW is −η·g on the first step (b starts as g) and without momentum" in text, text
    most, fewest = (1 - 0.9**t) / (1 - 0.9), (1 - (-0.9) ** t) / (1 + 0.9)
    assert f"t = {t} counting this one, momentum makes it at most (1 − μᵗ)/(1 − μ) = {most:.3g} times" in text
    assert f"(1 − (−μ)ᵗ)/(1 + μ) = {fewest:.3g} times when it alternates" in text
    assert "1/(1 − 0.9)" not in text
    rows = [{"weight_rms": 2.0, "grad_norm": 4.0, "shape": [4]}]  # RMS(g) = 2: lr·RMS(g)/RMS(W) = lr
    sgd = xt_core.SGD(lr=0.5, momentum=0.9)
    assert [float(v[0]) for v in update.expected_ratios(sgd, rows, 1)] == [0.5, 0.5]  # b = g at t = 1
    low, high = update.expected_ratios(sgd, rows, t)
    assert float(low[0]) == pytest.approx(0.5 * fewest) and float(high[0]) == pytest.approx(0.5 * most)
