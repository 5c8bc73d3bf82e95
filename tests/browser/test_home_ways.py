"""The home page's ways in (issue 25, templates/_home_ways.html): one click reaches a lesson, the
quiz and a trained model's walkthrough, which ends with its update and opens on a figure; the
join form is on the page itself (a code goes to /join/CODE)."""

from __future__ import annotations

import re

from tests.helpers.browser import assert_clean, wait_rendered


def test_the_home_page_reaches_a_lesson_a_class_the_quiz_and_a_trained_model_in_one_click(session):
    page = session.page
    page.set_viewport_size({"width": 1280, "height": 720})
    session.goto("/")
    page.click("#home-lessons a:has-text('Forward in ten steps')")
    page.wait_for_url(re.compile(r"/walk\?.*#lesson=forward-in-ten"))
    page.wait_for_selector("#lesson-panel[data-drawn='0']")

    session.goto("/")
    page.fill("#home-join-code", "zz99zz")
    page.press("#home-join-code", "Enter")  # an unknown code: the join page says so, its form ready
    page.wait_for_url(re.compile(r"/join/ZZ99ZZ$", re.IGNORECASE))
    assert page.locator("form input[name='code']").is_visible()

    session.goto("/")
    page.click("#home-quiz")
    page.wait_for_url(re.compile(r"/walk\?.*quiz=\d+"))
    wait_rendered(session, 0)
    assert page.locator("#buglab.buglab-quiz").count() == 1

    session.goto("/")
    assert page.locator("#home-default-walk").is_visible()
    page.click("#home-default-walk")
    page.wait_for_url(re.compile(r"/walk\?.*optimizer=sgd"))
    wait_rendered(session, 0)
    assert page.evaluate("window.xt.trace.steps.at(-1).phase") == "update"  # it ends with the update
    assert "(checkpoint)" in page.locator(".summary-facts").text_content()  # a model that learned
    top = page.eval_on_selector("#step .figures > .figure-card .plot", "p => p.getBoundingClientRect().top")
    assert top <= 720 - 300 + 1, top  # 300 px of a figure on the first screen, not a form
    session.errors = [e for e in session.errors if "404" not in e]  # the unknown class code
    assert_clean(session)
