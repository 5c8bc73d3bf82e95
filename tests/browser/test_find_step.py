"""The walk page's "Find a step" box (static/js/walk/find.js): words of a step's title, tensor
name or phase go to the first matching step after the one shown; a step number goes there."""

from __future__ import annotations

from tests.helpers.browser import start_walk, step_index, url_step, wait_rendered


def find(session, query: str) -> None:
    session.page.fill("#find-step", query)
    session.page.press("#find-step", "Enter")


def test_find_a_step_by_name_phase_or_number(session):
    start_walk(session)
    wanted = step_index(session, "layers.0.attention.probs", "backward")
    find(session, "attention.probs backward")
    wait_rendered(session, wanted)
    assert url_step(session) == wanted
    find(session, "7")  # a step number: the seventh step
    wait_rendered(session, 6)
    find(session, "no such step here")
    assert url_step(session) == 6  # nothing matched: it stays, and says so
    assert "no step matches" in session.page.locator("#find-step ~ span").text_content()
