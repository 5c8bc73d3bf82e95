"""The film of a recorded run (issue 39, docs/film.md): the shipped run's loss and head scores
scrubbed with the keyboard at 1280×720 and 390×844 (the line follows, nothing overflows), a
step opened in the walkthrough (no "train more": the run fixes it) and the way back to the film at
that step; every head's attention drawn on demand; axe finds nothing. Three page loads."""

from __future__ import annotations

from tests.helpers.browser import assert_clean, axe_violations

LINE_AT = "() => document.getElementById('film-plot').layout.shapes[0].x0"


def _scrub(page, *keys: str) -> int:
    page.focus("#film-scrub")
    for key in keys:
        page.keyboard.press(key)
    step = int(page.input_value("#film-scrub"))
    assert page.evaluate(LINE_AT) == step  # the figure's vertical line is at the scrubbed step
    assert f"run_step={step}" in page.get_attribute("#film-open", "href")
    return step


def _fits(page, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 844 if width < 600 else 720})
    page.wait_for_function(f"() => document.getElementById('film-plot')._fullLayout.width <= {width}")
    assert page.evaluate("document.scrollingElement.scrollWidth") <= width


def test_the_film_scrubs_by_keyboard_and_opens_a_step_and_back(session, axe):
    page = session.page
    page.set_viewport_size({"width": 1280, "height": 720})
    session.goto("/film?run=induction&step=700")
    page.wait_for_selector("#film[data-ready]")
    _fits(page, 1280)
    assert page.evaluate("document.getElementById('film-plot').data.length") == 1 + 2 * 8  # loss, 8 heads twice
    assert _scrub(page, "End") == 1499 and _scrub(page, "Home") == 0
    assert _scrub(page, "PageUp", "PageUp") == 150  # a twentieth of 1,500 steps each
    assert _scrub(page, "ArrowLeft") == 149 and "?run=induction&step=149" in page.url
    _fits(page, 390)
    page.evaluate(
        "document.getElementById('film-scrub').value = 760; document.getElementById('film-scrub').dispatchEvent(new Event('input'))"
    )
    assert _scrub(page, *["ArrowRight"] * 9) == 769  # a checkpoint (the steepest fall): it opens at once
    assert "a checkpoint" in page.text_content("#film-readout")
    page.click("#film-attention")  # on demand: the step rebuilt, each layer's heads drawn
    page.wait_for_selector("#film-attention-figures .figure-card:nth-child(2) .js-plotly-plot")
    assert "at step 769" in page.text_content("#film-attention-status")
    assert axe_violations(page, axe) == []  # the figure, the scrubber and the heads' figures
    assert page.evaluate("document.scrollingElement.scrollWidth") <= 390

    page.click("#film-open")  # the walkthrough of the run's step 769
    page.wait_for_selector("#step[data-rendered]")
    assert "step 769 of the recorded run induction" in page.text_content(".summary")
    assert page.locator(".train-link").count() == 0 and page.locator("#film-back").is_visible()
    page.click("#film-back")
    page.wait_for_selector("#film[data-ready]")
    assert page.input_value("#film-scrub") == "769" and page.evaluate(LINE_AT) == 769
    assert page.evaluate("document.scrollingElement.scrollWidth") <= 390
    assert_clean(session)
