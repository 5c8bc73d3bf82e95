"""Figure first (issue 25): at 1280×720 at least 300 px of each step's first figure (the op's
output, where it has one) are on screen, on every step of the default walkthrough, in normal and
presenter mode, with and without Large type; every figure has a download link that answers; and
on the same page a clicker's keys: ? lists them, B blanks the screen until any key.

Cheap: one page; each mode walks every step (every fourth in `make test`) by its timeline cell and measures once the step's
text is laid out, with Plotly's drawing left out meanwhile: a plot's box is reserved at its
height before it draws (presenter mode's fitted height is the one walk/present.js gives it), so
the layout is the drawn page's."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from tests.browser.test_present import DEFAULT_WALK
from tests.helpers.browser import assert_clean, wait_rendered

FIGURE_FIRST = 300

# For every step: [px of the first plot on screen (under the sticky bar), the plot's own height],
# and the download links of every figure card.
WALK = """async (stride) => {
  const { firstFigureHeight, presenting, showFirstFigure } = await import("/static/js/walk/present.js");
  const view = document.getElementById("step");
  const shown = (i) => new Promise((resolve) => {
    const done = () => view.dataset.shown === String(i);
    if (done()) return resolve();
    const o = new MutationObserver(() => done() && (o.disconnect(), resolve()));
    o.observe(view, { attributes: true, attributeFilter: ["data-shown"] });
  });
  const measure = () => {
    const element = view.querySelector(".figures > .figure-card");
    const plot = element?.querySelector(".plot");
    if (!plot) return null;
    const natural = Number(plot.dataset.naturalHeight);
    const height = presenting() ? firstFigureHeight({ element, plot }) : natural;
    const top = plot.getBoundingClientRect().top;
    const bar = document.querySelector(".navbar").getBoundingClientRect().bottom;
    return [Math.round(Math.min(innerHeight, top + height) - Math.max(top, bar)), natural];
  };
  const press = (key) => document.dispatchEvent(new KeyboardEvent("keydown", { key, bubbles: true }));
  const largeType = document.getElementById("type-size");
  const large = () => document.documentElement.classList.contains("large-type");
  const draw = window.Plotly.newPlot;
  // Layout only: each plot's box is reserved before it draws (lib/figures.js plot() then wires events).
  window.Plotly.newPlot = async (div) => Object.assign(div, { on: () => {} });
  const out = [];
  for (let i = 0; i < window.xt.trace.steps.length; i += stride) {
    document.querySelector(`#timeline .cell[data-index="${i}"]`).click();
    await shown(i);
    // The four modes in a Gray code (presenter mode, Large type, presenter mode toggled): three
    // toggles a step, Large type (the dearer one) once; the next step starts where this one ends.
    const seen = {};
    const mode = () => `${presenting() ? "presenter" : "normal"}${large() ? ", large type" : ""}`;
    seen[mode()] = measure();
    press("p");
    seen[mode()] = measure();
    largeType.click();
    showFirstFigure(); // Large type brings the figure back up in the next frame: at once here
    seen[mode()] = measure();
    press("p");
    seen[mode()] = measure();
    const links = [...view.querySelectorAll(".figure-card")].map((c) =>
      [...c.querySelectorAll(".figure-download-link")].map((a) => a.getAttribute("href")));
    out.push({ index: i, seen, links });
  }
  window.Plotly.newPlot = draw;
  return out;
}"""

ANSWERS = """async (urls) => Promise.all(urls.map((u) => fetch(u).then(async (r) => [u, r.status,
  r.headers.get("content-type"), (await r.arrayBuffer()).byteLength])))"""


def _short(results: list[dict]) -> dict[str, list]:
    """Per mode, the steps with less than FIGURE_FIRST px (or their whole plot) on screen."""
    short: dict[str, list] = {}
    for r in results:
        for mode, seen in r["seen"].items():
            if seen is None or seen[0] < min(FIGURE_FIRST, seen[1]) - 1:
                short.setdefault(mode, []).append((r["index"], seen))
    return short


@pytest.mark.parametrize(
    "stride", [pytest.param(8, marks=pytest.mark.every_run), pytest.param(1, marks=pytest.mark.long)]
)
def test_the_first_figure_is_on_screen_in_every_mode_and_every_figure_downloads(session, stride):
    """`make test` measures every fourth step and downloads their figures; `make test-long` every step."""
    page = session.page
    page.set_viewport_size({"width": 1280, "height": 720})
    session.goto("/walk?" + urlencode({**DEFAULT_WALK, "step": "1"}))
    wait_rendered(session, 0)
    results = page.evaluate(WALK, stride)
    assert all(len(r["seen"]) == 4 for r in results), results[0]["seen"]  # the four modes, every step
    short = _short(results)
    assert not short, f"steps whose first figure has < {FIGURE_FIRST} px on screen: {short}"
    links = set()
    for r in results:
        assert r["links"] and all(r["links"]), f"step {r['index']}: a figure without a download link"
        links |= {href for card in r["links"] for href in card if href != "#"}
    answers = page.evaluate(ANSWERS, sorted(links))
    bad = [a for a in answers if a[1] != 200 or a[3] == 0]
    assert not bad, bad[:5]
    kinds = {a[2].split(";")[0] for a in answers}
    assert kinds == {"application/octet-stream", "application/json"}, kinds
    page.evaluate("localStorage.removeItem('xt.largeType')")

    # A clicker's keys (walk/clicker.js): ? lists them, B blanks the screen until any key
    page.keyboard.press("?")
    assert page.locator("#keys-help").is_visible() and "Page Down" in page.text_content("#keys-help")
    page.keyboard.press("Escape")
    assert page.locator("#keys-help").is_hidden()
    at = page.evaluate("window.xt.index")
    page.keyboard.press("b")
    assert page.locator("#blank-screen").is_visible()
    page.keyboard.press("ArrowLeft")  # brings the screen back, moves nothing
    assert page.locator("#blank-screen").is_hidden() and page.evaluate("window.xt.index") == at
    assert_clean(session)
