"""The walk page's timeline and "Jump to" (static/js/walk/timeline.js, jump.js): on a toy model
every cell shows and the layer and op selects land on the step they name (with the mouse or the
keyboard); on the real SmolLM2-135M (30 layers, ~1,100 steps) the timeline folds each layer into
one numbered group, only the current one open, and a jump to layer 20's attention softmax lands
there. The SmolLM2 test skips unless the fetched .gguf is there (as tests/app/steps/
test_smollm2_views.py); with XT_REQUIRE_REAL_MODEL=1 it fails instead."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from tests.helpers.browser import assert_clean, axe_violations, step_index, steps, url_step, wait_rendered
from tests.helpers.real_model import SMOLLM2, link_smollm2

TOY = {"model": "induction", "tokenizer": "char", "text": "xkqvbmxkqvbm", "seed": "0", "dtype": "float32"}
SMOLLM2_TEXT = "The capital of France is Paris. The capital of Italy is Rome."


def walk_url(spec: dict, step: int = 0) -> str:
    return f"/walk?{urlencode({**spec, 'step': step + 1})}"


def current_cell(session) -> str:
    return session.page.locator("#timeline .cell.current").get_attribute("data-index")


@pytest.mark.every_run
def test_jump_to_a_layer_and_op_on_a_toy_model(session):
    page = session.page
    session.goto(walk_url(TOY))
    wait_rendered(session, 0)
    assert page.locator("#timeline.dense").count() == 0  # 84 steps: every cell shows
    assert page.locator("#timeline .cell:visible").count() == len(steps(session))
    assert page.locator("#timeline .group-button:visible").count() == 0

    # A layer from the embedding: no such op there, so its first step in the same direction.
    page.select_option("#jump-group", label="Layer 1")
    first = step_index(session, "layers.1.attention_norm.out", "forward")
    wait_rendered(session, first)
    page.select_option("#jump-op", label="Attention softmax over keys — backward")
    wanted = step_index(session, "layers.1.attention.probs", "backward")
    wait_rendered(session, wanted)
    assert url_step(session) == wanted and current_cell(session) == str(wanted)
    assert page.locator("#step-title").text_content() == "Layer 1 · Attention softmax over keys — backward"

    # Another layer keeps the op and its direction.
    page.select_option("#jump-group", label="Layer 0")
    wanted = step_index(session, "layers.0.attention.probs", "backward")
    wait_rendered(session, wanted)
    assert page.locator("#jump-group").input_value() == "layers.0"
    assert page.locator("#jump-op").input_value() == str(wanted)

    # The keyboard: the op select's arrows step through the layer's ops (backward: heads comes before probs).
    page.focus("#jump-op")
    page.keyboard.press("ArrowUp")
    wait_rendered(session, wanted - 1)
    assert steps(session)[wanted - 1]["name"] == "layers.0.attention.heads"

    # In the timeline Page Down and Page Up go to the next and previous group's first step.
    page.locator('#timeline .cell[data-index="0"]').click()
    wait_rendered(session, 0)
    layer_starts = [step_index(session, f"layers.{L}.attention_norm.out", "forward") for L in (0, 1)]
    for key, index in (("PageDown", layer_starts[0]), ("PageDown", layer_starts[1]), ("PageUp", layer_starts[0])):
        page.keyboard.press(key)
        wait_rendered(session, index)
        assert page.evaluate("document.activeElement.dataset.index") == str(index)
    assert_clean(session)


@pytest.fixture
def smollm2_server(live_models_dir):
    """The live server with the fetched SmolLM2-135M in its models directory (for this test only)."""
    link = link_smollm2(live_models_dir)
    yield
    link.unlink()


def test_smollm2_timeline_folds_layers_and_jumps_to_layer_20_attention(smollm2_server, session, axe):
    page = session.page
    page.set_default_timeout(90_000)  # the first trace imports the model
    page.set_viewport_size({"width": 390, "height": 844})  # a phone first: the rows scroll sideways
    session.goto(walk_url({"model": SMOLLM2, "text": SMOLLM2_TEXT}))
    wait_rendered(session, 0)
    all_steps = steps(session)
    assert len(all_steps) > 1000 and page.locator("#timeline.dense").count() == 1
    # Each layer one numbered group per direction; only the embedding and output cells show.
    assert page.locator("#timeline .group-button:visible").count() == 60
    assert page.locator("#timeline .cell:visible").count() < 15

    page.select_option("#jump-group", label="Layer 20")
    page.select_option("#jump-op", label="Attention softmax over keys")
    wanted = step_index(session, "layers.20.attention.probs", "forward")
    wait_rendered(session, wanted)
    assert url_step(session) == wanted and current_cell(session) == str(wanted)
    assert page.locator("#step-title").text_content() == "Layer 20 · Attention softmax over keys"
    assert page.locator(".figure-card").first.locator(".head-buttons button").count() == 9  # 9 query heads
    # Layer 20's forward group is open: its 18 ops show, the other layers stay folded.
    open_group = page.locator("#timeline .timeline-group.open")
    assert open_group.count() == 1 and open_group.get_attribute("data-group") == "layers.20"
    assert open_group.locator(".cell:visible").count() == 18
    assert page.locator("#timeline .group-button:visible").count() == 60  # the open one names its layer
    # On the phone the forward row scrolled to the current step; nothing widens the page.
    row = open_group.locator("xpath=..").bounding_box()
    cell = page.locator("#timeline .cell.current").bounding_box()
    assert row["x"] <= cell["x"] and cell["x"] + cell["width"] <= row["x"] + row["width"], (row, cell)
    assert page.evaluate("document.scrollingElement.scrollWidth <= innerWidth")
    page.set_viewport_size({"width": 1280, "height": 720})  # a projector
    assert axe_violations(page, axe) == []

    # A folded group opens on a click: layer 5's backward pass, from its first step.
    page.locator('.run-backward .timeline-group[data-group="layers.5"] .group-button').click()
    first = next(s["index"] for s in all_steps if s["group"] == "layers.5" and s["phase"] == "backward")
    wait_rendered(session, first)
    assert page.locator("#timeline .timeline-group.open").get_attribute("data-group") == "layers.5"
    assert_clean(session)
