"""A class in full flow and the first 30 seconds (issue 34), in Chromium: a phone follower gets
the presenter's enlarged head before the lesson's lazily drawn marked figure is drawn, loses it
when the presenter closes it, and is brought to the presenter's Jacobian row; the home page's
ways in say what each lesson is and how a class starts. The presenter here is the API (its key in
X-Presenter-Key), so what is asserted is the order of things on the follower, never a time."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

from tests.helpers.browser import assert_clean, next_stops, phone_page

LESSON = "backprop-attention"
STOP = 4  # dL/dprobs of layer 1: the Jacobian's step; it marks the contribution to dscores
GRID = "arriving.layers.1.attention.probs"  # the step's first figure: four heads
MARKED = "contribution.layers.1.attention.scores"  # on a phone it lies below the fold: drawn when near


def api(base: str, path: str, body: dict | None = None, key: str | None = None, method: str | None = None) -> dict:
    headers = {"Content-Type": "application/json"} | ({"X-Presenter-Key": key} if key else {})
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, headers=headers, method=method)
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)


@pytest.fixture
def phone(browser, server):
    with phone_page(browser, server) as page_and_errors:
        yield page_and_errors


# Records, each time #enlarge opens or closes, whether the lesson's marked figure had been drawn
# and marked by then, and which lesson stop the panel had finished (data-drawn: its marks are on).
WATCH_HEAD = """figure => {
  window.headSeen = [];
  const dialog = document.getElementById("enlarge");
  new MutationObserver(() => {
    const plot = document.querySelector(`figure.figure-card[data-figure="${figure}"] .plot`);
    window.headSeen.push({open: dialog.open, markedDrawn: Boolean(plot?.calcdata),
                          marks: plot?.dataset.lessonMarks ?? null,
                          stopDrawn: document.getElementById("lesson-panel")?.dataset.drawn});
  }).observe(dialog, {attributes: true, attributeFilter: ["open"]});
}"""


def test_a_phone_gets_the_enlarged_head_before_a_lazy_figure_and_loses_it_with_the_presenter(server, phone):
    page, errors = phone
    lesson = api(server, f"/api/lessons/{LESSON}?lang=en")
    opened = api(
        server, "/api/sessions", {"spec": {"model": "text", "text": "the cat sat on the mat."}, "lesson": LESSON}
    )
    code, key = opened["code"], opened["presenter_key"]
    page.goto(f"/join/{code.lower()}")
    page.wait_for_selector(".walk[data-following='following']")
    page.wait_for_selector("#lesson-panel[data-drawn='0']")
    page.evaluate(WATCH_HEAD, MARKED)

    stop = lesson["steps"][STOP]
    assert [a["figure"] for a in stop["annotations"]] == [MARKED]
    state = {"step": stop["index"], "lesson": LESSON, "lesson_step": STOP, "head": {"figure": GRID, "head": 2}}
    api(server, f"/api/sessions/{code}/state", state, key)
    page.wait_for_selector("#enlarge[open]")
    seen = page.evaluate("window.headSeen")
    # the head first: the stop's marks wait for their figure, which waits for the student
    assert seen[0] == {"open": True, "markedDrawn": False, "marks": None, "stopDrawn": "0"}, seen
    assert page.text_content("#enlarge-title").endswith("head 2"), page.text_content("#enlarge-title")

    api(server, f"/api/sessions/{code}/state", {"head": None}, key)
    page.wait_for_selector("#enlarge:not([open])", state="attached")
    assert page.evaluate("window.headSeen.map((s) => s.open)") == [True, False]

    # the presenter's Jacobian row: the panel, far below on a phone, comes to the student
    api(server, f"/api/sessions/{code}/state", {"jacobian": {"layer": 1, "head": 1, "pos": 9}}, key)
    page.wait_for_selector("#jacobian-heading:has-text('head 1, query position 9')")
    page.wait_for_selector("#jacobian .badge")
    top = page.eval_on_selector("#jacobian", "j => [j.getBoundingClientRect().top, innerHeight]")
    assert 0 <= top[0] < top[1] / 2, top
    # the lesson's mark, drawn once its figure is (the student scrolls to it)
    page.locator(f"figure.figure-card[data-figure='{MARKED}']").scroll_into_view_if_needed()
    page.wait_for_selector(f"figure.figure-card[data-figure='{MARKED}'] .plot[data-lesson-marks]")
    page.wait_for_selector(f"#lesson-panel[data-drawn='{STOP}']")
    api(server, f"/api/sessions/{code}", key=key, method="DELETE")
    assert errors == []


def test_a_lesson_export_asks_its_host_for_no_step_it_left_out(browser, tmp_path):
    """A lesson's exported directory holds its stops only: the page's prefetch of the steps beside
    a stop never reaches the host (a 404 in the console), and a step left out says so at once."""
    from app.export import export
    from tests.helpers.export import LESSON as TOUR
    from tests.helpers.export import StaticServer, settings_with_lesson

    export(lesson=TOUR, out=tmp_path / "tour", settings=settings_with_lesson(tmp_path))
    host = StaticServer(tmp_path / "tour")
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        page = context.new_page()
        missing, errors = [], []
        page.on("response", lambda r: r.status == 404 and missing.append(r.url))
        page.on("console", lambda m: m.type == "error" and errors.append(m.text))
        page.goto(f"{host.base}/index.html")
        page.wait_for_selector("#lesson-panel[data-drawn='0']")
        page.locator("#lesson-panel button", has_text="Next ▶").click()
        page.wait_for_selector("#lesson-panel[data-drawn='1']")
        left_out = page.evaluate(
            """() => import("./static/js/lib/static_source.js").then(({ staticRequest }) =>
                 staticRequest("/api/traces/x/steps/1?seq=0").then(() => 200, (e) => e.status))"""
        )
        assert left_out == 404  # the embedding is stop 0; step 1 is no stop of the tour
        assert missing == [] and errors == [], (missing, errors)
    finally:
        context.close()
        host.stop()


# The first figure-like boxes that stick out: each drawn colour bar past its plot's right edge or
# the screen's, and the folded formula's toggle over its math.
CLIPPED = """() => {
  const out = [];
  for (const plot of document.querySelectorAll("#step .js-plotly-plot")) {
    const edge = Math.min(plot.getBoundingClientRect().right, innerWidth);
    for (const bar of plot.querySelectorAll(".colorbar"))
      if (bar.getBoundingClientRect().right > edge + 1) out.push(`colour bar of ${plot.closest("figure")?.dataset.figure}`);
  }
  const toggle = document.querySelector("#step .rules-toggle")?.getBoundingClientRect();
  const math = document.querySelector("#step .rule.primary .math")?.getBoundingClientRect();
  if (toggle && math && toggle.left < math.right && math.left < toggle.right && toggle.top < math.bottom && math.top < toggle.bottom)
    out.push("the toggle over the formula");
  return out;
}"""
SHOWN = "(s) => [...document.querySelectorAll(s)].filter((n) => n.getClientRects().length > 0).length"


def test_a_lesson_presented_at_1280x720_keeps_one_control_set_and_its_figures_whole(session):
    """Presenter mode on a lesson: one Prev/Next (the lesson's), a button for presenter mode named
    apart from "Present to class"; at each stop no colour bar past the card's edge and the formula's
    toggle beside it; the step's title in the lesson panel when the page scrolled to a marked figure;
    "." blanks the screen (a clicker's black-screen key); the class's code and count in the sticky bar."""
    page = session.page
    page.set_viewport_size({"width": 1280, "height": 720})
    session.goto("/lessons/backprop-attention")
    page.wait_for_selector("#lesson-panel[data-drawn='0']")
    page.keyboard.press("p")
    page.wait_for_selector("body.present")
    assert page.evaluate(SHOWN, "#prev, #next") == 0 and page.evaluate(SHOWN, "#lesson-panel button") >= 2
    assert page.text_content("#present").strip() != page.text_content("#class-present").strip()
    lesson = page.evaluate("fetch('/api/lessons/backprop-attention?lang=en').then((r) => r.json())")
    for k in range(5):
        if k:
            page.keyboard.press("PageDown")
            page.wait_for_selector(f"#lesson-panel[data-drawn='{k}']")
        page.wait_for_timeout(100)  # the width watcher lays a resized plot out again on the next frame
        assert page.evaluate(CLIPPED) == [], k
        assert page.text_content("#lesson-step-title") == lesson["steps"][k]["title"]
        if page.eval_on_selector("#step .step-header", "h => h.getBoundingClientRect().bottom < 0"):
            assert page.locator("#lesson-step-title").is_visible()  # scrolled to its mark: the title still read
    page.keyboard.press(".")
    assert page.locator("#blank-screen").is_visible()
    page.keyboard.press("x")
    assert page.locator("#blank-screen").is_hidden()
    page.keyboard.press("Escape")  # presenter mode off: the class bar's button
    page.click("#class-present:not([disabled])")
    page.wait_for_selector("#class-dialog[open]")
    code = page.text_content("#class-code").strip()
    page.click("#class-dialog-close")
    page.keyboard.press("p")
    mini = page.locator("#class-mini")
    assert mini.is_visible() and code in mini.text_content() and "0 following" in mini.text_content()
    assert page.eval_on_selector("#class-mini", "m => m.getBoundingClientRect().bottom") < 100  # in the sticky bar
    page.click("#class-end")
    page.wait_for_selector("#class-mini", state="detached")
    # the poll legend's numbers: each item's marker inside it, never against the column before
    marker = page.evaluate(
        """() => { const ol = document.createElement("ol"); ol.className = "poll-legend"; ol.append(document.createElement("li"));
                   document.body.append(ol); const p = getComputedStyle(ol.firstChild).listStylePosition; ol.remove(); return p; }"""
    )
    assert marker == "inside"
    assert_clean(session)


def test_large_type_keeps_a_marks_label_inside_its_figure(session):
    page = session.page
    page.set_viewport_size({"width": 1280, "height": 720})
    session.goto("/lessons/forward-in-ten")
    page.wait_for_selector("#lesson-panel[data-drawn='0']")
    page.click("#type-size")
    page.wait_for_selector("html.large-type")
    next_stops(page, 4)
    plot = "figure.figure-card[data-figure='output.layers.1.attention.probs'] .plot"
    inside = page.eval_on_selector(
        plot,
        """p => { const box = p.getBoundingClientRect();
                  return [...p.querySelectorAll(".annotation-text-g")].map((g) => { const r = g.getBoundingClientRect();
                    return r.left >= box.left - 1 && r.right <= box.right + 1 && r.top >= box.top - 1 && r.bottom <= box.bottom + 1; }); }""",
    )
    assert inside and all(inside), inside
    assert_clean(session)


def test_the_quiz_probes_backward_steps_only_and_counts_a_comparison_at_once(session):
    from tests.helpers.browser import ONE_LAYER, quiz_hiding, quiz_truth

    page = session.page
    small = {"text": "the cat sat on the mat.", **ONE_LAYER}
    quiz = quiz_hiding("softmax_missing_sum_term", small)
    session.goto("/walk?" + "&".join(f"{k}={v}" for k, v in {**small, "quiz": quiz, "step": 1}.items()))
    page.wait_for_selector('#step[data-rendered="0"]')
    page.locator(".quiz-tools").wait_for(state="attached")
    assert page.locator(".quiz-probe").count() == 0  # a forward step: no probe on offer
    broken = quiz_truth(session, page.evaluate("window.xt.trace.id"))["broken"]["index"]
    after = broken + 1  # the next backward step: the wrong gradient reaches it from above
    page.evaluate(f"document.querySelector('.cell[data-index=\"{after}\"]').click()")
    page.wait_for_selector(f'#step[data-rendered="{after}"]')
    assert "3 of 3 left" in page.text_content(".quiz-probe")
    page.click(".diff-button")  # the comparison costs a probe: the count says so at once
    page.locator(".diff-figures .figure-card").first.wait_for()
    assert page.locator(".quiz-probe").count() == 0 and "You probed this step" in page.text_content(".quiz-tools")
    page.evaluate(f"document.querySelector('.cell[data-index=\"{after + 1}\"]').click()")
    page.wait_for_selector(f'#step[data-rendered="{after + 1}"]')
    assert "2 of 3 left" in page.text_content(".quiz-probe")
    page.click(".quiz-probe")  # a step further down: ✗, and the page says it may come from above
    page.locator("#step .gradcheck.badge-bad").wait_for()
    assert "from the broken step above" in page.text_content(".probe-note")
    assert_clean(session)


@pytest.mark.every_run
def test_the_first_30_seconds_at_1280x720_and_on_a_phone(session):
    """The home page: Start on the screen at 1280×720 under the ways in; every lesson with its length
    and what it is; how a class starts; nothing wider than a phone."""
    page = session.page
    page.set_viewport_size({"width": 1280, "height": 720})
    session.goto("/?lang=en")
    page.wait_for_selector("#start-form[data-models-loaded]")
    assert page.eval_on_selector("#start", "s => s.getBoundingClientRect().bottom") <= 720
    lessons = page.locator(".home-lesson")
    assert lessons.count() == len(list((Path(__file__).parents[2] / "lessons").glob("*.toml"))) and all(
        " min" in text for text in lessons.all_inner_texts()
    )
    assert page.locator("#home-class-how").is_visible()
    assert page.get_attribute("#f-optimizer option:checked", "value") == "sgd"  # as the hero's walk
    page.set_viewport_size({"width": 390, "height": 844})
    session.goto("/?lang=ru")
    page.wait_for_selector("#start-form[data-models-loaded]")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert page.locator(".home-lesson").first.is_visible() and "остановок" in page.text_content(".home-lessons")
    session.goto("/?lang=en")  # the cookie back to English for the tests after this one
    assert_clean(session)
