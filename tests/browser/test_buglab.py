"""The bug lab in a real browser: turn on a fault from the home form and see the first red
badge at the faulted step; compare faulty and correct gradients; take the quiz. Kept fast:
a 1-layer model, steps reached in the page (a click in the timeline)."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest

from app.buglab.catalogue import description
from tests.helpers.browser import (
    ONE_LAYER,
    assert_clean,
    click_step,
    fill_home,
    quiz_truth,
    shoot,
    step_index,
    steps,
    wait_rendered,
)
from xt_core.lab.faults import CATALOGUE

FAULT = "softmax_missing_sum_term"  # breaks layers.0.attention.probs (backward) of a 1-layer model
QUIZ_QUERY = {"text": "the cat sat on the mat.", **ONE_LAYER}


def reload_at_step(session, index: int) -> None:
    """The permalink of the current page at another step (a reload: the spec is in the URL)."""
    session.page.goto(re.sub(r"step=\d+", f"step={index + 1}", session.page.url))
    wait_rendered(session, index)


def wait_checks_done(session) -> str:
    progress = session.page.locator("#checks-progress")
    progress.filter(has_text=re.compile(r"fail|pass")).wait_for()
    return progress.text_content()


def badge_passed(session) -> bool:
    badge = session.page.locator("#step .gradcheck")
    return "badge-ok" in badge.get_attribute("class")


@pytest.mark.every_run
def test_a_planted_fault_turns_the_first_badge_red_at_its_own_step(session):
    page = session.page
    fill_home(session, "the cat sat on the mat.", **ONE_LAYER)
    page.select_option("#f-faults", FAULT)
    assert description(CATALOGUE[FAULT]) in page.locator("#faults-help").text_content()
    page.click("#start")
    page.wait_for_url(re.compile(rf"/walk\?.*faults={FAULT}.*step=1\b"))
    wait_rendered(session, 0)
    broken = step_index(session, "layers.0.attention.probs", "backward")
    assert f"step {broken + 1}:" in wait_checks_done(session)  # numbered from 1, as the URL
    first = page.locator("#timeline .cell.first-failing")
    assert first.count() == 1 and first.get_attribute("data-index") == str(broken)
    backward_cells = page.locator("#timeline .cell.phase-backward")
    failing = [
        int(c.get_attribute("data-index")) for c in backward_cells.all() if "check-failed" in c.get_attribute("class")
    ]
    assert min(failing) == broken
    shoot(session, "buglab-01-planted-fault-chart", "#buglab")

    click_step(session, broken)
    assert not badge_passed(session)
    assert page.locator(".planted-here").count() == 1
    shoot(session, "buglab-02-faulted-step", "#step")
    page.keyboard.press("ArrowLeft")  # the backward step that ran just before: still right
    wait_rendered(session, broken - 1)
    assert badge_passed(session)
    page.keyboard.press("ArrowRight")
    wait_rendered(session, broken)

    page.click(".diff-button")
    page.locator(".diff-figures .figure-card .js-plotly-plot").first.wait_for()
    assert "this op's backward is the broken one" in page.locator(".diff-verdict").text_content()
    cards = page.locator(".diff-figures .figure-card")
    assert cards.count() == 2  # the gradient arriving (identical), this op's contribution (wrong)
    assert "Identical, bit for bit" in cards.nth(0).locator(".note").text_content()
    shoot(session, "buglab-03-diff-arriving", ".diff-verdict")
    shoot(session, "buglab-04-diff-contribution", ".diff-figures .figure-card >> nth=1")
    assert_clean(session)


def test_the_home_picker_greys_out_faults_the_sizes_rule_out(session):
    page = session.page
    fill_home(session, "abcabc", **{**ONE_LAYER, "n_kv_head": "4", "n_head": "4"})
    gqa = page.locator('#f-faults option[value="gqa_kv_not_summed"]')
    page.wait_for_function(
        "() => document.querySelector('#f-faults option[value=gqa_kv_not_summed]').disabled === true"
    )
    assert "not with these sizes" in gqa.text_content() and "grouped-query" in gqa.get_attribute("data-reason")
    assert page.locator(f'#f-faults option[value="{FAULT}"]').is_enabled()
    assert_clean(session)


@pytest.mark.every_run
def test_the_quiz_hides_its_fault_until_answered(session):
    page = session.page
    session.goto(f"/quiz?{urlencode(QUIZ_QUERY)}")
    page.wait_for_url(re.compile(r"/walk\?.*quiz=\d+.*step=1\b"))
    wait_rendered(session, 0)
    html = page.content()
    for name in CATALOGUE:
        assert name not in html, f"the quiz page names {name!r} before an answer"
    assert page.locator("#checks-panel").is_hidden()  # the chart would give the answer away
    trace_id = page.evaluate("window.xt.trace.id")
    sealed = page.request.get(f"{session.base}/api/traces/{trace_id}/checks?wait=true")
    assert sealed.status == 403  # the server keeps the verdicts too
    truth = quiz_truth(session, trace_id)  # what another learner who answered is told
    broken = truth["broken"]["index"]
    assert truth["fault"]["name"] in CATALOGUE
    backward = [s["index"] for s in steps(session) if s["phase"] == "backward"]
    wrong = next(i for i in backward if i != broken)

    click_step(session, wrong)
    page.click(".quiz-answer")
    verdict = page.locator("#step .quiz-verdict")
    verdict.wait_for()
    assert "Not quite" in verdict.text_content() and "wrong" in verdict.get_attribute("class")
    revealed = page.locator("#quiz-result .fault-name").text_content()
    assert revealed in CATALOGUE
    assert CATALOGUE[revealed].faulty in page.locator("#quiz-result .line-faulty").text_content()
    assert page.locator("#checks-panel").is_visible()
    shoot(session, "buglab-05-quiz-wrong-answer", "#quiz-result")

    page.click(f"#step .quiz-verdict >> text=Go to step {broken + 1}")
    wait_rendered(session, broken)
    assert not badge_passed(session) and page.locator(".quiz-answer").count() == 0
    # A reload remembers this tab's answer: the verdict again, no second guess, not even while
    # the remembered answer is posted again (held back here until the step is drawn).
    held = []
    page.route(re.compile(r".*/quiz/answer(\?.*)?$"), lambda route: held.append(route))  # ?lang= rides along
    reload_at_step(session, broken)
    assert len(held) == 1 and page.locator(".quiz-answer").count() == 0
    held[0].continue_()
    page.locator("#quiz-result .quiz-verdict.wrong").wait_for()
    assert page.locator(".quiz-answer").count() == 0
    page.locator(".diff-button").wait_for()  # once revealed, the diff is on offer
    shoot(session, "buglab-06-quiz-revealed-broken-step", "#step")
    assert_clean(session)
