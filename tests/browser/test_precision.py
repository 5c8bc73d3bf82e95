"""The precision lab in a real browser: the float16 lesson walked at 1280×720 (each stop's numbers'
health panel under the step, the timeline's marks where the step loses information, the first one
where the lesson says) and at 390×844, nothing wider than the screen and no axe violation; a
bfloat16 training step's update draws the share of each parameter's update a bf16 weight would lose."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from tests.helpers.browser import ONE_LAYER, TEXT, assert_clean, axe_violations, steps, wait_rendered

LESSON = "float16-loss-scaling"
FITS = "() => document.documentElement.scrollWidth <= window.innerWidth"
PANEL = "#step .precision-panel"


def panel_drawn(page) -> None:
    page.locator(f"{PANEL} .js-plotly-plot").wait_for()


def fits(page) -> None:
    """Nothing wider than the screen, once the plots resized to the laid-out page (the step's first
    figure is drawn before the lesson panel narrows its column: a frame or two wider)."""
    page.wait_for_function(FITS, timeout=5_000)


def test_the_float16_lesson_walked_with_its_numbers_health(session, axe):
    page = session.page
    page.set_viewport_size({"width": 1280, "height": 720})
    session.goto(f"/lessons/{LESSON}")
    page.wait_for_selector("#lesson-panel[data-drawn='0']")
    panel_drawn(page)
    assert "Numbers in float16" in page.text_content(PANEL)
    assert "runs rounded" in page.text_content(".precision-op")  # logits: the LM head, a rounded matmul
    marked = page.locator("#timeline .cell.loses-precision")
    assert marked.count() >= 1 and page.locator("#timeline .cell.precision-first").count() == 1
    fits(page)
    assert axe_violations(page, axe) == []
    lesson = page.evaluate(f"fetch('/api/lessons/{LESSON}?lang=en').then((r) => r.json())")
    for k in range(1, len(lesson["steps"])):
        page.click("#lesson-panel button:has-text('Next')")
        page.wait_for_selector(f"#lesson-panel[data-drawn='{k}']")
        stop = lesson["steps"][k]
        wait_rendered(session, stop["index"])
        if stop["name"] == "layers.1.attention.scores" and k == 4:  # where the lesson says the loss starts
            panel_drawn(page)
            first = page.get_attribute("#timeline .cell.precision-first", "data-index")
            assert first == str(stop["index"])
            assert page.locator(f"{PANEL} tr.loses").count() >= 1  # its gradient's row, past the rule
            assert "Checked against this trace" in page.text_content("#lesson-panel")
    assert "bfloat16" in page.text_content("#lesson-panel")  # the last stop: bf16, unscaled
    page.set_viewport_size({"width": 390, "height": 844})
    panel_drawn(page)
    fits(page)
    assert axe_violations(page, axe) == []
    assert_clean(session)


@pytest.mark.every_run
def test_a_bfloat16_update_draws_what_bf16_weights_would_lose(session):
    page = session.page
    page.set_viewport_size({"width": 1280, "height": 720})
    query = {"text": TEXT, **ONE_LAYER, "dtype": "bfloat16", "optimizer": "adamw", "step": "1"}
    session.goto("/walk?" + urlencode(query))
    wait_rendered(session, 0)
    last = len(steps(session)) - 1
    page.keyboard.press("End")
    wait_rendered(session, last)
    card = page.locator(f'{PANEL} [data-figure="precision.update"]')
    card.scroll_into_view_if_needed()
    card.locator(".js-plotly-plot").wait_for()
    assert "float32 master weights" in page.text_content(f"{PANEL} .precision-update-text")
    box = page.eval_on_selector(PANEL, "p => p.getBoundingClientRect().right")
    assert box <= 1280
    assert_clean(session)
