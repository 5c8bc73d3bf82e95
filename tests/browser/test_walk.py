"""The pages in a real browser: start from the home form, step through every step with the
keyboard, the Jacobian on click, permalinks, validation messages, hostile text."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest

from tests.helpers.browser import (
    ONE_LAYER,
    TEXT,
    assert_clean,
    click_step,
    fill_home,
    open_step,
    open_walk,
    shoot,
    start_walk,
    steps,
    url_step,
    wait_rendered,
)
from tests.helpers.specs import class_spec

HOSTILE = "<script>alert(1)</script> \"onmouseover=alert(2) x' 👋 שלום"


@pytest.mark.every_run
def test_stepping_with_the_keyboard(session):
    """→ ← Home End on the 1-layer walkthrough; that every step of a walkthrough draws (figure,
    title, badge) is checked step by step in tests/browser/test_present.py's presenter sweep."""
    start_walk(session)
    page = session.page
    shoot(session, "01-walk-first-step")
    all_steps = steps(session)
    assert len(all_steps) == 48  # 1 layer: 24 forward/loss ops, each with its backward
    assert [s["phase"] for s in all_steps].count("loss") == 3
    shots = {8: "02-attention-probs-forward", 23: "03-loss", 29: "04-residual-backward"}
    for step in all_steps[1:9]:
        page.keyboard.press("ArrowRight")
        wait_rendered(session, step["index"])
        assert_shown(session, step)
    for index, name in shots.items():
        click_step(session, index)
        shoot(session, name, ".figure-card")
        page.evaluate("window.scrollTo(0, 0)")
    page.keyboard.press("ArrowLeft")
    wait_rendered(session, 28)
    page.keyboard.press("End")
    wait_rendered(session, len(all_steps) - 1)
    assert_shown(session, all_steps[-1])
    page.keyboard.press("ArrowRight")  # past the end: stays on the last step
    assert url_step(session) == len(all_steps) - 1
    page.keyboard.press("Home")
    wait_rendered(session, 0)
    assert_shown(session, all_steps[0])
    assert_clean(session)


def assert_shown(session, step: dict) -> None:
    page, index = session.page, step["index"]
    assert page.locator("#step .js-plotly-plot").count() >= 1, f"step {index} ({step['name']}) drew no figure"
    assert page.locator("#step-title").text_content() == step["title"]
    assert page.locator(".cell.current").get_attribute("data-index") == str(index)
    assert url_step(session) == index
    assert page.locator(".gradcheck").count() == 1


@pytest.mark.every_run
def test_clicking_an_attention_row_shows_its_jacobian(session):
    open_walk(session)
    page = session.page
    open_step(session, "layers.0.attention.probs", "backward")
    assert page.locator("#jacobian .js-plotly-plot").count() == 2  # J and the vectors, for the default row
    # Head 1 is the second panel of the first grid; click the row of query position 5.
    T = page.evaluate("window.xt.trace.T")
    grid = page.locator(".figure-card").first.locator(".js-plotly-plot")
    grid.scroll_into_view_if_needed()
    panel = grid.locator(".nsewdrag").nth(1).bounding_box()
    y = panel["y"] + (5 + 0.5) * panel["height"] / T
    x = panel["x"] + 2 * panel["width"] / T  # key 1: visible to query 5
    page.mouse.move(x, y)
    page.mouse.click(x, y)
    heading = page.locator("#jacobian-heading")
    heading.filter(has_text="head 1, query position 5").wait_for()
    page.locator("#jacobian .badge-ok").wait_for()
    assert "chain rule ✓" in page.locator("#jacobian .badge-ok").text_content()
    assert page.locator("#jacobian tbody tr").count() == 6  # keys 0..5
    shoot(session, "05-softmax-backward-jacobian", "#jacobian")
    assert_clean(session)


# The step's children in the page's order: the order Tab and a screen reader meet them.
CHILDREN = "() => Array.from(document.querySelector('#step').children, (c) => c.classList[0] || c.tagName)"
# A check failing along a direction whose finite difference was extrapolated (resolution > 0):
# the failing row is off by at least its rel_error, the passing one by at most rel_error + resolution.
FAILED_RESOLVED = {
    "passed": False, "max_rel_error": 0.25, "tolerance": 1e-6, "resolution": 2e-3, "error_bound": 0.2505,
    "checks": [
        {"tensor": "dX", "analytic": 1.25, "numeric": 1.0, "rel_error": 0.25, "resolution": 5e-4},
        {"tensor": "dW", "analytic": 1.0, "numeric": 1.0, "rel_error": 0.0, "resolution": 2e-3},
    ],
}  # fmt: skip
SHOWN = """check => import('/static/js/walk/gradcheck_view.js').then((m) => ({
  badge: m.gradcheckBadge(check).textContent,
  rows: Array.from(m.gradcheckDetails(check).querySelectorAll('tbody td:last-child'), (td) => td.textContent),
}))"""


def test_how_the_gradient_was_checked_follows_the_figures_and_a_failure_says_at_least(session):
    open_walk(session)
    page = session.page
    open_step(session, "layers.0.attention.probs", "backward")
    children = page.evaluate(CHILDREN)
    assert children.index("figures") < children.index("gradcheck-details") < children.index("jacobian"), children
    failed = page.evaluate(SHOWN, FAILED_RESOLVED)
    assert "✗ max rel err ≥ 2.5e-1 " in failed["badge"], failed
    assert failed["rows"] == ["≥ 2.5e-1", "≤ 2.0e-3"]
    passed = page.evaluate(SHOWN, {**FAILED_RESOLVED, "passed": True, "max_rel_error": 1e-7, "error_bound": 2.1e-3})
    assert "✓ max rel err ≤ 2.1e-3 " in passed["badge"], passed
    assert_clean(session)


COVERS = """check => import('/static/js/walk/gradcheck_view.js').then((m) => ({
  backward: m.gradcheckBadge(check, 'backward').title,
  details: m.gradcheckDetails(check, 'backward').textContent,
}))"""


def test_a_red_backward_badge_points_at_this_op_or_one_above_it(session):
    # Below a fault the arriving gradient is wrong, so this op's contribution is wrong too: the
    # first red step from the loss is the broken one, not every red step.
    open_walk(session)
    shown = session.page.evaluate(COVERS, FAILED_RESOLVED)
    for text in shown.values():
        assert "red here means the mistake is in this op or in a backward op above it (nearer the loss)" in text
        assert "Going backward from the loss, the first red step is the broken one." in text
        assert "red here means the mistake is in this op." not in text
    assert_clean(session)


def test_output_softmax_jacobian_by_position(session):
    open_walk(session)
    page = session.page
    open_step(session, "output_probs", "backward")
    page.locator("#jacobian select").select_option("3")
    page.locator("#jacobian button", has_text="Show Jacobian").click()
    page.locator("#jacobian-heading").filter(has_text="position 3").wait_for()
    page.locator("#jacobian .badge-ok").wait_for()
    # The identity check dL/dlogits = (p - onehot)/N follows the chosen position.
    page.locator('.figure-card[data-figure="identity"] .figure-title').filter(has_text="position 3").wait_for()
    assert page.locator('.figure-card[data-figure="identity"] .js-plotly-plot').count() == 1
    assert_clean(session)


def test_a_permalink_reloads_onto_the_same_step(session):
    open_walk(session, step=12)
    page = session.page
    assert page.locator(".cell.current").get_attribute("data-index") == "12"
    assert page.locator("#slider").input_value() == "12"
    page.keyboard.press("ArrowLeft")
    wait_rendered(session, 11)
    page.reload()
    wait_rendered(session, 11)
    assert url_step(session) == 11
    assert page.locator("#step-title").text_content() == steps(session)[11]["title"]
    assert_clean(session)


def test_the_diagram_and_jump_select_navigate(session):
    open_walk(session)
    page = session.page
    page.select_option("#jump-group", label="Layer 0")
    page.select_option("#jump-op", label="Residual add x′ = h + feed-forward — backward")
    first_backward = next(s for s in steps(session) if s["phase"] == "backward" and s["layer"] == 0)
    wait_rendered(session, first_backward["index"])
    assert "going-up" in page.locator("#blocks").get_attribute("class")
    page.click('.block[data-block="layers.0.attention"]')
    entry = next(s for s in steps(session) if s["phase"] == "backward" and s["block"] == "layers.0.attention")
    wait_rendered(session, entry["index"])
    assert page.locator('.block[data-block="layers.0.attention"]').get_attribute("aria-current") == "step"
    assert_clean(session)


def test_an_invalid_config_shows_the_message_next_to_the_field(session):
    fill_home(session, TEXT, **{**ONE_LAYER, "n_embd": "60", "n_head": "8", "n_kv_head": "8"})
    session.page.click("#start")
    message = session.page.locator(".field:has(#f-n_embd) .field-error")
    message.wait_for()
    assert "divisible by n_head" in message.text_content()
    assert session.page.locator("#f-n_embd").get_attribute("aria-invalid") == "true"
    assert session.page.locator("#f-n_embd").input_value() == "60"  # the form keeps what was typed
    session.screenshot("06-invalid-config")


@pytest.mark.every_run
def test_hostile_text_renders_inert(session):
    start_walk(session, HOSTILE, **ONE_LAYER)
    page = session.page
    assert page.evaluate("document.querySelectorAll('[onmouseover]').length") == 0
    scripts = page.evaluate("Array.from(document.scripts).map(s => s.src || s.type)")
    # only the page's own scripts and its JSON data blocks: nothing the text injected
    assert all("alert" not in s and (s.startswith(session.base) or s == "application/json") for s in scripts)
    strip = page.locator("#tokens").text_content()
    assert "<" in strip and "👋" in strip and "ש" in strip
    assert page.locator("#tokens").is_hidden()  # folded with the tools, one click away
    page.click("#context-more")
    page.hover("#tokens .token >> nth=3")
    open_step(session, "layers.0.attention.probs", "forward")
    shoot(session, "07-hostile-text")
    page.click("text=Change model or text")
    assert page.locator("#f-text").input_value() == HOSTILE
    assert session.dialogs == []
    assert_clean(session)


def test_enlarge_a_head_on_click(session):
    open_walk(session)
    page = session.page
    open_step(session, "layers.0.attention.probs", "forward")
    page.locator(".figure-card").nth(1).locator(".head-buttons button", has_text="head 2").click()
    dialog = page.locator("dialog#enlarge")
    dialog.locator(".js-plotly-plot").wait_for()
    assert "head 2" in page.locator("#enlarge-title").text_content()
    session.screenshot("08-enlarged-head")
    page.keyboard.press("Escape")
    assert not dialog.is_visible()
    assert_clean(session)


def class_walk_url(step: int) -> str:
    """The /walk permalink of the classroom preset (4 layers, 8 heads, width 256) on 128 positions."""
    from app.settings import Settings
    from app.spec import TraceSpec, resolve, spec_to_query

    spec = resolve(TraceSpec(**class_spec()), Settings())
    return "/walk?" + urlencode({**spec_to_query(spec.canonical), "step": str(step + 1)})


def test_a_class_size_head_grid_is_an_overview_and_enlarging_loads_every_value(session):
    page = session.page
    session.goto(class_walk_url(0))
    wait_rendered(session, 0)
    for phase in ("forward", "backward"):
        open_step(session, "layers.0.attention.probs", phase)
        if phase == "forward":
            shoot(session, "10-class-softmax-forward-overview", '.figure-card[data-figure$="attention.probs"]')
            page.evaluate("window.scrollTo(0, 0)")
    card = page.locator('.figure-card[data-role="attention"]').first
    assert "Downsampled" in card.locator(".note").text_content()
    grid_rows = card.locator(".js-plotly-plot").evaluate("gd => gd.data.map((t) => t.y.length)")
    assert grid_rows == [43] * 8  # 3×3 blocks of the 128 × 128 rows and keys
    shoot(session, "11-class-softmax-backward-overview", '.figure-card[data-role="attention"]')
    heads = []
    page.on("request", lambda r: "/head?" in r.url and heads.append(r.url))
    card.locator(".head-buttons button", has_text="head 5").click()
    dialog = page.locator('dialog#enlarge[data-resolution="full"]')
    dialog.wait_for()
    assert len(heads) == 1 and "head=5" in heads[0]
    plotted = page.locator("#enlarge-plot").evaluate("gd => ({rows: gd.data[0].y.length, cols: gd.data[0].x.length})")
    assert plotted == {"rows": 128, "cols": 128}
    assert "128×128" in page.locator("#enlarge-status").text_content()
    assert "head 5" in page.locator("#enlarge-title").text_content()
    session.screenshot("12-class-enlarged-head-full-resolution")
    # A row of the full-resolution head is one query: its click opens that row's Jacobian.
    box = page.locator("#enlarge-plot .nsewdrag").first.bounding_box()
    page.mouse.click(box["x"] + 2 * box["width"] / 128, box["y"] + (100 + 0.5) * box["height"] / 128)
    page.locator("#jacobian-heading").filter(has_text="head 5, query position 100").wait_for()
    assert not page.locator("dialog#enlarge").is_visible()
    assert_clean(session)


def test_an_evicted_trace_is_rebuilt_by_re_posting_the_spec(session):
    page = session.page
    posts = []
    page.on("request", lambda r: r.method == "POST" and posts.append(r.url))
    failed = []

    def evict_once(route):
        if not failed:  # the first step request answers as an unknown id would
            failed.append(route.request.url)
            route.fulfill(status=404, json={"detail": "unknown trace id"})
        else:
            route.continue_()

    page.route(re.compile(r".*/api/traces/[^/]+/steps/\d+.*"), evict_once)
    open_walk(session)
    assert failed and len(posts) == 2
    # The simulated 404 is the only console error.
    assert len(session.errors) == 1 and "404" in session.errors[0]


@pytest.mark.parametrize("large", [True])
def test_large_type_for_projectors(session, large):
    open_walk(session)
    page = session.page
    page.click("#type-size")
    assert page.evaluate("document.documentElement.classList.contains('large-type')") is large
    page.reload()
    wait_rendered(session, 0)
    assert page.locator("#type-size").get_attribute("aria-pressed") == "true"
    session.screenshot("09-large-type")
    assert_clean(session)


def test_a_preset_fills_in_the_sizes(session):
    session.goto("/")
    page = session.page
    page.wait_for_selector('#f-model optgroup[label="Random init: presets"] option', state="attached")
    options = page.eval_on_selector_all("#f-model option", "os => os.map(o => o.value)")
    one_layer = next(v for v in options if v.startswith("preset:") and "1" in v)
    page.select_option("#f-model", "gpt2-text")  # a GPT-2 checkpoint first: the family field says gpt2
    assert page.input_value("#f-family") == "gpt2"
    page.select_option("#f-model", one_layer)  # a preset is Llama's: the family goes back with its sizes
    assert page.input_value("#f-n_layer") == "1" and page.input_value("#f-family") == "llama"
    page.fill("#f-n_layer", "3")  # editing a size leaves the preset
    assert page.input_value("#f-model") == ""
    assert_clean(session)


# Four layers: a long walkthrough (the dense timeline of a real model), step numbers of 3 digits.
FOUR_LAYERS = {**ONE_LAYER, "n_layer": "4"}
# The controls' height and the first figure's top, in px.
LAYOUT = """() => ({
  controls: Math.round(document.querySelector("nav.controls").getBoundingClientRect().height),
  figure: Math.round(document.querySelector("#step .figures > .figure-card").getBoundingClientRect().top),
})"""


@pytest.mark.every_run
def test_the_first_figure_starts_on_a_1280x720_screen_and_the_controls_keep_one_row(session):
    page = session.page
    page.set_viewport_size({"width": 1280, "height": 720})
    open_walk(session, **FOUR_LAYERS)
    last = len(steps(session)) - 1
    softmax = next(s["index"] for s in steps(session) if s["name"] == "layers.3.attention.probs")
    seen = {}
    for index in (0, softmax, 100, last):
        click_step(session, index)
        page.evaluate("window.scrollTo(0, 0)")
        seen[index] = page.evaluate(LAYOUT)
    assert all(s["figure"] < 720 - 40 for s in seen.values()), seen  # the figure's title and more on screen
    assert len({s["controls"] for s in seen.values()}) == 1 and seen[0]["controls"] < 60, seen  # one row
    page.set_viewport_size({"width": 1024, "height": 720})
    assert page.evaluate(LAYOUT)["controls"] == seen[0]["controls"]
    page.click("#context-more")  # the tokens and tools are one click away
    assert page.locator("#tokens").is_visible() and page.locator("#training-bar").is_visible()
    assert page.locator("#class-bar").is_visible() and page.locator("#checks-panel").is_visible()
    assert_clean(session)


# English words a Russian walk page may show that no server answer sent: file formats and keycaps.
RUSSIAN_ALLOWED = {"npy", "json", "CSV", "Page", "Down", "Up", "Home", "End", "Shift", "Esc"}
ENGLISH_WORD = re.compile(r"[A-Za-z][a-z]{2,}")
PAGE_WORDS = """() => {
  const named = [];
  for (const node of document.querySelectorAll("[title], [aria-label], [placeholder]"))
    for (const name of ["title", "aria-label", "placeholder"]) named.push(node.getAttribute(name) || "");
  return [document.body.innerText, ...named].join("\\n");
}"""


@pytest.mark.every_run
def test_the_walk_page_in_russian_writes_no_english_word_of_its_own(session):
    """What the page's script writes (static/js: the step's frame, the gradient check, the Jacobian
    panel, the timeline, the keys, Plotly's mode bar) is Russian on a Russian page: every English
    word on it came from the server (its HTML or an answer: their words follow as they move to the
    catalogues) or is on a short allow-list. And every answer is asked for in the page's language."""
    page = session.page
    sent, asked = [], []

    def keep(response):
        if "/api/" in response.url or response.request.resource_type == "document":
            asked.append(response.url)
            sent.append(response.text() if response.ok else "")

    page.on("response", keep)
    try:
        session.goto("/walk?" + urlencode({"text": TEXT, **ONE_LAYER, "step": "1", "lang": "ru"}))
        wait_rendered(session, 0)
        shown = [page.evaluate(PAGE_WORDS)]
        open_step(session, "layers.0.attention.probs", "backward")
        page.locator("#jacobian .badge-ok").wait_for()
        page.click(".rules-toggle")
        page.click(".gradcheck-details summary")
        page.keyboard.press("?")
        shown.append(page.evaluate(PAGE_WORDS))
        modebar = page.locator(".modebar-btn").first.get_attribute("data-title")
        page.keyboard.press("Escape")
    finally:
        page.context.clear_cookies(name="xt_lang")  # the next tests' pages are English again
    server = set(ENGLISH_WORD.findall("\n".join(sent).replace("\\n", " ")))
    english = set(ENGLISH_WORD.findall("\n".join(shown))) - server - RUSSIAN_ALLOWED
    assert english == set(), f"English words the page's script wrote on a Russian page: {sorted(english)}"
    assert "цепное правило ✓" in page.locator("#jacobian .badge-ok").text_content()
    assert modebar == "Сохранить в формате PNG"  # Plotly's own ru locale (app/vendor/plotly)
    api = [url for url in asked if "/api/traces" in url]
    assert api and all("lang=ru" in url for url in api), api
    assert_clean(session)
