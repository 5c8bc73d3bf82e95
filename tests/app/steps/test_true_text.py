"""The lecturer's findings of issue 32, each checked against the trace it describes: what the
AdamW update says at its first and at a later step, which rows of the embedding table each op
reads, the notation of the formulas and hover texts (docs/notation.md: one meaning a symbol)."""

from __future__ import annotations

import pytest

from app.steps import update_text
from app.steps.context import TraceContext
from tests.helpers.client import post_trace
from tests.helpers.specs import SMALL_CONFIG

ADAMW = {"config": SMALL_CONFIG, "text": "the cat sat on the mat", "seed": 1, "optimizer": {"name": "adamw"}}


def _context(client, spec: dict) -> tuple[dict, TraceContext]:
    summary = post_trace(client, spec)
    store = client.app.state.services.store
    stored = store.spec(summary["id"])
    return summary, TraceContext(stored, store.get(stored), client.app.state.settings)


def _view(client, summary: dict, name: str, phase: str) -> dict:
    step = next(s for s in summary["steps"] if s["name"] == name and s["phase"] == phase)
    response = client.get(f"/api/traces/{summary['id']}/steps/{step['index']}")
    assert response.status_code == 200, response.text[:300]
    return response.json()


def _shown_step(client, spec: dict) -> tuple[str, dict, str]:
    """(the update step's explanation, step_facts of its shown parameter measured here, its formula)."""
    summary, ctx = _context(client, spec)
    view = _view(client, summary, "update", "update")
    shown, update = view["update"]["shown"], ctx.trace.update
    facts = update_text.step_facts(update.per_param[shown].delta, ctx.trace.grads[shown], update.optimizer.lr)
    return view["explanation"], facts, view["formula"]["update"]["latex"]


def _measured(facts: dict) -> str:
    return (
        f"median |ΔW| is {facts['median']:.2g}·η, cos(ΔW, −sign g) = {facts['sign_cos']:.2f} and "
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
    summary, ctx = _context(client, spec)
    inputs = len(set(ctx.trace.tokens.ravel().tolist()))
    drawn = len(set(ctx.trace.tokens.ravel().tolist()) | set(ctx.trace.targets.ravel().tolist()))
    lookup = _table_note(_view(client, summary, "embedding", "forward"), "tok_embeddings")
    assert f"{drawn} of the 600 rows are drawn: the batch's {inputs} distinct input tokens" in lookup, lookup
    assert f"then {drawn - inputs} more of its targets" in lookup and "only the input tokens' rows" in lookup
    assert "the rows this step reads" not in lookup and "tokens and targets" not in lookup
    head = _table_note(_view(client, summary, "logits", "forward"), "tok_embeddings" if tied else "output")
    assert "LM head" in head and "reads every row" in head, head
    assert ("embedding lookup" in head) is tied
