"""The film of a recorded run (issue 39, docs/film.md): the shipped run's loss and head scores
scrubbed with the keyboard at 1280×720 and 390×844 (the line follows, nothing overflows), a
step opened in the walkthrough (no "train more": the run fixes it) and the way back to the film at
that step; the chosen heads' attention on the probe sequence following the scrubber (the recorded step
nearest), every head's attention on the step's own batch drawn on demand, which gradients build the
head measured at a step, and the walkthrough of a step compared with another step of the run; axe
finds nothing. Three page loads."""

from __future__ import annotations

import pytest

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


@pytest.mark.every_run
def test_the_film_scrubs_by_keyboard_and_opens_a_step_and_back(session, axe):
    page = session.page
    page.set_viewport_size({"width": 1280, "height": 720})
    session.goto("/film?run=induction&step=700")
    page.wait_for_selector("#film[data-ready]")
    _fits(page, 1280)
    assert page.evaluate("document.getElementById('film-plot').data.length") == 1 + 2 * 8  # loss, 8 heads twice
    assert _scrub(page, "End") == 1499 and _scrub(page, "Home") == 0
    assert _scrub(page, "PageDown", "PageDown") == 150  # a twentieth of 1,500 steps each: a clicker's "next"
    assert _scrub(page, "ArrowLeft") == 149 and "?run=induction&step=149" in page.url
    _fits(page, 390)
    page.evaluate(
        "document.getElementById('film-scrub').value = 760; document.getElementById('film-scrub').dispatchEvent(new Event('input'))"
    )
    assert _scrub(page, *["ArrowRight"] * 9) == 769  # a checkpoint (the steepest fall): it opens at once
    assert "a checkpoint" in page.text_content("#film-readout")
    # the probe's attention follows the scrubber: 767 and 771 are recorded, as near; the earlier is drawn
    assert page.get_attribute("#film-frames", "data-frame") == "767"
    assert "recorded at step 767, the nearest to step 769" in page.text_content("#film-frame-status")
    assert page.locator("#film-frames canvas").count() == 2  # layer 0's previous-token, layer 1's induction head
    page.check("#film-heads input[value='1.2']")
    assert page.locator("#film-frames canvas").count() == 3
    page.fill("#film-ahead", "5")
    page.click("#film-composition")  # a checkpoint and 5 steps replayed
    page.wait_for_selector("#film-composition-plot[data-step='769'] .main-svg")
    assert "Step 769, layer 1: over the next 5 steps" in page.text_content("#film-composition-status")
    page.click("#film-attention")  # on demand: the step rebuilt, each layer's heads drawn
    page.wait_for_selector("#film-attention-figures .figure-card:nth-child(2) .js-plotly-plot")
    assert "at step 769" in page.text_content("#film-attention-status")
    assert axe_violations(page, axe) == []  # the figure, the scrubber and the heads' figures
    assert page.evaluate("document.scrollingElement.scrollWidth") <= 390

    assert page.get_attribute("#film-open", "href") == "/walk?run=induction&run_step=769"
    page.fill("#film-compare-step", "1000")
    page.click("#film-compare")  # the walkthrough of the run's step 769, compared with step 1000 at every op
    page.wait_for_selector("#step[data-rendered]")
    assert "step 769 of the recorded run induction" in page.text_content(".summary")
    page.wait_for_selector(".compare-result[data-compared]")
    assert "B: step 1000 of the recorded run induction" in page.text_content(".compare-result")
    assert page.locator(".train-link").count() == 0 and page.locator("#film-back").is_visible()
    page.click("#film-back")
    page.wait_for_selector("#film[data-ready]")
    assert page.input_value("#film-scrub") == "769" and page.evaluate(LINE_AT) == 769
    assert page.evaluate("document.scrollingElement.scrollWidth") <= 390
    assert_clean(session)


def test_a_run_recorded_from_the_page_opens_as_a_film(session, axe):
    """/film's "Record a training run" at 390×844: a tiny run of the induction task (4 steps) POSTed,
    its progress followed, then its film opened; axe finds nothing on the form or the film."""
    page = session.page
    page.set_viewport_size({"width": 390, "height": 844})
    session.goto("/film")
    page.wait_for_selector("#film-record-form")
    assert axe_violations(page, axe) == []
    assert page.evaluate("document.scrollingElement.scrollWidth") <= 390
    page.select_option("#film-record-task", "induction")
    page.fill("#film-record-steps", "4")
    page.click("#film-record-start")
    page.wait_for_url("**/film?run=induction-*")
    page.wait_for_selector("#film[data-ready]")
    assert page.get_attribute("#film-scrub", "max") == "3" and page.evaluate(LINE_AT) == 0
    assert page.evaluate("document.scrollingElement.scrollWidth") <= 390
    assert axe_violations(page, axe) == []
    assert_clean(session)
