"""The lecturer's findings of issue 32, each checked against the trace it describes: what the
AdamW update says at its first and at a later step, which rows of the embedding table each op
reads, the notation of the formulas and hover texts (docs/notation.md: one meaning a symbol)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from app.steps import update_text
from app.steps.context import TraceContext
from app.steps.glossary import TERMS
from tests.helpers.client import posted_context, step_answer
from tests.helpers.specs import SMALL_CONFIG
from xt_core.lab.faults import CATALOGUE

ADAMW = {"config": SMALL_CONFIG, "text": "the cat sat on the mat", "seed": 1, "optimizer": {"name": "adamw"}}


def _shown_step(client, spec: dict) -> tuple[str, dict, str]:
    """(the update step's explanation, step_facts of its shown parameter measured here, its formula)."""
    summary, ctx = posted_context(client, spec)
    view = step_answer(client, summary, "update", "update")
    shown, update = view["update"]["shown"], ctx.trace.update
    facts = update_text.step_facts(update.per_param[shown].delta, ctx.trace.grads[shown], update.optimizer.lr)
    return view["explanation"], facts, view["formula"]["update"]["latex"]


def _measured(facts: dict) -> str:
    return (
        f"median |ΔW| is {facts['median']:#.2g}·η, cos(ΔW, −sign g) = {facts['sign_cos']:.2f} and "
        f"cos(ΔW, g) = {facts['cos']:.2f}"
    )


def test_adamw_moves_every_entry_by_eta_at_its_first_step(client):
    """Finding 1: at t = 1, m̂ = g and v̂ = g², so ΔW = −η·sign g (the decay aside)."""
    text, facts, _ = _shown_step(client, ADAMW)
    assert facts["median"] == pytest.approx(1.0, abs=0.01) and facts["sign_cos"] > 0.999, facts
    assert "= −η·sign g" in text and "every entry moves by η" in text and _measured(facts) in text, text


def test_adamw_after_training_says_its_step_is_at_most_about_eta(client):
    """Finding 1: after 10 AdamW steps m̂ averages the past gradients: the median entry moves by
    less than η and ΔW is no longer the sign of −g; the text says so with this trace's numbers."""
    text, facts, _ = _shown_step(client, {**ADAMW, "train_steps": 10})
    assert facts["median"] < 0.95 and facts["sign_cos"] < 0.95, facts  # "about η, the sign of −g" is false here
    assert "whatever the size of its gradient" not in text and "whatever the scale" not in text, text
    assert "|ΔW| ≲ η, often much less" in text and "At t = 1 ΔW was −η·sign g" in text, text
    assert _measured(facts) in text, text


def test_adamw_formula_exempts_the_norm_gains_from_decay(client):
    """Finding 8: the formula decays matrices only, as the prose and the optimizer do."""
    text, _, latex = _shown_step(client, ADAMW)
    assert r"\lambda_W W" in latex and r"0 \text{ (a norm gain)}" in latex, latex
    assert r"+ \lambda W\Big)" not in latex
    assert "every matrix (not the norm gains)" in text


# A vocabulary too large to draw whole (app.steps.axes.VOCAB_WHOLE): the table's rows are picked.
LARGE_VOCAB = {"config": {**SMALL_CONFIG, "vocab_size": 600}, "tokens": [[5, 70, 300, 5, 599, 70, 12, 1]]}


def _table_note(view: dict, tensor: str) -> str:
    return next(f["note"] for f in view["figures"] if f["id"] == f"input.{tensor}")


@pytest.mark.parametrize("tied", [True, False], ids=["tied", "untied"])
def test_each_op_says_which_rows_of_the_table_it_reads(client, tied):
    """Findings 2 and 3: the lookup reads only the input tokens' rows; the LM head every row."""
    spec = {**LARGE_VOCAB, "config": {**LARGE_VOCAB["config"], "tie_embeddings": tied}}
    summary, ctx = posted_context(client, spec)
    inputs = len(set(ctx.trace.tokens.ravel().tolist()))
    drawn = len(set(ctx.trace.tokens.ravel().tolist()) | set(ctx.trace.targets.ravel().tolist()))
    lookup = _table_note(step_answer(client, summary, "embedding", "forward"), "tok_embeddings")
    assert f"{drawn} of the 600 rows are drawn: the batch's {inputs} distinct input tokens" in lookup, lookup
    assert f"then {drawn - inputs} more of its targets" in lookup and "only the input tokens' rows" in lookup
    assert "the rows this step reads" not in lookup and "tokens and targets" not in lookup
    head = _table_note(step_answer(client, summary, "logits", "forward"), "tok_embeddings" if tied else "output")
    assert "LM head" in head and "reads every row" in head, head
    assert ("embedding lookup" in head) is tied


# ---------------------------------------------------------------------- notation (findings 9-16, 19)


@pytest.fixture(scope="module")
def walked(client) -> tuple[dict, dict, TraceContext]:
    """The small trace's summary, every step view by (name, phase), and its context."""
    summary, ctx = posted_context(client, {"config": SMALL_CONFIG, "text": "the cat sat on the mat", "seed": 1})
    views = {(s["name"], s["phase"]): step_answer(client, summary, s["name"], s["phase"]) for s in summary["steps"]}
    return summary, views, ctx


def _latex(view: dict, phase: str) -> str:
    return view["formula"][phase]["latex"]


def test_the_scores_read_the_rotated_queries_and_keys(walked):
    """Finding 10: S = q̃·k̃ᵀ/√hd, and its backward gives dq̃, dk̃ (RoPE's backward makes dq, dk)."""
    _, views, _ = walked
    forward, backward = (
        views[("layers.0.attention.scores", "forward")],
        views[("layers.0.attention.scores", "backward")],
    )
    assert r"\tilde{q}_{m,i} \cdot \tilde{k}" in _latex(forward, "forward") and "S = q̃·k̃ᵀ/√hd" in forward["explanation"]
    latex = _latex(backward, "backward")
    assert r"\partial \tilde{q}_{m,i}" in latex and r"\partial \tilde{k}_{\kappa,j}" in latex, latex
    assert "dq̃[m,i] = (1/√hd)·Σⱼ dS[m,i,j]·k̃[κ,j]" in backward["explanation"]


def test_y_means_the_targets_only(walked):
    """Finding 11: the concatenated heads are o_t; y is the targets (the token loss)."""
    _, views, _ = walked
    latex = {
        key: _latex(v, phase) for key, v in views.items() for phase in ("forward", "backward") if v["formula"][phase]
    }
    with_y = {key[0] for key, tex in latex.items() if "y_" in tex}
    assert with_y == {"token_loss"}, with_y
    assert _latex(views[("layers.0.attention.concat", "forward")], "forward").startswith(r"o_{t} = \big[")


def test_theta_is_ropes_base_and_defined_where_rope_starts(walked):
    """Findings 12 and 19: the first RoPE step says what θ and hd are, with this model's numbers;
    the update step's line search moves W (all the parameters), not θ."""
    summary, views, ctx = walked
    text = views[("layers.0.attention.q_rot", "forward")]["explanation"]
    cfg = ctx.trace.cfg
    assert f"hd = {cfg.head_dim} the head width and θ = {cfg.rope_theta:g} RoPE's base" in text, text
    assert "loss(θ" not in str(views)


def test_epsilon_means_one_thing_a_name(walked):
    """Finding 13: ε is RMSNorm's; AdamW's is ε_adam, round-off's ε_mach, the check's step δ."""
    _, views, _ = walked
    for (name, phase), view in views.items():
        bare = re.findall(r"ε(?!_adam|_mach)", view["explanation"])
        assert not bare or view["kind"] == "rmsnorm", (name, phase, view["explanation"])
    softmax = views[("layers.0.attention.probs", "backward")]["explanation"]
    assert "ε_mach = 1.2e-07 (the gap between 1 and the next float32)" in softmax, softmax
    assert f"ε_mach = {np.finfo(np.float32).eps:.2g}" in softmax
    assert "L(X + δ·u) − L(X − δ·u)) / 2δ" in glossary_text()


def glossary_text() -> str:
    return " ".join(term.definition for term in TERMS)


def test_the_attend_formula_leaves_dp_dense_above_the_diagonal(walked):
    """Finding 14: o = Σ_j P v with P = 0 above the diagonal; ∂L/∂P is dense there, as recorded."""
    _, views, ctx = walked
    dprobs = np.asarray(ctx.trace.grad("layers.0.attention.probs"), dtype=np.float64)
    above = np.triu(np.ones(dprobs.shape[-2:], dtype=bool), k=1)
    assert np.abs(dprobs[..., above]).max() > 0  # the recorded gradient is not zero above the diagonal
    view = views[("layers.0.attention.heads", "forward")]
    assert r"\sum_{j} P_{m,i,j}" in _latex(view, "forward") and r"\sum_{j \le i}" not in _latex(view, "forward")
    backward = views[("layers.0.attention.heads", "backward")]
    assert r"\text{ also } j > i" in _latex(backward, "backward") and "dP is dense" in backward["explanation"]


def test_the_jacobian_hover_names_keys_and_tokens_in_the_notation(client, walked):
    """Finding 15: J[j, j′] = ∂P[m,i,j]/∂S[m,i,j′] (i is the query), ∂p[t,v]/∂z[t,w] at the output."""
    summary, _, _ = walked
    for where, symbol in (({"layer": 0, "head": 1}, "∂P[m,i,j]/∂S[m,i,j′]"), ({"layer": "output"}, "∂p[t,v]/∂z[t,w]")):
        body = client.get(f"/api/traces/{summary['id']}/jacobian", params=where).json()
        hover = body["figure"]["data"][0]["hovertemplate"]
        assert symbol in hover and "∂p_i/∂s_j" not in hover, hover


def test_indices_keep_their_meaning_in_the_softmax_rmsnorm_and_rope_formulas(walked):
    """Finding 16: keys j, j′ in the softmax; features k in RMSNorm; the keys' RoPE rotates k;
    the tied-embedding fault's correct rule reads n, the final norm's output."""
    _, views, _ = walked
    softmax = views[("layers.0.attention.probs", "backward")]
    assert r"\max_k" not in _latex(softmax, "forward") and r"\sum_{j'} P_{m,i,j'}" in _latex(softmax, "backward")
    assert "Σ_j′ p_j′·dP_j′" in softmax["explanation"] and "Σ_k" not in softmax["explanation"]
    assert r"\sum_k x_k^2" in _latex(views[("layers.0.attention_norm.out", "forward")], "forward")
    keys = _latex(views[("layers.0.attention.k_rot", "forward")], "forward")
    assert r"\tilde{k}_{2c}" in keys and r"\tilde{q}" not in keys, keys
    assert r"\tilde{q}_{2c}" in _latex(views[("layers.0.attention.q_rot", "forward")], "forward")
    assert CATALOGUE["tied_embedding_one_contribution"].correct == "dE += dlogits^T @ n"


def test_the_api_doc_states_the_momentum_whiskers_the_app_draws():
    """Finding 9: the SGD whiskers depend on t; docs/api.md said 1/(1 + μ) to 1/(1 − μ)."""
    api = (Path(__file__).resolve().parents[3] / "docs" / "api.md").read_text()
    assert "1/(1 + μ) to 1/(1 − μ)" not in api
    assert "(1 − (−μ)ᵗ)/(1 + μ) to\n  (1 − μᵗ)/(1 − μ) times that" in api
    fewest, most = update_text.momentum_range(0.9, 1)
    assert fewest == most == pytest.approx(1.0)  # t = 1: b = g, whatever μ
