"""The walk page's "Find a step" box (static/js/walk/find.js): words of a step's title, tensor
name or phase go to the first matching step after the one shown, a number among words being the
layer; a bare number is the step of that number (from 1, as the counter and the URL count); a
query that finds nothing says so next to the box."""

from __future__ import annotations

from tests.helpers.browser import open_walk, start_walk, step_index, url_step, wait_rendered

TOY = {"model": "text"}  # the 2-layer demo: layer 1's steps sit at indices holding a "1"


def find(session, query: str) -> None:
    session.page.fill("#find-step", query)
    session.page.press("#find-step", "Enter")


def test_find_a_step_by_name_phase_or_number(session):
    start_walk(session)
    wanted = step_index(session, "layers.0.attention.probs", "backward")
    find(session, "attention.probs backward")
    wait_rendered(session, wanted)
    assert url_step(session) == wanted
    find(session, "7")  # a step number, counted from 1 as the counter counts: index 6
    wait_rendered(session, 6)
    find(session, "no such step here")
    assert url_step(session) == 6  # nothing matched: it stays, and says so
    assert "No step matches" in session.page.locator("#find-status").text_content()


def test_a_number_among_words_is_the_layer_and_a_bare_number_the_index(session):
    page = session.page
    open_walk(session, "the cat sat on the mat.", **TOY)
    probs = step_index(session, "layers.1.attention.probs", "forward")
    find(session, "layer 1 probs")  # not layer 0's softmax at an index holding a "1"
    wait_rendered(session, probs)
    find(session, "1 softmax backward")
    wait_rendered(session, step_index(session, "layers.1.attention.probs", "backward"))
    find(session, "31")
    wait_rendered(session, 30)
    assert url_step(session) == 30 and page.locator("#counter").text_content().startswith("step 31 of")
    find(session, "zzz")
    status = page.locator("#find-status")
    assert status.is_visible() and "No step matches “zzz”" in status.text_content()
    assert status.get_attribute("aria-live") == "polite" and url_step(session) == 30
    find(session, "5000")
    assert "No step 5000" in status.text_content()
