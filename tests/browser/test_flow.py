"""A class in full flow and the first 30 seconds (issue 34), in Chromium: a phone follower gets
the presenter's enlarged head before the lesson's lazily drawn marked figure is drawn, loses it
when the presenter closes it, and is brought to the presenter's Jacobian row; the home page's
ways in say what each lesson is and how a class starts. The presenter here is the API (its key in
X-Presenter-Key), so what is asserted is the order of things on the follower, never a time."""

from __future__ import annotations

import json
import urllib.request

import pytest

PHONE = {"width": 390, "height": 844}
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
    context = browser.new_context(viewport=PHONE, base_url=server, has_touch=True)
    page = context.new_page()
    page.set_default_timeout(30_000)
    errors = []
    page.on("pageerror", lambda error: errors.append(f"pageerror: {error}"))
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    yield page, errors
    context.close()


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
