"""The classroom in two browsers (two Chromium contexts: two students' machines, no shared
storage): the presenter presents a bug-lab lesson, the follower joins with the code and follows;
the presenter presses → and the follower's page shows the same step; the follower answers the
poll and the answer shows in the presenter's histogram; the follower cannot move the class.

Screenshots (1280×720) land in test-artifacts/: a lesson step with its annotation, the join
dialog, the presenter's poll histogram after the reveal."""

from __future__ import annotations

import pytest

from tests.helpers.browser import ARTIFACTS, assert_clean, open_step, open_walk
from xt_core.lab.faults import CATALOGUE

VIEWPORT = {"width": 1280, "height": 720}


@pytest.fixture
def follower(browser, server):
    """A second machine: a fresh context of its own (no storage shared with the presenter's)."""
    context = browser.new_context(viewport=VIEWPORT, base_url=server)
    page = context.new_page()
    page.set_default_timeout(30_000)
    errors = []
    page.on("pageerror", lambda error: errors.append(f"pageerror: {error}"))
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    yield page, errors
    context.close()


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


def test_a_follower_follows_answers_and_cannot_move_the_class(presenter_session, follower):
    presenter, (follower, errors) = presenter_session.page, follower
    presenter_session.goto("/lessons/find-the-bug")
    presenter.wait_for_selector("#lesson-panel[data-drawn='0']")
    first = _step(presenter)
    presenter.click("#class-present:not([disabled])")
    presenter.wait_for_selector("#class-dialog[open]")
    code = presenter.text_content("#class-code").strip()
    assert len(code) == 6
    assert presenter.locator("#class-qr").evaluate("img => img.decode().then(() => img.naturalWidth)") > 0
    presenter.screenshot(path=str(_artifact("class-join-dialog")))
    # this server listens on 127.0.0.1: the dialog says students cannot open that address
    assert presenter.locator("#class-loopback").is_visible()
    reachable = "m => [m.isLoopback('http://class-room.local:8000/join/ABC'), m.isLoopback('http://[::1]:8000/')]"
    assert presenter.evaluate(f"import('/static/js/class/present.js').then({reachable})") == [False, True]
    presenter.click("#class-dialog-close")

    follower.goto(f"/join/{code.lower()}")
    follower.wait_for_selector(".walk[data-following='following']")
    _rendered(follower, first)
    assert "presenter" not in follower.url and "key" not in follower.url
    # links to another page would leave the class: a follower has none, the presenter keeps them
    assert follower.locator(".edit-spec").is_hidden() and presenter.locator(".edit-spec").is_visible()
    presenter.wait_for_selector("#class-followers[data-count='1']")

    # the presenter presses → : the follower's page shows the same step
    presenter.keyboard.press("ArrowRight")
    _rendered(presenter, first + 1)
    _rendered(follower, first + 1)
    # the lesson's Next moves the follower's lesson panel too
    presenter.click("#lesson-panel button:has-text('Next')")
    follower.wait_for_selector("#lesson-panel[data-lesson-step='1']")

    # a follower cannot move the class: without the key the server refuses, with the page's
    # own navigation it only detaches itself
    refused = follower.evaluate(
        """code => fetch(`/api/sessions/${code}/state`, {method: 'POST', headers: {'Content-Type': 'application/json'},
               body: JSON.stringify({step: 0})}).then(r => r.status)""",
        code,
    )
    assert refused == 403
    at = _step(presenter)
    follower.keyboard.press("ArrowRight")
    follower.wait_for_selector(".walk[data-following='detached']")
    follower.wait_for_timeout(300)
    assert _step(presenter) == at
    follower.click("#class-back")
    _rendered(follower, at)

    # the bug hunt: the presenter opens the poll, the follower answers, the histogram shows it
    presenter.click("#poll-panel button[data-action='open']")
    follower.wait_for_selector("#poll-send")
    assert follower.eval_on_selector("#poll-choice", "s => s.value") == ""  # nothing chosen for the student
    follower.select_option("#poll-choice", index=1)
    answer = int(follower.eval_on_selector("#poll-choice", "s => s.value"))
    follower.click("#poll-send")
    presenter.wait_for_selector(f".poll-column[data-index='{answer}'][data-count='1']")
    presenter.click("#poll-panel button[data-action='reveal']")
    presenter.wait_for_selector(".poll-column.broken")
    follower.wait_for_selector(".poll-reveal")
    presenter.eval_on_selector("#poll-panel", "p => p.scrollIntoView()")
    presenter.screenshot(path=str(_artifact("class-poll-histogram")))
    revealed = follower.text_content(".poll-reveal")  # the class's own hidden fault, named at last
    assert "The bug: " in revealed and any(f"The bug: {name} " in revealed for name in CATALOGUE)
    assert [e for e in errors if "403" not in e] == []  # the refused move logs its 403, nothing else
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
    for k in range(1, 5):
        page.click("#lesson-panel button:has-text('Next')")
        page.wait_for_selector(f"#lesson-panel[data-drawn='{k}']")
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


SESSION = """() => fetch('/api/sessions', {method: 'POST', headers: {'Content-Type': 'application/json'},
  body: JSON.stringify({spec: window.xt.trace.spec})}).then((r) => r.json()).then((s) => s.code)"""
ENDED = "event: ended\ndata: {}\n\n"  # what the stream sends once the session expired


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
