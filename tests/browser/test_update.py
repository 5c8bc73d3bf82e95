"""Training from the page in a real browser: a walk with an optimizer and train_steps ends with
the update step and its figures; "train 10 steps" changes the permalink; progress shows while
a longer training runs; a checkpoint uploaded on the home page becomes the model."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

import xt_core
from tests.helpers.browser import ONE_LAYER, TEXT, assert_clean, shoot, steps, wait_rendered
from tests.helpers.specs import UPDATE_FIGURES
from xt_core.checkpoint import Checkpoint, save
from xt_core.text.byte_char import CharTokenizer


def walk_url(**spec: str) -> str:
    return "/walk?" + urlencode({"text": TEXT, **ONE_LAYER, **spec, "step": "1"})


def query_of(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


@pytest.mark.every_run
def test_the_update_step_after_training_and_training_more(session):
    page = session.page
    session.goto(walk_url(optimizer="adamw", train_steps="30"))
    wait_rendered(session, 0)
    assert "trained 30 steps on this batch first" in page.locator("#training-summary").text_content()
    page.keyboard.press("End")
    last = len(steps(session)) - 1
    wait_rendered(session, last)
    assert page.locator("#step-title").text_content() == "Parameter update: one AdamW step"
    assert page.locator(".cell.current").get_attribute("data-index") == str(last)
    assert page.locator(".gradcheck").count() == 1
    shoot(session, "20-update-step")
    for figure_id in UPDATE_FIGURES:  # drawn as they scroll into view
        card = page.locator(f'[data-figure="{figure_id}"]')
        card.scroll_into_view_if_needed()
        card.locator(".js-plotly-plot").wait_for()
    shoot(session, "21-update-step-line-search", '[data-figure="update.line_search"]')
    shoot(session, "22-update-step-ratios", '[data-figure="update.ratio"]')

    page.select_option("#update-param", "tok_embeddings")
    page.wait_for_function(  # a function, not an expression: the page's CSP forbids eval
        "() => document.querySelector('[data-figure=\"update.delta\"] .figure-title').textContent === 'Update ΔW of the token embedding matrix'"
    )
    page.locator('[data-figure="update.delta"] .js-plotly-plot').wait_for()

    page.click("#training-bar a[data-train-steps='40']")
    page.wait_for_url(re.compile(r"train_steps=40"))
    wait_rendered(session, last)  # the same step, of the model trained 10 steps more
    assert query_of(page.url)["step"] == str(last + 1)
    assert "trained 40 steps" in page.locator("#training-summary").text_content()
    assert_clean(session)


def test_training_progress_shows_while_the_model_trains(session):
    page = session.page
    # 2 layers, width 64, 300 steps: a few seconds, long enough to be seen.
    session.goto("/walk?" + urlencode({"text": "the cat sat on the mat. " * 2, "train_steps": "300", "step": "1"}))
    page.wait_for_selector("#loading[data-progress]")
    assert re.match(r"Training \d+ of 300 steps", page.locator("#loading").text_content())
    shoot(session, "23-training-progress")
    wait_rendered(session, 0)
    assert "trained 300 steps" in page.locator("#training-summary").text_content()
    assert_clean(session)


def test_an_uploaded_checkpoint_becomes_the_model(session, tmp_path):
    cfg = xt_core.Config(vocab_size=26, n_layer=1, n_head=2, n_kv_head=2, n_embd=16, ffn_hidden=24, seq_len=32)
    meta = {"description": "a test upload", "examples": ["abcabcabc"]}
    path = save(
        tmp_path / "mine.safetensors",
        Checkpoint(cfg, xt_core.init_params(cfg, 5), CharTokenizer("abcdefghijklmnopqrstuvwxyz"), meta),
    )
    page = session.page
    session.goto("/")
    page.wait_for_selector("#start-form[data-models-loaded]")
    page.set_input_files("#upload-file", str(path))
    page.click("#upload-button")
    page.wait_for_selector(".upload-status.upload-ok")
    assert page.input_value("#f-model").startswith("sha256-")
    assert page.input_value("#f-text") == "abcabcabc"
    assert page.locator("#config-fields").evaluate("f => f.disabled")
    session.screenshot("24-home-after-upload", full_page=True)
    page.click("#start")
    page.wait_for_url(re.compile(r"/walk\?model=sha256-"))
    wait_rendered(session, 0)
    assert "(checkpoint)" in page.locator(".summary-facts").text_content()
    assert_clean(session)
