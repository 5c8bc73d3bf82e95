"""Driving the pages in Debian's chromium (Playwright): the launch settings, the per-test
Session (what the browser reported), and the page moves the browser tests share."""

from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    *__import__("os").environ.get("XT_EXTRA_CHROMIUM", "").split(),
]
VIEWPORT = {"width": 1366, "height": 768}  # a common projector resolution

# A 1-layer model small enough to step through quickly; 4 heads so attention is a grid.
ONE_LAYER = {"n_layer": "1", "n_head": "4", "n_kv_head": "2", "n_embd": "32", "ffn_hidden": "64", "seq_len": "64"}
TEXT = "the cat sat on the mat."


@dataclass
class Session:
    """A page plus what the browser reported while the test ran."""

    page: object
    base: str
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)

    def goto(self, path: str):
        return self.page.goto(self.base + path)

    def screenshot(self, name: str, full_page: bool = False) -> Path:
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=full_page)
        return path


@contextmanager
def open_session(context, base: str):
    """A new page of `context` on the server at `base`, recording what the browser reports
    (console errors, page errors, dialogs, requests to anywhere but that server: the app is
    offline); closed afterwards, its localStorage cleared. Each test is a learner of its own: the
    profile is the run's, but its cookies (the learner's and the seat's, app.sessions.voters) are not,
    or a quiz's probes one test spent would be gone from the next test that opens the same quiz."""
    context.clear_cookies()
    page = context.new_page()
    page.set_default_timeout(20_000)
    state = Session(page, base)
    page.on("console", lambda message: message.type == "error" and state.errors.append(message.text))
    page.on("pageerror", lambda error: state.errors.append(f"pageerror: {error}"))

    def on_dialog(dialog):
        state.dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on("request", lambda request: request.url.startswith((base, "data:")) or state.outside.append(request.url))
    try:
        yield state
    finally:
        if page.url.startswith(base):
            page.evaluate("window.localStorage.clear()")
        page.close()


PHONE = {"width": 390, "height": 844}


@contextmanager
def phone_page(browser, base: str):
    """A student's phone: a page of a fresh context of its own (no storage shared with another
    machine's), touch, 390×844; yields (page, errors: its console and page errors); closed after."""
    context = browser.new_context(viewport=PHONE, base_url=base, has_touch=True)
    page = context.new_page()
    page.set_default_timeout(30_000)
    errors = []
    page.on("pageerror", lambda error: errors.append(f"pageerror: {error}"))
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    try:
        yield page, errors
    finally:
        context.close()


def next_stops(page, last: int) -> None:
    """From a lesson's first stop to stop `last` by the panel's Next, each drawn (its marks on)."""
    for k in range(1, last + 1):
        page.click("#lesson-panel button:has-text('Next')")
        page.wait_for_selector(f"#lesson-panel[data-drawn='{k}']")


def fill_home(session: Session, text: str, **config: str) -> None:
    page = session.page
    session.goto("/")
    # The home page starts on the first walk (a demo checkpoint, its SGD update): sizes need a
    # random init, and the walks here end with the backward pass.
    page.wait_for_selector("#start-form[data-models-loaded]")
    page.select_option("#f-model", "")
    page.select_option("#f-optimizer", "")
    page.fill("#f-text", text)
    for name, value in config.items():
        if name in ("vocab_size", "tie_embeddings", "rope_theta", "norm_eps"):
            page.locator("details.more-sizes").evaluate("d => d.open = true")
        page.fill(f"#f-{name}", value)


def open_walk(session: Session, text: str = TEXT, step: int = 0, **config: str) -> None:
    """The walk of `text` (ONE_LAYER unless sizes are given) opened at its permalink, on `step` (an index):
    one page load (start_walk goes through the home form)."""
    session.goto("/walk?" + urlencode({"text": text, **(config or ONE_LAYER), "step": str(step + 1)}))
    wait_rendered(session, step)


def start_walk(session: Session, text: str = TEXT, **config: str) -> None:
    """From the home form to the walk's first step, index 0 (ONE_LAYER unless sizes are given)."""
    fill_home(session, text, **(config or ONE_LAYER))
    session.page.click("#start")
    session.page.wait_for_url(re.compile(r"/walk\?.*step=1\b"))
    wait_rendered(session, 0)


def wait_rendered(session: Session, index: int) -> None:
    session.page.wait_for_selector(f'#step[data-rendered="{index}"]')


def click_step(session: Session, index: int) -> None:
    """Clicks the step's cell in the strip (scrolled out of view or not) and waits for it."""
    session.page.evaluate(f"document.querySelector('.cell[data-index=\"{index}\"]').click()")
    wait_rendered(session, index)


def open_step(session: Session, name: str, phase: str) -> int:
    """Clicks the walk's step `name` of `phase` (e.g. "layers.0.attention.probs", "backward"); its index."""
    index = step_index(session, name, phase)
    click_step(session, index)
    return index


def shoot(session: Session, name: str, selector: str | None = None) -> None:
    """A viewport screenshot (what the class sees), scrolled to `selector` if given."""
    if selector:
        session.page.locator(selector).first.evaluate("el => el.scrollIntoView({block: 'start'})")
    session.screenshot(name)


def steps(session: Session) -> list[dict]:
    return session.page.evaluate("window.xt.trace.steps")


def url_step(session: Session) -> int:
    """The 0-based step index the page's URL names (its step= counts from 1, as people do)."""
    return int(parse_qs(urlsplit(session.page.url).query)["step"][0]) - 1


def step_index(session: Session, name: str, phase: str) -> int:
    return next(s["index"] for s in steps(session) if s["name"] == name and s["phase"] == phase)


def assert_clean(session: Session) -> None:
    assert session.errors == [], f"browser console errors: {session.errors}"
    assert session.outside == [], f"requests outside the server: {session.outside}"
    assert session.dialogs == []


def axe_violations(page, source: str) -> list[str]:
    """axe-core's violations on the page, one line each (source: axe.min.js, the `axe` fixture)."""
    page.evaluate(source + "\n;0")  # evaluate: the page's CSP forbids inline scripts
    found = page.evaluate("axe.run(document).then((r) => r.violations)")
    return [f"{v['id']}: {v['help']} ({', '.join(' '.join(n['target']) for n in v['nodes'][:3])})" for v in found]


def quiz_hiding(fault: str, query: dict) -> int:
    """A quiz number whose hidden fault, on the live server (LIVE_QUIZ_SECRET), is `fault` for
    the walk of `query`: a test of how a quiz hides one fault does not wait for the draw."""
    from app.settings import Settings
    from app.spec import resolve, spec_from_query
    from app.spec.faults import quiz_fault
    from tests.helpers.server import LIVE_QUIZ_SECRET

    settings = Settings(quiz_secret=LIVE_QUIZ_SECRET)
    cfg = resolve(spec_from_query(query), settings).cfg
    return next(q for q in range(1000) if quiz_fault(q, cfg, settings)[0] == fault)


def quiz_truth(session, trace_id: str) -> dict:
    """What only the server knows of the page's quiz, asked as another learner would after
    answering (a request with no identity of the browser's: the browser's quiz stays sealed):
    {"broken": {"index", ...}, "fault": {"name", ...}}."""
    import json
    import urllib.request

    backward = next(s["index"] for s in steps(session) if s["phase"] == "backward")
    request = urllib.request.Request(
        f"{session.base}/api/traces/{trace_id}/quiz/answer",
        data=json.dumps({"step": backward}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)
