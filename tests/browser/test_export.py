"""An exported walkthrough in Chromium (app/export, static/js/lib/static_source.js): the directory
served by `python -m http.server` with every request outside it refused, and the single file from
file:// with the network off, each walked with the keyboard (every step under `make test-long`), a
head enlarged, a Jacobian row opened and the lesson's narration shown; the sealed quiz's verdict only
after an answer; the film of a recorded run exported (`xt export --run`) played from its directory, scrubbed
with the keyboard; a lesson about a run exported playing its first film stop."""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from tests.helpers.browser import axe_violations
from tests.helpers.export import FILM_RUN, FILM_STEP, LESSON, StaticServer


@pytest.fixture(scope="module")
def served(small_export):
    server = StaticServer(small_export.directory)
    yield server
    server.stop()


@contextmanager
def guarded(browser, allowed: tuple[str, ...], offline: bool = False):
    """A page whose requests outside `allowed` are refused (and listed), with the errors it reports."""
    context = browser.new_context(viewport={"width": 1280, "height": 720}, offline=offline)
    outside: list[str] = []
    errors: list[str] = []

    def route(route):
        if route.request.url.startswith(allowed):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    try:
        yield page, outside, errors
    finally:
        context.close()


def rendered(page, index: int) -> None:
    page.wait_for_selector(f'#step[data-rendered="{index}"]')


def index_of(page, name: str, phase: str) -> int:
    return page.evaluate(f"window.xt.trace.steps.find(s => s.name === {name!r} && s.phase === {phase!r}).index")


def go_to(page, index: int) -> None:
    page.evaluate(f"document.querySelector('.cell[data-index=\"{index}\"]').click()")
    rendered(page, index)


def step_by_step(page, count: int) -> None:
    """→ from the first step to step `count - 1`, each step's answer found and laid out (its
    text in place: the wait ends before its figures are drawn, the next → waits for them)."""
    for index in range(1, count):
        page.keyboard.press("ArrowRight")
        page.wait_for_selector(f'#step[data-shown="{index}"]')
    rendered(page, count - 1)
    assert "Not in this export" not in page.locator("#step").inner_text()


def head_enlarged(page) -> None:
    go_to(page, index_of(page, "layers.0.attention.probs", "forward"))
    page.locator(".figure-card").nth(1).locator(".head-buttons button", has_text="head 1").click()
    page.locator("dialog#enlarge .js-plotly-plot").wait_for()
    assert "head 1" in page.locator("#enlarge-title").text_content()
    page.keyboard.press("Escape")


def lesson_played(page) -> None:
    """The lesson chosen in the class bar: its first stop's narration, then its second stop (the
    softmax's backward step), where a Jacobian row is opened."""
    page.click("#context-more")
    page.select_option("#class-lesson", LESSON)
    page.locator(".lesson-narration").filter(has_text="Point at the rows").wait_for()
    page.locator("#lesson-panel button", has_text="Next ▶").click()
    page.locator(".lesson-narration").filter(has_text="Open a row's Jacobian").wait_for()
    rendered(page, index_of(page, "layers.0.attention.probs", "backward"))
    page.locator("#jacobian .js-plotly-plot").nth(1).wait_for()  # the default row: J and the vectors
    page.locator("#jacobian select").nth(0).select_option("1")
    page.locator("#jacobian select").nth(1).select_option("5")
    page.locator("#jacobian button", has_text="Show Jacobian").click()
    page.locator("#jacobian-heading").filter(has_text="head 1, query position 5").wait_for()
    assert "chain rule ✓" in page.locator("#jacobian .badge-ok").text_content()
    assert page.locator("#jacobian tbody tr").count() == 6  # keys 0..5


def test_the_exported_directory_on_a_static_server(browser, served, axe):
    """Every step's answer read as the page reads it (each its own file from the server); every
    step with the keyboard, a head enlarged, the lesson's narration and a Jacobian row; axe on that
    page (figures, lesson panel, Jacobian)."""
    with guarded(browser, (served.base + "/",)) as (page, outside, errors):
        page.goto(f"{served.base}/index.html")
        rendered(page, 0)
        count = page.evaluate("window.xt.trace.steps.length")
        module = f"{served.base}/static/js/lib/static_source.js"
        assert page.evaluate(EVERY_STEP, [module, count]) == [True] * count
        step_by_step(page, count)
        page.keyboard.press("End")
        rendered(page, count - 1)
        head_enlarged(page)
        assert page.locator("#class-present").is_hidden()  # presenting needs the app's server
        assert page.locator(".export-note").is_visible()
        lesson_played(page)
        assert axe_violations(page, axe) == []
        assert outside == [] and errors == []


# Every step's answer as the page's own static client reads it (from the single file, its modules
# data: URLs behind the import map; or the directory's files): found, decoded, none a refusal.
EVERY_STEP = """async ([module, count]) => {
  const { staticRequest } = await import(module);
  const found = [];
  for (let i = 0; i < count; i++) {
    const step = await staticRequest(`/api/traces/x/steps/${i}?seq=0`);
    found.push(step.index === i && step.figures.length > 0 && !step.xt_export_refused);
  }
  return found;
}"""


@pytest.mark.every_run
def test_the_single_file_with_the_network_off(browser, small_export):
    """The single file from file:// offline: every step's answer read in the page, the first
    steps and the last with the keyboard, a head enlarged, the lesson's narration and a Jacobian
    row (the directory's test walks every step: the same page code, its answers from files)."""
    with guarded(browser, ("file:", "data:"), offline=True) as (page, outside, errors):
        page.goto(small_export.single.as_uri())
        rendered(page, 0)
        count = page.evaluate("window.xt.trace.steps.length")
        assert page.evaluate(EVERY_STEP, ["xt/js/lib/static_source.js", count]) == [True] * count
        step_by_step(page, 4)
        page.keyboard.press("End")
        rendered(page, count - 1)
        head_enlarged(page)
        lesson_played(page)
        assert outside == [] and errors == []


def test_a_russian_export_reads_its_catalogue_offline(browser, russian_export):
    """`xt export --lang ru` from file:// with the network off: the page's script reads the catalogue
    the page carries (no /words/ru.ftl, no /vendor/fluent to fetch) and writes Russian; Plotly's
    mode bar is Russian too."""
    with guarded(browser, ("file:", "data:"), offline=True) as (page, outside, errors):
        page.goto(russian_export.as_uri())
        rendered(page, 0)
        count = page.evaluate("window.xt.trace.steps.length")
        assert page.locator("#counter").inner_text().split() == ["шаг", "1", "из", str(count)]
        go_to(page, index_of(page, "layers.0.attention.probs", "backward"))
        page.locator("#jacobian-heading").filter(has_text="Якобиан софтмакса").wait_for()
        assert "цепное правило ✓" in page.locator("#jacobian .badge-ok").text_content()
        assert page.locator(".modebar-btn").first.get_attribute("data-title") == "Сохранить в формате PNG"
        refused = page.evaluate(NO_SERVER)  # a message loaded when needed (lib/say.js), from a data: URL module
        assert refused.startswith("у статического экспорта нет сервера для models")
        assert outside == [] and errors == []


NO_SERVER = """() => import("xt/js/lib/static_source.js")
  .then((m) => m.staticRequest("/api/models"))
  .catch((error) => error.message)"""


def test_a_sealed_quiz_shows_its_verdict_only_after_an_answer(browser, quiz_export):
    from xt_core.lab.faults import CATALOGUE

    with guarded(browser, ("file:", "data:"), offline=True) as (page, outside, errors):
        page.goto(quiz_export.single.as_uri())
        rendered(page, 0)
        backward = page.evaluate("window.xt.trace.steps.filter(s => s.phase === 'backward').map(s => s.index)")
        go_to(page, backward[2])
        assert "hidden until you answer" in page.locator("#step .gradcheck").inner_text()
        page.click(".quiz-probe")  # a probe: this step's check, decrypted in the browser
        page.locator("#step .gradcheck", has_text="max rel err").wait_for()
        assert "2 of 3 left" in page.locator("body").inner_text() or page.locator(".quiz-probe").count() == 0
        before = page.locator("body").inner_text()
        assert page.locator(".quiz-verdict").count() == 0 and not any(name in before for name in CATALOGUE)
        page.click(".quiz-answer")
        verdict = page.locator(".quiz-verdict").first
        verdict.wait_for()
        assert any(name in verdict.inner_text() for name in CATALOGUE)
        page.reload()  # the answer stays given (sessionStorage), the probe spent (localStorage)
        page.locator(".quiz-verdict").first.wait_for()
        assert outside == [] and errors == []


FILM_LINE = "() => document.getElementById('film-plot').layout.shapes[0].x0"


def _film_at(page, step: int) -> None:
    """The scrubber, the figure's line and the address at `step`."""
    assert int(page.input_value("#film-scrub")) == step and page.evaluate(FILM_LINE) == step
    assert page.url.endswith(f"?step={step}")


def test_the_exported_film_plays_offline(browser, film_export):
    """The film's directory behind `python -m http.server`, every other request refused: the run read
    from its file, the figure drawn (the loss, each head's two scores) at the step the address names,
    scrubbed with the keyboard; "open this step" leads to the walkthrough of the step the export holds
    (there on the host) and, on another step, the page says it is not in this export; the attention
    on demand (a server's) is not offered. One page load."""
    server = StaticServer(film_export.directory)
    try:
        with guarded(browser, (server.base + "/",)) as (page, outside, errors):
            page.goto(f"{server.base}/index.html?step={FILM_STEP}")
            page.wait_for_selector("#film[data-ready]")
            assert page.evaluate("document.getElementById('film-plot').data.length") == 1 + 2 * 2
            _film_at(page, FILM_STEP)
            step_page = film_export.pages[FILM_STEP]
            assert page.get_attribute("#film-open", "href") == step_page and page.is_visible("#film-open")
            assert page.evaluate("(url) => fetch(url).then((r) => r.ok)", step_page)
            page.focus("#film-scrub")
            page.keyboard.press("End")
            _film_at(page, 15)
            assert page.is_hidden("#film-open")
            said = page.text_content(".film-export-step")
            assert said == f"Step 15 is not in this export: it holds the walkthrough of step {FILM_STEP} only. The full app opens every step."  # fmt: skip
            page.keyboard.press("Home")
            for _ in range(FILM_STEP):
                page.keyboard.press("ArrowRight")
            _film_at(page, FILM_STEP)
            assert page.is_visible("#film-open") and page.text_content(".film-export-step") == ""
            assert page.is_hidden(".film-attention") and f"film of the recorded run {FILM_RUN}" in page.text_content(".export-note")  # fmt: skip
            assert outside == [] and errors == []
    finally:
        server.stop()


def test_the_exported_run_lesson_plays_its_first_film_stop_offline(browser, run_lesson_export):
    """A lesson about a recorded run exported (`xt export --lesson`) behind `python -m http.server`, every
    other request refused: the film opens on the lesson (#lesson=NAME, the page's manifest), its panel
    beside the film at the first stop, the scrubber at that stop's step; Next leads to the exported page
    of the next stop (a run step's walkthrough), not a server's. One page load."""
    server = StaticServer(run_lesson_export.directory)
    try:
        with guarded(browser, (server.base + "/",)) as (page, outside, errors):
            page.goto(f"{server.base}/index.html")
            page.wait_for_selector('#lesson-panel[data-drawn="0"]')
            assert page.text_content("#lesson-takeaway") == "The loss at step 3."
            assert "A tiny run" in page.text_content(".lesson-title")
            assert int(page.input_value("#film-scrub")) == 3 and page.evaluate(FILM_LINE) == 3
            assert page.evaluate("document.getElementById('film-plot').data.length") == 1 + 2 * 2
            page.route(f"{server.base}/film-*", lambda route: route.fulfill(body="<p>the step's page</p>"))
            page.get_by_role("button", name="Next").click()
            page.wait_for_url(f"{server.base}/film-{FILM_RUN}-step-{FILM_STEP:06d}.html#lesson=tiny-run&stop=1")
            assert outside == [] and errors == []
    finally:
        server.stop()
