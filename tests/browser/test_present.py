"""The walk page as a class sees it (issue 12): presenter mode fits every kind of step of the default
walkthrough on a 1280×720 projector, formulas never overflow (Large type too), narrow screens
keep the diagram off the content, the quiz gives no verdict before the answer, Plotly's
toolbar works offline and stays out of the tab order, and axe-core finds nothing.

Kept fast: one page load per scenario, steps walked with the keyboard. axe-core comes from
node_modules (package.json devDependencies; `npm ci`), injected into the page by the test only."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.helpers.browser import (
    ONE_LAYER,
    assert_clean,
    axe_violations,
    click_step,
    quiz_hiding,
    quiz_truth,
    steps,
    wait_rendered,
)
from xt_core.lab.faults import CATALOGUE

# The home page's default: the first demo model with its first example text.
DEFAULT_WALK = {
    "model": "induction",
    "tokenizer": "char",
    "text": "xkqvbmxkqvbmxkqvbmxkqvbm",
    "seed": "0",
    "dtype": "float32",
}
SMALL = {"text": "the cat sat on the mat.", **ONE_LAYER}
# The quiz the tests open hides the attention softmax's fault: the step whose Jacobian panel,
# sealed, must not set J·dL/dp beside the recorded gradient.
QUIZ_SEED = quiz_hiding("softmax_missing_sum_term", SMALL)

# Which of title, formula and first figure lie outside the viewport; formula boxes that
# overflow; first-figure texts under 14 px.
MEASURE = """() => {
  const outside = (node) => {
    if (!node) return "missing";
    const r = node.getBoundingClientRect();
    const inside = r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth;
    return inside ? null : [Math.round(r.top), Math.round(r.bottom)];
  };
  const out = {};
  const boxes = {
    title: document.querySelector("#step-title"),
    formula: document.querySelector("#step .rule.primary"),
    // the first figure's title and plot (issue 25: its note, numbers and download follow the
    // plot and may go below the screen, as may its head buttons when the room is short)
    figure_title: document.querySelector("#step .figures > .figure-card .figure-title"),
    figure: document.querySelector("#step .figures > .figure-card .plot"),
  };
  for (const [name, node] of Object.entries(boxes)) {
    const where = outside(node);
    if (where && node) out[name] = where;
    else if (!node && name !== "formula") out[name] = "missing"; // a step without a formula has none to fit
  }
  const over = [...document.querySelectorAll("#step .math")].filter((m) => m.scrollWidth > m.clientWidth);
  if (over.length) out.overflowing = over.map((m) => m.title.slice(0, 60));
  const texts = [...document.querySelectorAll("#step .figures > .figure-card:first-child .main-svg text")];
  const small = texts.map((t) => parseFloat(getComputedStyle(t).fontSize)).filter((size) => size < 14);
  if (small.length) out.small_text = small;
  const step = new URL(location.href).searchParams.get("step");
  const counter = document.getElementById("counter").textContent;
  const formulas = [...document.querySelectorAll("#step .math")].map((m) => m.title).join(" | ");
  const drawn = {
    title: document.getElementById("step-title").textContent,
    cell: document.querySelector(".cell.current")?.dataset.index,
    plots: document.querySelectorAll("#step .js-plotly-plot").length,
    badges: document.querySelectorAll(".gradcheck").length,
  };
  return { problems: out, step, counter, formulas, drawn };
}"""
OVERFLOWING = "() => [...document.querySelectorAll('#step .math')].filter((m) => m.scrollWidth > m.clientWidth).length"


def walk_url(spec: dict, step: int = 0, **view: str) -> str:
    return f"/walk?{urlencode({**spec, 'step': step + 1, **view})}"


def wait_shown(session, index: int) -> None:
    """The step's text and formulas are laid out (its figures may still be drawing)."""
    session.page.wait_for_selector(f'#step[data-shown="{index}"]')


def intersects(a: dict, b: dict) -> bool:
    """Two bounding boxes share more than an edge."""
    across = a["x"] < b["x"] + b["width"] - 1 and b["x"] < a["x"] + a["width"] - 1
    down = a["y"] < b["y"] + b["height"] - 1 and b["y"] < a["y"] + a["height"] - 1
    return across and down


def test_presenter_mode_fits_every_kind_of_step_and_formulas_never_overflow(session):
    """Every kind of step at 1280×720 in presenter mode, and Large type on every pair of rules (a
    browser scenario: `make test-long`)."""
    page = session.page
    page.set_viewport_size({"width": 1280, "height": 720})
    session.goto(walk_url(DEFAULT_WALK, present="1"))
    wait_rendered(session, 0)
    assert page.locator("body.present").count() == 1
    assert page.locator("#present").get_attribute("aria-pressed") == "true"
    assert page.locator(".summary").is_hidden() and page.locator("#training-bar").is_hidden()
    all_steps = steps(session)
    assert len(all_steps) == 84
    # Every kind of step: all but layer 1's, whose ops, titles (but the layer's number), formulas
    # and figures are layer 0's again; its softmax backward (the induction head's) for a picture.
    softmax_backward = step_of(all_steps, "layers.1.attention.probs", "backward")
    swept = [s for s in all_steps if not s["name"].startswith("layers.1.") or s["index"] == softmax_backward]
    assert {kind(s) for s in swept} == {kind(s) for s in all_steps}
    shots = {
        0: "present-01-embedding",
        step_of(all_steps, "layers.0.attention.probs", "forward"): "present-02-attention-probabilities",
        step_of(all_steps, "loss", "loss"): "present-04-loss",
    }
    problems, formulas = sweep(session, swept, shots, jacobian_at=softmax_backward)
    assert not problems, f"at 1280×720 in presenter mode: {problems}"
    page.keyboard.press("Shift+Space")
    wait_rendered(session, 82)

    page.keyboard.press("Escape")  # leaves presenter mode; the summary is back
    assert page.locator("body.present").count() == 0 and "present=" not in page.url
    assert page.locator(".summary").is_visible()
    page.keyboard.press("p")
    assert page.locator("body.present").count() == 1 and "present=1" in page.url
    assert page.locator("#class-bar").is_hidden()  # idle: no lesson, no session
    page.click("#context-toggle")  # everything presenter mode hid is one toggle away
    assert page.locator(".summary").is_visible() and page.locator("#training-bar").is_visible()
    assert page.locator("#class-bar").is_visible()
    page.keyboard.press("Escape")

    # Large type, outside presenter mode (both rules shown once unfolded, the formulas' boxes
    # narrowest): every pair of rules the walkthrough showed, on the first step that showed it.
    page.click("#type-size")
    assert len(formulas) >= 10, formulas
    overflowing = {}
    for index in formulas.values():
        page.locator(f'#timeline .cell[data-index="{index}"]').click()
        wait_shown(session, index)
        page.click("#step .rules-toggle")
        page.wait_for_function(
            "() => [...document.querySelectorAll('#step .rule .math')].every((m) => m.clientWidth > 0)"
        )
        if count := page.evaluate(OVERFLOWING):
            overflowing[index] = count
    assert not overflowing, f"formula boxes wider than their box with Large type: {overflowing}"
    assert_clean(session)


def kind(step: dict) -> tuple[str, str]:
    """A step's op and direction, whatever its layer."""
    return re.sub(r"^layers\.\d+\.", "layers.L.", step["name"]), step["phase"]


def sweep(session, swept: list[dict], shots: dict[int, str], jacobian_at: int) -> tuple[dict, dict]:
    """Visits the steps in order (the arrow keys or Space to the next one, a click in the timeline
    past a gap) in presenter mode; checks each draws with its title, cell and badge; `shots` are
    screenshots by step, `jacobian_at` the step whose Jacobian panel is shot too. Returns the
    steps' layout problems and, for each pair of rules shown, the first step showing it."""
    page = session.page
    problems, formulas, previous = {}, {}, 0
    for step in swept:
        index = step["index"]
        if index == previous + 1:
            if index % 10 == 0:  # the reader had scrolled down to a figure: the new step starts at its title
                page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
            page.keyboard.press("Space" if index % 7 == 0 else "ArrowRight")
            wait_rendered(session, index)
        elif index:
            click_step(session, index)
            page.evaluate("document.activeElement.blur()")  # the keys go to the page again
        previous = index
        seen = page.evaluate(MEASURE)
        assert (seen["step"], seen["counter"]) == (str(index + 1), f"step {index + 1} of 84")  # one numbering
        drawn = seen["drawn"]  # every step draws, with its title, its cell and its check's badge
        assert (drawn["title"], drawn["cell"], drawn["badges"]) == (step["title"], str(index), 1), step
        assert drawn["plots"] >= 1, f"step {index} ({step['name']}) drew no figure"
        if seen["problems"]:
            problems[index] = seen["problems"]
        formulas.setdefault(seen["formulas"], index)
        if index in shots:
            session.screenshot(shots[index])
        if index == jacobian_at:
            page.locator("#jacobian .js-plotly-plot").nth(1).wait_for()
            page.locator("#jacobian").evaluate("j => j.scrollIntoView({block: 'start'})")  # under the bar
            session.screenshot("present-03-softmax-backward-jacobian")
            page.evaluate("window.scrollTo(0, 0)")
    return problems, formulas


def step_of(all_steps: list[dict], name: str, phase: str) -> int:
    return next(s["index"] for s in all_steps if s["name"] == name and s["phase"] == phase)


def test_the_update_step_in_presenter_mode(session):
    page = session.page
    page.set_viewport_size({"width": 1280, "height": 720})
    session.goto(walk_url({**SMALL, "optimizer": "adamw"}, present="1"))
    wait_rendered(session, 0)
    page.keyboard.press("End")
    last = len(steps(session)) - 1
    wait_rendered(session, last)
    assert steps(session)[last]["phase"] == "update"
    assert page.evaluate(MEASURE)["problems"] == {}
    session.screenshot("present-05-update")
    assert_clean(session)


WIDTHS = [360, 390, 600, 800, 900, 1280, 1920, 2560]
# Every box of the page's content that nothing may cover: the sticky bar and the diagram
# are checked against these.
CONTENT = "#step > *, .walk-context > *, .timeline-run"


def overlaps(page) -> list[str]:
    return page.evaluate(
        """(selector) => {
      const box = (n) => n.getBoundingClientRect();
      const cut = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
      const found = [];
      const diagram = box(document.querySelector(".diagram"));
      const content = [...document.querySelectorAll(selector)].filter((n) => n.offsetParent !== null);
      for (const n of content) if (cut(diagram, box(n))) found.push(`diagram over ${n.className || n.tagName}`);
      const runs = [...document.querySelectorAll(".timeline-run")];
      runs.forEach((a, i) => runs.slice(i + 1).forEach((b) => cut(box(a), box(b)) && found.push(`${a.className} over ${b.className}`)));
      return found;
    }""",
        CONTENT,
    )


def test_no_overlap_from_360_to_2560_px_and_the_diagram_is_a_strip_on_narrow_screens(session):
    page = session.page
    page.set_viewport_size({"width": 390, "height": 844})
    session.goto(walk_url(DEFAULT_WALK, step=57))
    wait_rendered(session, 57)
    assert page.evaluate("window.scrollY") == 0  # the page opens at its header
    found = {}
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 844 if width < 900 else 900})
        # Nothing wider than the screen, once Plotly has redrawn for the new width.
        try:
            page.wait_for_function("() => document.scrollingElement.scrollWidth <= innerWidth", timeout=5000)
        except PlaywrightTimeout:
            found[width] = [f"page {page.evaluate('document.scrollingElement.scrollWidth')} px wide"]
        page.evaluate("window.scrollTo(0, document.querySelector('#step .figures').offsetTop)")
        if problems := overlaps(page):
            found[width] = found.get(width, []) + problems
        if width in (390, 800):
            toggle = page.locator("#diagram-toggle")
            assert toggle.is_visible() and "Layer 1 · attention" in toggle.text_content()
            assert page.locator("#blocks").is_hidden()
            toggle.click()  # the strip opens in the flow, above the step
            assert page.locator("#blocks").is_visible() and not overlaps(page)
            if width == 390:
                page.evaluate("window.scrollTo(0, 0)")
                session.screenshot("phone-01-walk-390x844")
                page.evaluate("window.scrollTo(0, document.querySelector('#step .figures').offsetTop - 80)")
                session.screenshot("phone-02-walk-figure-390x844")
            toggle.click()
        else:
            assert page.locator("#diagram-toggle").is_hidden() == (width > 900)
    assert not found, f"overlapping boxes: {found}"
    assert_clean(session)


def test_bug_lab_on_a_phone_stacks_the_diff_and_the_toolbar_stays_offline(session, axe):
    page = session.page
    fault = "softmax_missing_sum_term"
    session.goto(walk_url({**SMALL, "faults": fault}))
    wait_rendered(session, 0)
    broken = step_of(steps(session), CATALOGUE[fault].step_name(0), "backward")
    page.locator(f'#timeline .cell[data-index="{broken}"]').click()
    wait_rendered(session, broken)
    page.click(".diff-button")
    cards = page.locator(".diff-figures .figure-card")
    cards.nth(1).locator(".js-plotly-plot").wait_for()
    assert axe_violations(page, axe) == []

    # The toolbar: PNG, zoom, reset; nothing that needs a network; out of the tab order;
    # off the subplot captions ("difference: faulty − correct").
    plot = cards.nth(1).locator(".js-plotly-plot")
    assert plot.get_attribute("role") != "img"
    titles = plot.locator(".modebar-btn").evaluate_all("bs => bs.map((b) => b.getAttribute('data-title'))")
    assert titles == ["Download plot as a PNG", "Zoom", "Reset axes"], titles
    assert plot.locator(".modebar-btn").evaluate_all("bs => bs.every((b) => b.tabIndex === -1)")
    assert page.locator('[data-title*="Share"], [data-title*="Cloud"], .modebar-btn--logo').count() == 0
    bar = plot.locator(".modebar").bounding_box()
    for caption in plot.locator(".annotation").all():
        assert not intersects(bar, caption.bounding_box()), caption.text_content()

    page.set_viewport_size({"width": 390, "height": 844})
    page.locator(f'#timeline .cell[data-index="{broken}"]').click()  # redrawn for the phone
    wait_rendered(session, broken)
    page.click(".diff-button")
    card = page.locator(".diff-figures .figure-card").nth(1)
    card.locator(".js-plotly-plot").wait_for()
    panels = [p.bounding_box() for p in card.locator(".nsewdrag").all()]
    captions = [c.bounding_box() for c in card.locator(".annotation").all()]
    assert len(panels) == 3
    for group in (panels, captions):
        for i, a in enumerate(group):
            assert not any(intersects(a, b) for b in group[i + 1 :]), group
    card.scroll_into_view_if_needed()
    session.screenshot("phone-03-diff-stacked-390x844")
    assert_clean(session)


def quiz_broken_step(session) -> int:
    """What only the server knows: the step of the fault the quiz hides (its number and the server's secret)."""
    return quiz_truth(session, session.page.evaluate("window.xt.trace.id"))["broken"]["index"]


def test_the_quiz_gives_no_verdict_before_the_answer(session, axe):
    page = session.page
    session.goto(walk_url({**SMALL, "quiz": QUIZ_SEED}))
    wait_rendered(session, 0)
    broken = quiz_broken_step(session)
    page.locator(f'#timeline .cell[data-index="{broken}"]').click()
    wait_rendered(session, broken)
    probe = page.locator(".quiz-probe")
    probe.wait_for()
    step = page.locator("#step")
    assert step.locator(".gradcheck.sealed").count() == 1
    assert step.locator(".badge-ok, .badge-bad, .alert-warning, .forward-note").count() == 0
    assert page.locator("#timeline .check-failed").count() == 0 and page.locator("#checks-panel").is_hidden()
    for words in ("check failed", "FAILED", "✗", "broken one", "chain rule", "recorded dL/dscores\t"):
        assert words not in page.locator("body").inner_text(), words
    jacobian = step.locator("#jacobian .jacobian-result")
    jacobian.locator("table").wait_for()
    assert "holds back the recorded dL/dscores" in jacobian.inner_text()
    assert jacobian.locator("thead th").all_inner_texts() == ["key", "p", "dL/dp", "J · dL/dp"]
    trace_id = page.evaluate("window.xt.trace.id")
    view = page.evaluate(f"fetch('/api/traces/{trace_id}/steps/{broken}').then((r) => r.json())")
    assert view["gradcheck"] == {"sealed": True} and view["warnings"] == []
    assert "3 of 3 left" in probe.text_content()
    assert axe_violations(page, axe) == []
    session.screenshot("quiz-01-before-the-answer")

    probe.click()  # spend a probe here: this step's check, and only this one
    step.locator(".gradcheck.badge-bad").wait_for()
    assert page.locator("#timeline .check-failed").count() == 1
    assert "You probed this step" in step.locator(".quiz-tools").text_content()
    page.keyboard.press("ArrowLeft")
    wait_rendered(session, broken - 1)
    assert "2 of 3 left" in page.locator(".quiz-probe").text_content()
    assert step.locator(".gradcheck.sealed").count() == 1
    page.keyboard.press("ArrowRight")
    wait_rendered(session, broken)
    page.click(".quiz-answer")
    verdict = step.locator(".quiz-verdict")
    verdict.wait_for()
    assert "Right" in verdict.text_content() and f"You used 1 of 3 probes (step {broken + 1})" in verdict.text_content()
    assert step.locator(".forward-note").count() == 0  # that note explains failing forward steps
    step.locator("#jacobian thead th", has_text="recorded dL/dscores").wait_for()  # the comparison, now
    assert step.locator("#jacobian .badge-bad", has_text="chain rule ✗").count() == 1
    page.locator("#checks-progress").filter(has_text=re.compile("fail")).wait_for()  # now the chart
    session.screenshot("quiz-02-answered")
    assert_clean(session)


@pytest.mark.every_run
def test_axe_finds_nothing_on_home_and_walk_pages_and_home_fits_the_screen(session, axe):
    page = session.page
    page.set_viewport_size({"width": 1280, "height": 720})
    session.goto("/")
    page.wait_for_selector("#start-form[data-models-loaded]")
    assert page.locator("#start").bounding_box()["y"] + page.locator("#start").bounding_box()["height"] <= 720
    clipped = page.evaluate(
        """() => [...document.querySelectorAll('select')].filter((s) => {
          const copy = s.cloneNode(true);
          copy.style.cssText = 'width:auto;max-width:none;position:absolute;visibility:hidden';
          document.body.append(copy);
          const natural = copy.getBoundingClientRect().width;
          copy.remove();
          return s.getBoundingClientRect().width + 1 < natural;
        }).map((s) => s.id)"""
    )
    assert clipped == [], f"selects narrower than their longest choice: {clipped}"
    labels = page.locator("#f-faults option").all_text_contents()
    assert any("RoPE" in label for label in labels) and any("LM head" in label for label in labels)
    assert axe_violations(page, axe) == []
    page.set_viewport_size({"width": 1440, "height": 900})
    assert page.locator("#start").bounding_box()["y"] + page.locator("#start").bounding_box()["height"] <= 900

    # Large type's pressed button keeps its label under the pointer.
    page.click("#type-size")
    page.hover("#type-size")
    colours = page.locator("#type-size").evaluate(
        "b => [getComputedStyle(b).color, getComputedStyle(b).backgroundColor]"
    )
    assert colours[0] != colours[1] and colours[1] not in ("rgb(255, 255, 255)", "rgb(244, 245, 247)"), colours
    page.click("#type-size")

    session.goto(walk_url(SMALL))
    wait_rendered(session, 0)
    assert page.locator("h1").count() == 1 and page.locator("h1").text_content() == steps(session)[0]["title"]
    assert axe_violations(page, axe) == []
    backward = step_of(steps(session), "layers.0.attention.probs", "backward")
    page.locator(f'#timeline .cell[data-index="{backward}"]').click()
    wait_rendered(session, backward)
    page.locator("#jacobian .badge-ok").wait_for()  # the Jacobian open
    page.locator("#jacobian").scroll_into_view_if_needed()
    assert axe_violations(page, axe) == []
    assert_clean(session)


NINE_HEADS = {**SMALL, "n_head": "9", "n_kv_head": "3", "n_embd": "72"}  # SmolLM2's heads: a grid of 2 rows


def test_a_grid_of_two_rows_keeps_its_key_labels_on_screen_and_the_phone_counter_breaks_cleanly(session):
    page = session.page
    page.set_viewport_size({"width": 1280, "height": 720})
    probs = 8  # layers.0.attention.probs, forward
    session.goto(walk_url(NINE_HEADS, step=probs, present="1"))
    wait_rendered(session, probs)
    assert steps(session)[probs]["name"] == "layers.0.attention.probs"
    plot = page.locator("#step .figures > .figure-card .plot").first
    assert plot.get_attribute("data-panel-rows") == "2"
    assert plot.bounding_box()["y"] + plot.bounding_box()["height"] <= 720  # its key labels included
    page.set_viewport_size({"width": 390, "height": 844})
    # "step 8" / "of 0–47", each half on one line, and the presenter's buttons on the screen
    halves = page.locator("#counter > span").evaluate_all("spans => spans.map((s) => s.getClientRects().length)")
    assert halves == [1, 1]
    assert page.locator("#present").bounding_box()["x"] + page.locator("#present").bounding_box()["width"] <= 390
    assert_clean(session)
