"""The pages in Russian as a class sees them (issue 32's "done means"): the default walkthrough
(the home form's: a 2-layer Llama random init, 4 query heads on 2 key-value heads) step by step
at 1280×720 with no English word outside the allow-list below; a GQA walk and the find-the-bug
lesson on a phone (390×844) and a wide screen (1440×900) with nothing wider than its box or the
screen (Russian words run longer); axe-core's rules on a walk page and a lesson page.

Every step's words are gathered by one evaluate (PAGE_WORDS): the visible text (the frame, the
explanation, the check badges and their messages, the statistics, the figures' numbers tables), the titles and labels a
screen reader or a hover shows, and every figure's own words, drawn or not: its title, axis and
colour-bar titles, trace names, annotations and hover templates. `make test` walks a sample of
steps, one of each kind of figure; the whole walk (84 steps, about 25 s) is `make test-long`'s.

The allow-list (RUSSIAN_KEEPS) is what a Russian ML course writes in Latin letters too: the
formulas' symbols and functions, the names of model parts (RMSNorm, SwiGLU, RoPE, GQA), file
formats and keycaps; a token of one or two letters (x, dL, Wq, hd) is a symbol. Beyond it, the
recorded tensors' and parameters' names and the ops' kinds (code identifiers, e.g.
layers.0.attention.q_rot, rmsnorm: taken from the trace, never typed here) and the spec's own text."""

from __future__ import annotations

import contextlib
import re
from urllib.parse import urlencode

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from app.spec import DEFAULT_TEXT
from tests.helpers.browser import assert_clean, axe_violations, wait_rendered

RUSSIAN_KEEPS = {
    # model parts and methods, as Russian courses name them
    *("RMSNorm", "LayerNorm", "SwiGLU", "RoPE", "GQA", "LM", "FFN", "AdamW", "SGD", "GELU"),
    # the formulas' functions and symbols (static/js, app/steps/formulas.py): silu(a), attn, ffn, ...
    *(
        "softmax",
        "silu",
        "gelu",
        "exp",
        "log",
        "ln",
        "max",
        "min",
        "mean",
        "diag",
        "cos",
        "sin",
        "argmax",
        "sign",
        "sum",
    ),
    *("RMS", "adam"),  # the update's RMS(ΔW)/RMS(W) and AdamW's ε_adam
    *("attn", "ffn", "onehot", "inv", "mach", "dres"),  # p − onehot; ε_mach; the seed's inv, dres
    # the two parameters whose names are one word (code: the final norm's gain, an untied LM head)
    *("norm", "output"),
    # numbers and types: NumPy's dtype and its names, not-a-number and infinity
    *("dtype", "float32", "float64", "NaN", "inf", "char"),
    # file formats, keycaps, the brand, a QR code
    *("npy", "json", "CSV", "PNG", "Page", "Down", "Up", "Home", "End", "Shift", "Esc", "xt", "QR"),
}
LATIN = re.compile(r"[A-Za-z](?:[A-Za-z0-9_.]*[A-Za-z0-9_])?")  # "np.add.at" is one (code)

PAGE_WORDS = """async () => {
  // the figures' numbers tables are read open, built on their toggle event (the whole tensor's
  // pager asks the server: left shut)
  for (const details of document.querySelectorAll("#step details:not(.numbers-whole)")) details.open = true;
  await new Promise((done) => setTimeout(done, 0));
  const out = [];
  // a language's own name in the switch (lang="en") and code are not Russian text
  const skip = (el) =>
    el.closest("[lang]")?.lang !== "ru" || el.closest("script, style, code, math, .katex, [translate=no], .modebar");
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (parent && !skip(parent) && parent.getClientRects().length > 0) out.push(node.textContent);
  }
  for (const el of document.querySelectorAll("[title], [aria-label], [placeholder], [alt]"))
    if (!skip(el) && !el.matches(".math"))  // a formula's title is its LaTeX source
      for (const name of ["title", "aria-label", "placeholder", "alt"]) out.push(el.getAttribute(name) || "");
  const words = (title) => (title == null ? "" : typeof title === "string" ? title : title.text || "");
  for (const plot of document.querySelectorAll(".js-plotly-plot")) {
    const layout = plot.layout || {};
    out.push(words(layout.title));
    for (const [key, value] of Object.entries(layout)) {
      if (/^[xy]axis\\d*$/.test(key)) out.push(words(value.title));
      if (/^coloraxis\\d*$/.test(key)) out.push(words(value.colorbar?.title));
    }
    for (const note of layout.annotations || []) out.push(note.text || "");
    for (const trace of plot.data || []) {
      out.push(trace.name || "", words(trace.colorbar?.title));
      out.push((trace.hovertemplate || "").replace(/%\\{[^}]*\\}|<[^>]*>/g, " "));
      if (typeof trace.text === "string") out.push(trace.text);
    }
  }
  return out.join("\\n");
}"""


def english_words(text: str, keeps: set[str], tensors: set[str]) -> set[str]:
    """The Latin words of `text` that are neither symbols (two letters or fewer), nor code (an
    underscore, a dot or a digit in it), nor kept; "dscores" is d and a recorded tensor's name
    (its gradient, dL/dscores)."""
    found = set()
    for word in LATIN.findall(text):
        if len(word) <= 2 or any(c in "_." or c.isdigit() for c in word) or word in keeps:
            continue
        if word.startswith("d") and (word[1:] in keeps | tensors or len(word) <= 3):  # dL/dscores, dxb
            continue
        found.add(word)
    return found


def trace_names(page) -> tuple[set[str], set[str]]:
    """The recorded tensors' names of the page's trace (embedding, logits, layers.0.attention.q),
    and their last parts (scores, q_rot): a gradient's name says dL/dscores."""
    names = set(page.evaluate("window.xt.trace.steps.map((s) => s.name)"))
    return names, {name.rsplit(".", 1)[-1] for name in names}


def walk_in_russian(session, query: dict, width: int, height: int) -> None:
    session.page.set_viewport_size({"width": width, "height": height})
    session.goto("/walk?" + urlencode({**query, "lang": "ru"}))
    wait_rendered(session, 0)


def go_to(session, index: int) -> None:
    """Step `index`, by the keyboard (Home, then → as a presenter's clicker does, or End)."""
    page = session.page
    if index == page.evaluate("window.xt.trace.steps.length") - 1:
        page.keyboard.press("End")
    else:
        page.evaluate(f"document.querySelector('.cell[data-index=\"{index}\"]').click()")
    wait_rendered(session, index)


def english_per_step(session, indices) -> dict[str, set[str]]:
    page = session.page
    names, tensors = trace_names(page)
    keeps = RUSSIAN_KEEPS | names | set(LATIN.findall(DEFAULT_TEXT))
    found = {}
    for index in indices:
        if index:
            go_to(session, index)
        english = english_words(page.evaluate(PAGE_WORDS), keeps, tensors)
        if english:
            found[page.evaluate(f"window.xt.trace.steps[{index}].title")] = english
    return found


@pytest.fixture
def in_russian(session):
    yield session
    session.page.context.clear_cookies(name="xt_lang")  # the next tests' pages are English again


@pytest.mark.long  # 84 steps, about 25 s on the shared 2-core machine
def test_every_step_of_the_default_walk_in_russian_has_no_english_word(in_russian):
    walk_in_russian(in_russian, {}, 1280, 720)
    count = in_russian.page.evaluate("window.xt.trace.steps.length")
    found = english_per_step(in_russian, range(count))
    assert found == {}, f"English words on the Russian walk: {found}"
    assert_clean(in_russian)


@pytest.mark.long  # two more walks: one trained first, one with a planted bug
def test_the_update_step_and_the_bug_labs_chart_in_russian_have_no_english_word(in_russian):
    """The default walkthrough trained 2 AdamW steps first, on its update step (the last); and with
    a planted bug, on its first backward step once the chart of every step's check is drawn."""
    page = in_russian.page
    walk_in_russian(in_russian, {"optimizer": "adamw", "train_steps": "2"}, 1280, 720)
    last = page.evaluate("window.xt.trace.steps.length") - 1
    found = english_per_step(in_russian, [last])
    walk_in_russian(in_russian, {"faults": "softmax_missing_sum_term"}, 1280, 720)
    page.wait_for_selector(
        "#checks-plot.js-plotly-plot", state="attached", timeout=120_000
    )  # checked in the background
    backward = next(s["index"] for s in page.evaluate("window.xt.trace.steps") if s["phase"] == "backward")
    found |= english_per_step(in_russian, [backward])
    assert found == {}, f"English words on the Russian walk: {found}"
    assert_clean(in_russian)


def step_indices(session, keys) -> list[int]:
    steps = session.page.evaluate("window.xt.trace.steps")
    index = {f"{s['name']}/{s['phase']}": s["index"] for s in steps}
    return sorted(index[key] for key in keys)


# What reaches past the screen's right edge, and what spills out of its own box, outside the
# boxes that scroll on purpose (the timeline, a wide table), those that cut with an ellipsis (the
# step's name: its title holds it whole) and the figures' own SVG.
OVERFLOW = """() => {
  const scrolls = (el) => ["auto", "scroll"].includes(getComputedStyle(el).overflowX);
  const inScroller = (el) => {
    for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) if (scrolls(up)) return true;
    return false;
  };
  const name = (el) => `${el.tagName.toLowerCase()}#${el.id}.${String(el.className.baseVal ?? el.className).trim()}`;
  const found = [];
  for (const el of document.querySelectorAll("body *")) {
    if (el.closest("svg, .js-plotly-plot, math, script, style") || el.getClientRects().length === 0 || inScroller(el))
      continue;
    // a box of 1 px is visually hidden (its words are for a screen reader); an ellipsis cuts on purpose
    const cut = el.clientWidth <= 1 || getComputedStyle(el).textOverflow === "ellipsis";
    const spills = !scrolls(el) && !cut && el.scrollWidth > el.clientWidth + 1;
    if (el.getBoundingClientRect().right > innerWidth + 1 || spills)
      found.push(`${name(el)} (${el.scrollWidth} in ${el.clientWidth}): ${(el.textContent || "").trim().slice(0, 50)}`);
  }
  if (document.scrollingElement.scrollWidth > innerWidth) found.push(`the page: ${document.scrollingElement.scrollWidth}`);
  return found.slice(0, 8);
}"""
SCREENS = ((390, 844), (1440, 900))  # a phone, a wide screen
GQA_SAMPLED = ("layers.0.attention.scores/forward", "layers.0.attention.probs/backward")
GQA = {"text": DEFAULT_TEXT, "n_layer": "1", "n_head": "4", "n_kv_head": "2", "n_embd": "32", "ffn_hidden": "64"}


def settled(page) -> None:
    """Waits (3 s at most) for nothing to spill: a figure drawn while the lesson panel took its
    column is redrawn at the narrower width a frame later (lib/figures.js), and a loaded machine
    may measure in between. What still spills after that is what a reader sees."""
    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_function(f"() => ({OVERFLOW})().length === 0", timeout=3_000)


def lesson_in_russian(session, name: str, stops: int) -> list[str]:
    """The lesson's first `stops` stops, each checked for overflow: what spills, by stop."""
    page = session.page
    session.goto(f"/lessons/{name}?lang=ru")
    found = []
    for k in range(stops):
        if k:
            page.click("#lesson-panel button:has-text('▶')")
        page.wait_for_selector(f"#lesson-panel[data-drawn='{k}']")
        settled(page)
        found += [f"stop {k + 1}: {spill}" for spill in page.evaluate(OVERFLOW)]
    return found


def test_a_gqa_walk_and_the_find_the_bug_lesson_in_russian_fit_a_phone_and_a_wide_screen(in_russian, axe):
    """4 query heads on 2 key-value heads (GQA) and the lesson's first stops, at 390×844 and
    1440×900: nothing reaches past the screen or spills from its box; axe-core finds nothing
    on the walk page or the lesson page."""
    page = in_russian.page
    spilled, violations = [], []
    for width, height in SCREENS:
        walk_in_russian(in_russian, GQA, width, height)
        for index in step_indices(in_russian, GQA_SAMPLED):
            go_to(in_russian, index)
            spilled += [f"{width} px, step {index + 1}: {spill}" for spill in page.evaluate(OVERFLOW)]
        if width == SCREENS[-1][0]:
            violations += [f"walk: {v}" for v in axe_violations(page, axe)]
        spilled += [f"{width} px, find-the-bug {spill}" for spill in lesson_in_russian(in_russian, "find-the-bug", 2)]
    violations += [f"lesson: {v}" for v in axe_violations(page, axe)]
    assert spilled == [], spilled
    assert violations == [], violations
    assert_clean(in_russian)
