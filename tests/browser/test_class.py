"""The classroom in two browsers (two Chromium contexts: two students' machines, no shared
storage): the presenter (1280×720) presents a bug-lab lesson, a student on a 390×844 phone joins
with the code and follows; a clicker's Page Down goes to the lesson's next stop; the follower's
lesson line covers no figure; the follower answers the poll, which chose nothing for them, and
the answer shows in the presenter's histogram; the counter, the URL, the poll and the reveal say
one step number; the follower cannot move the class; End class says "Class ended" on the phone
within a second, and a later key of the presenter moves nobody.

Screenshots land in test-artifacts/: a lesson step with its annotation, the join dialog, the
presenter's poll histogram after the reveal (1280×720), the phone's lesson stop, its reveal and
its page after the class ended (390×844)."""

from __future__ import annotations

import re

import pytest

from tests.helpers.browser import ARTIFACTS, assert_clean, axe_violations, next_stops, open_step, open_walk, phone_page
from xt_core.lab.faults import CATALOGUE

VIEWPORT = {"width": 1280, "height": 720}


@pytest.fixture
def follower(browser, server):
    """A second machine, a phone: a fresh context of its own (no storage shared with the presenter's)."""
    with phone_page(browser, server) as phone:
        yield phone


@pytest.fixture
def presenter_session(session):
    """The presenter's laptop: the run's browser profile (Plotly.js compiled once for the run)."""
    session.page.set_viewport_size(VIEWPORT)
    session.page.set_default_timeout(30_000)
    return session


def _step(page) -> int:
    return page.evaluate("window.xt.index")


def _rendered(page, index: int) -> None:
    page.wait_for_selector(f"#step[data-rendered='{index}']")


# The lesson and class cards that cut a figure card's box (page coordinates: the page scrolls).
COVERED = """() => {
  const box = (n) => { const r = n.getBoundingClientRect(); return [r.left, r.top + scrollY, r.right, r.bottom + scrollY]; };
  const cut = (a, b) => a[0] < b[2] - 1 && b[0] < a[2] - 1 && a[1] < b[3] - 1 && b[1] < a[3] - 1;
  const cards = [...document.querySelectorAll("#lesson-panel, #class-bar, #poll-panel")].filter((n) => n.offsetParent !== null);
  const figures = [...document.querySelectorAll("#step .figure-card")];
  return cards.flatMap((c) => figures.filter((f) => cut(box(c), box(f))).map((f) => `${c.id} over ${f.dataset.figure}`));
}"""
# What a person reads as the step's number: the counter and the URL's step=.
NUMBERS = """() => [document.getElementById("counter").textContent.match(/step (\\d+)/)[1],
  new URL(location.href).searchParams.get("step")]"""


# Where the step's title, formula and first figure are on screen (px from the top; the bar: the
# bottom of the sticky navigation bar).
FIRST_FIGURE = """() => {
  const box = (s) => document.querySelector(s).getBoundingClientRect();
  return {bar: box(".navbar").bottom, title: box("#step .step-header").top,
          formula: box("#step .rule.primary").bottom, figure: box("#step .figures > .figure-card .plot").top};
}"""
FIGURE_TOP = 360  # px at 1280×720: beside the lesson's panel it was 420-500 (issue 34)


def _figure_high(presenter, stop: int) -> None:
    """The stop's first figure starts high on the screen, under its title and formula."""
    seen = presenter.evaluate(FIRST_FIGURE)
    assert seen["bar"] - 1 <= seen["title"] and seen["formula"] <= seen["figure"] <= FIGURE_TOP, (stop, seen)


def _start_class(presenter_session) -> tuple[str, int]:
    """The presenter plays find-the-bug, steps by a clicker's keys, presents: (code, step index).
    Each stop (outside presenter mode) shows its title, its formula and, high, its first figure."""
    presenter = presenter_session.page
    presenter_session.goto("/lessons/find-the-bug")
    presenter.wait_for_selector("#lesson-panel[data-drawn='0']")
    _figure_high(presenter, 0)
    first = _step(presenter)
    presenter.keyboard.press("PageDown")  # a clicker: the lesson's next stop, not the next op
    presenter.wait_for_selector("#lesson-panel[data-drawn='1']")
    assert _step(presenter) != first + 1 or presenter.locator(".lesson-off-path").is_hidden()
    _figure_high(presenter, 1)  # a quiz's tools follow the figure
    assert presenter.locator("#step .figures > .figure-card + .buglab-step").count() == 1
    presenter.keyboard.press("PageUp")
    presenter.wait_for_selector("#lesson-panel[data-drawn='0']")
    assert _step(presenter) == first
    presenter.click("#class-present:not([disabled])")
    presenter.wait_for_selector("#class-dialog[open]")
    code = presenter.text_content("#class-code").strip()
    assert len(code) == 10  # app.sessions.codes.CODE_LENGTH: the QR code carries it
    assert presenter.locator("#class-qr").evaluate("img => img.decode().then(() => img.naturalWidth)") > 0
    presenter.screenshot(path=str(_artifact("class-join-dialog")))
    # this server listens on 127.0.0.1: the dialog says students cannot open that address
    assert presenter.locator("#class-loopback").is_visible()
    reachable = "m => [m.isLoopback('http://class-room.local:8000/join/ABC'), m.isLoopback('http://[::1]:8000/')]"
    assert presenter.evaluate(f"import('/static/js/class/present.js').then({reachable})") == [False, True]
    presenter.click("#class-dialog-close")
    return code, first


def _poll(presenter, follower) -> None:
    """The bug hunt: nothing chosen for the student; the number they pick is the one the
    histogram, its legend and the reveal say, and the counter and URL say it too."""
    presenter.click("#poll-panel button[data-action='open']")
    follower.wait_for_selector("#poll-send")
    assert follower.eval_on_selector("#poll-choice", "s => s.value") == ""  # nothing chosen for the student
    assert follower.eval_on_selector("#poll-choice", "s => s.scrollWidth <= s.parentElement.clientWidth")
    follower.select_option("#poll-choice", index=3)
    answer = int(follower.eval_on_selector("#poll-choice", "s => s.value"))
    picked = follower.eval_on_selector("#poll-choice", "s => s.selectedOptions[0].textContent")
    assert picked.startswith(f"step {answer + 1}: "), picked
    follower.click("#poll-send")
    follower.wait_for_selector(f".poll-feedback:has-text('Your answer: step {answer + 1}.')")
    presenter.wait_for_selector(f".poll-column[data-index='{answer}'][data-count='1']")
    assert presenter.text_content(f".poll-column[data-index='{answer}'] .poll-step") == str(answer + 1)
    assert presenter.text_content(f".poll-legend li[data-index='{answer}']").startswith(f"step {answer + 1}: ")
    presenter.click("#poll-panel button[data-action='reveal']")
    presenter.wait_for_selector(".poll-column.broken")
    follower.wait_for_selector(".poll-reveal")
    broken = int(presenter.get_attribute(".poll-column.broken", "data-index"))
    revealed = follower.text_content(".poll-reveal")  # the class's own hidden fault, named at last
    assert "The bug: " in revealed and any(f"The bug: {name} " in revealed for name in CATALOGUE)
    assert f"Broken step: step {broken + 1}: " in revealed, revealed
    presenter.eval_on_selector("#poll-panel", "p => p.scrollIntoView()")
    presenter.screenshot(path=str(_artifact("class-poll-histogram")))
    follower.eval_on_selector(".poll-reveal", "p => p.scrollIntoView({block: 'center'})")
    follower.screenshot(path=str(_artifact("class-phone-reveal")))
    follower.click(".poll-reveal button:has-text('Go to the broken step')")  # the follower looks on its own
    _rendered(follower, broken)
    assert follower.evaluate(NUMBERS) == [str(broken + 1)] * 2
    if follower.locator("#class-back").is_visible():  # detached, unless the class stood on it
        follower.click("#class-back")


def _end(presenter, follower, code: str) -> None:
    """End class: "Class ended" on the phone (how soon is benchmarks/follower_lag.py's); a later
    key moves nobody."""
    at = _step(follower)
    presenter.click("#class-end")
    follower.wait_for_selector("#class-status:has-text('Class ended')")
    assert follower.get_attribute("#walk", "data-following") is None
    assert presenter.text_content("#class-status").startswith(f"Class {code} ended")
    presenter.keyboard.press("ArrowRight")  # the lesson's next stop on the presenter's screen only
    presenter.wait_for_timeout(600)
    assert _step(follower) == at and "Class ended" in follower.text_content("#class-status")
    gone = "c => fetch(`/api/sessions/${c}`).then((r) => r.status)"
    assert follower.evaluate(gone, code) == 404
    assert follower.locator("#class-ended-notice").is_visible()  # where the student looks
    follower.screenshot(path=str(_artifact("class-phone-ended")))


def test_a_phone_follows_answers_reads_one_numbering_and_sees_the_class_end(presenter_session, follower, axe):
    presenter, (follower, errors) = presenter_session.page, follower
    code, first = _start_class(presenter_session)

    follower.goto(f"/join/{code.lower()}")
    follower.wait_for_selector(".walk[data-following='following']")
    _rendered(follower, first)
    assert "presenter" not in follower.url and "key" not in follower.url
    # links to another page would leave the class: a follower has none, the presenter keeps them
    assert follower.locator(".edit-spec").is_hidden() and presenter.locator(".edit-spec").is_visible()
    presenter.wait_for_selector("#class-followers[data-count='1']")
    # the phone: the lesson is one line above the step, over no figure; the page opens at it
    follower.wait_for_selector("#lesson-panel")
    assert follower.eval_on_selector("#lesson-panel", "p => p.getBoundingClientRect().height") < 70
    assert follower.evaluate(COVERED) == []
    title = follower.eval_on_selector("#step-title", "t => [t.getBoundingClientRect().top, innerHeight]")
    assert 0 < title[0] < title[1] / 2, title
    follower.screenshot(path=str(_artifact("class-phone-lesson-stop")))

    # the presenter presses a clicker's Page Down: the follower's page shows the same stop
    presenter.keyboard.press("PageDown")
    presenter.wait_for_selector("#lesson-panel[data-lesson-step='1']")
    follower.wait_for_selector("#lesson-panel[data-lesson-step='1']")
    at = _step(presenter)
    _rendered(follower, at)
    assert presenter.evaluate(NUMBERS) == follower.evaluate(NUMBERS) == [str(at + 1)] * 2  # one numbering
    assert follower.evaluate(COVERED) == []

    # a follower cannot move the class: without the key the server refuses, with the page's
    # own navigation it only detaches itself
    refused = follower.evaluate(
        """code => fetch(`/api/sessions/${code}/state`, {method: 'POST', headers: {'Content-Type': 'application/json'},
               body: JSON.stringify({step: 0})}).then(r => r.status)""",
        code,
    )
    assert refused == 403
    follower.click("#class-detach")
    follower.wait_for_selector(".walk[data-following='detached']")
    follower.wait_for_timeout(300)
    assert _step(presenter) == at
    follower.click("#class-back")
    _rendered(follower, at)

    _poll(presenter, follower)
    _rendered(follower, _step(presenter))
    assert axe_violations(follower, axe) == []
    _end(presenter, follower, code)
    assert [e for e in errors if not re.search(r"40[34]", e)] == []  # the refused move, the ended class
    assert_clean(presenter_session)


def test_the_presenter_sends_the_softmax_its_jacobian_panel_is_of(presenter_session):
    """The class follows the row the presenter shows: of the output softmax (layer "output") or of
    one layer's attention softmax (that layer), as the step's Jacobian panel says."""
    page = presenter_session.page
    open_walk(presenter_session)
    page.click("#context-more")  # the class button is folded with the tokens
    page.click("#class-present:not([disabled])")
    page.wait_for_selector("#class-dialog[open]")
    code = page.text_content("#class-code").strip()
    page.click("#class-dialog-close")
    state = "code => fetch(`/api/sessions/${code}`).then(r => r.json()).then(s => s.jacobian)"
    for name, layer in (("output_probs", "output"), ("layers.0.attention.probs", 0)):
        open_step(presenter_session, name, "backward")
        page.click("#jacobian .jacobian-controls button")
        page.locator("#jacobian .badge-ok").wait_for()
        sent = None
        for _ in range(50):  # the state goes to the server as the panel loads its row
            sent = page.evaluate(state, code)
            if sent and sent["layer"] == layer:
                break
            page.wait_for_timeout(100)
        assert sent is not None and sent["layer"] == layer, (name, sent)
    assert_clean(presenter_session)


def test_a_lesson_step_draws_its_annotation(presenter_session):
    page = presenter_session.page
    presenter_session.goto("/lessons/forward-in-ten")
    page.wait_for_selector("#lesson-panel[data-drawn='0']")
    next_stops(page, 4)
    plot = "figure.figure-card[data-figure='output.layers.1.attention.probs'] .plot"
    marks = page.eval_on_selector(plot, "p => p.layout.shapes.filter(s => s.name === 'lesson-mark').length")
    assert marks == 4  # the stripe on each of the four heads
    labels = page.eval_on_selector(
        plot, "p => p.layout.annotations.filter(a => a.name === 'lesson-mark').map(a => a.text)"
    )
    assert labels == ["the induction stripe"]
    assert "induction stripe" in page.text_content("#lesson-takeaway")
    page.screenshot(path=str(_artifact("class-lesson-step")))
    assert_clean(presenter_session)
    # in Russian: the same stops, their words and marks from the Russian catalogue
    presenter_session.goto("/lessons/forward-in-ten?lang=ru")
    page.wait_for_selector("#lesson-panel[data-drawn='0']")
    assert (
        page.text_content("#lesson-takeaway") == "Каждая буква становится вектором — своей строкой таблицы эмбеддингов."
    )
    plot = "figure.figure-card[data-figure='output.embedding'] .plot"
    labels = page.eval_on_selector(
        plot, "p => p.layout.annotations.filter(a => a.name === 'lesson-mark').map(a => a.text)"
    )
    assert labels == ["x", "снова x: та же строка"]
    presenter_session.goto("/?lang=en")  # the cookie back to English for the tests after this one


SESSION = """() => fetch('/api/sessions', {method: 'POST', headers: {'Content-Type': 'application/json'},
  body: JSON.stringify({spec: window.xt.trace.spec})}).then((r) => r.json()).then((s) => s.code)"""
ENDED = "event: ended\ndata: {}\n\n"  # what the stream sends once the session expired


@pytest.mark.every_run
def test_a_follower_gets_the_page_back_when_the_class_ends_or_cannot_be_followed(session):
    """The page's context folded (as it opens): the class bar still says what happened, and the
    links a follower lacks (another model or text, training, the bug lab) come back."""
    page = session.page
    open_walk(session)
    code = page.evaluate(SESSION)
    stream = "**/api/sessions/*/events"
    page.route(stream, lambda route: route.fulfill(headers={"Content-Type": "text/event-stream"}, body=ENDED))
    session.goto(f"/join/{code}")
    page.wait_for_selector(f"#class-status:has-text('Class ended (class {code})')")
    assert page.get_attribute("#context-more", "aria-expanded") == "false"
    assert page.locator("#class-status").is_visible()
    assert page.locator(".edit-spec").is_visible() and page.locator("#class-present").is_visible()
    assert page.get_attribute("#walk", "data-following") is None
    # a step moved after the end leaves the message alone, and a reload follows nothing
    page.keyboard.press("ArrowRight")
    page.wait_for_timeout(300)
    assert f"Class ended (class {code})" in page.text_content("#class-status")
    assert page.get_attribute("#walk", "data-following") is None and "follow=" not in page.evaluate("location.hash")
    page.unroute(stream)

    # an unknown code (it ended before the page opened): the same, with the reason
    page.evaluate("location.hash = 'follow=ZZZZZZ'")
    page.reload()
    page.wait_for_selector("#class-status:has-text('Cannot follow class ZZZZZZ')")
    assert page.locator("#class-status").is_visible() and page.locator(".edit-spec").is_visible()
    session.errors = [e for e in session.errors if "404" not in e]  # the unknown code's lookup
    assert_clean(session)


@pytest.mark.every_run
def test_present_to_class_is_one_keypress_and_a_few_tabs_away(session):
    """Tab goes the way the page is drawn: "Find a step", the toggle, what it unfolded, the class."""
    page = session.page
    open_walk(session)
    page.wait_for_selector("#class-present:not([disabled])", state="attached")
    assert page.locator("#class-present").is_hidden()  # folded with the tokens
    page.focus("#find-step")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "context-more"
    page.keyboard.press("Enter")
    assert page.get_attribute("#context-more", "aria-expanded") == "true"
    for _ in range(12):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == "class-present":
            break
    assert page.evaluate("document.activeElement.id") == "class-present"
    page.focus("#context-more")
    page.keyboard.press("Space")
    assert page.get_attribute("#context-more", "aria-expanded") == "false"
    assert page.locator("#class-present").is_hidden()
    assert_clean(session)


def _artifact(name: str):
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS / f"{name}.png"


def test_a_run_lesson_plays_on_the_film_and_on_its_steps_walk_pages(session, axe):
    """Watch an induction head form (docs/lessons.md, "A lesson about a recorded run"): its film stops
    scrub the film beside the lesson's panel, a clicker's Page Down goes on to a run step's walk page
    and Prev comes back to the film; at 1280×720 and at 390×844 nothing overflows; axe finds nothing."""
    page = session.page
    page.set_viewport_size(VIEWPORT)
    session.goto("/lessons/induction-head")  # the first stop's page: the film at step 0
    page.wait_for_selector("#lesson-panel[data-drawn='0']")
    assert page.input_value("#film-scrub") == "0" and "stop 1 of 11" in page.text_content(".lesson-position")
    page.keyboard.press("PageDown")  # a clicker: the next stop (not a twentieth of the run)
    page.wait_for_selector("#lesson-panel[data-drawn='1']")
    assert page.input_value("#film-scrub") == "400" and "#lesson=induction-head&stop=1" in page.url
    assert "from step 100 to step 665" in page.text_content(".lesson-narration")
    marked = "document.getElementById('film-plot').data.filter((t) => t.meta === 'lesson-mark').length"
    assert page.evaluate(marked) == 3  # the plateau shaded across the film's three panels
    assert axe_violations(page, axe) == []
    page.keyboard.press("PageDown")  # step 500's walkthrough, at layer 0's attention
    page.wait_for_selector("#lesson-panel[data-drawn='2']")
    assert "run_step=500" in page.url and "Checked against the run induction" in page.text_content(".lesson-claims")
    page.set_viewport_size({"width": 390, "height": 844})
    page.click("#lesson-panel .lesson-controls button >> nth=0")  # ◀: back to the film, at step 400
    page.wait_for_selector("#lesson-panel[data-drawn='1']")
    assert page.input_value("#film-scrub") == "400"
    assert page.evaluate("document.scrollingElement.scrollWidth") <= 390
    assert_clean(session)
