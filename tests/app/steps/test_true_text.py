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
