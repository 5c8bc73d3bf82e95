"""The glossary on a step (static/js/lib/glossary.js): a term's first use is a button whose
definition shows on keyboard focus, hover and tap, and closes with Escape; the loss step's
sentence states the trace's own loss and ln V. Screenshots go to XT_SHOTS when it is set."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from tests.helpers.browser import assert_clean, open_step, open_walk

SHOTS = os.environ.get("XT_SHOTS")


def _shot(session, name: str, selector: str) -> None:
    if not SHOTS:
        return
    Path(SHOTS).mkdir(parents=True, exist_ok=True)
    session.page.locator(selector).first.evaluate("el => el.scrollIntoView({block: 'center'})")
    session.page.screenshot(path=str(Path(SHOTS) / f"{name}.png"))


@pytest.mark.every_run
def test_a_term_explains_itself_on_focus_hover_and_tap(session):
    page = session.page
    page.set_viewport_size({"width": 1280, "height": 720})
    open_walk(session)
    open_step(session, "layers.0.attention.probs", "backward")
    terms = page.locator("#step .explanation .term")
    assert terms.filter(has_text="Jacobian").count() == 1  # its first use only
    term = terms.filter(has_text="Jacobian").first
    note = page.locator("#" + term.get_attribute("aria-describedby"))
    assert "J[i, j] = ∂outᵢ/∂inⱼ" in note.text_content() and note.get_attribute("role") == "tooltip"
    assert not note.is_visible()
    term.focus()
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")  # keyboard focus (focus-visible)
    assert note.is_visible()
    page.keyboard.press("Escape")
    assert not note.is_visible() and term.get_attribute("aria-expanded") == "false"
    term.click()  # a tap
    assert note.is_visible() and term.get_attribute("aria-expanded") == "true"
    _shot(session, "glossary-term-softmax-backward", "#step .explanation")
    term.click()
    page.mouse.move(0, 0)
    assert not note.is_visible()
    term.hover()
    assert note.is_visible()
    assert_clean(session)


def test_the_loss_step_states_its_loss_and_ln_v(session):
    page = session.page
    page.set_viewport_size({"width": 1280, "height": 720})
    open_walk(session)
    open_step(session, "loss", "loss")
    text = page.locator("#step .explanation").text_content()
    loss = page.evaluate("window.xt.trace.loss")
    V = page.evaluate("window.xt.trace.config.vocab_size")
    assert f"L = {loss:.4f}" in text and f"ln V = {math.log(V):.4f}" in text, text
    _shot(session, "loss-step-ln-v", "#step .explanation")
    assert_clean(session)
