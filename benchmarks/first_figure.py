"""How soon the step-through page draws: from navigation to the first figure in a fresh
browser context (empty HTTP cache, as a first visit), and from a click on "Next" to the next
step fully drawn. Real server (uvicorn on 127.0.0.1), Debian's chromium through Playwright:

    .venv/bin/python benchmarks/first_figure.py [--runs 5] [--steps 12] [--compare-full] [--baseline DIR]

The trace is built once before timing (a warm-up visit), so the numbers are the page's own
critical path (HTML, CSS, Plotly.js, the ES modules, POST /api/traces answered from the
server's cache, the first step's JSON, drawing), not the training step's compute.
`--compare-full` also times the page served by a second server whose only difference is the
full plotly.js bundle of the Python plotly package (benchmarks/_full_bundle.py); `--baseline DIR`
a server run from another checkout (say `git archive <commit> | tar -x -C DIR`). The pages take
turns, visit by visit, so a change in the machine's load hits them alike."""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
from contextlib import ExitStack
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.helpers.server import ROOT, running_server  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
VIEWPORT = {"width": 1366, "height": 768}
DEFAULT_PATH = "/walk?model=text"  # the home page's default: the shipped text demo

# Runs before any page script: the time (ms since navigation start) the step view's first plot
# has drawn a trace (its heatmap image, bars or lines), i.e. the first figure on screen.
FIRST_FIGURE_PROBE = """
window.__firstFigure = null;
new MutationObserver((records, observer) => {
  if (document.querySelector("#step .cartesianlayer .hm image, #step .cartesianlayer .trace")) {
    window.__firstFigure = performance.now();
    observer.disconnect();
  }
}).observe(document, { childList: true, subtree: true });
"""

# The page's requests and milestones, ms since navigation start.
WATERFALL = """
() => {
  const nav = performance.getEntriesByType("navigation")[0];
  const out = performance.getEntriesByType("resource").map((e) => ({
    name: e.name.replace(location.origin, "").slice(0, 70), start: e.startTime, end: e.responseEnd,
  }));
  out.push({ name: "(DOMContentLoaded)", start: nav.domContentLoadedEventStart, end: nav.domContentLoadedEventEnd });
  return out.sort((a, b) => a.start - b.start);
}
"""

# Clicks Next and resolves with the ms until the step view says that step is fully drawn.
NEXT_STEP = """
async (target) => {
  const step = document.getElementById("step");
  const drawn = new Promise((resolve) => {
    const observer = new MutationObserver(() => {
      if (step.dataset.rendered === String(target)) { observer.disconnect(); resolve(); }
    });
    observer.observe(step, { attributes: true, attributeFilter: ["data-rendered"] });
  });
  const started = performance.now();
  document.getElementById("next").click();
  await drawn;
  return performance.now() - started;
}
"""


def canonical_path(base: str, path: str) -> str:
    """The permalink /walk redirects `path` to (timing starts at the page itself)."""
    response = httpx.get(base + path, follow_redirects=False, timeout=120)
    return response.headers["location"] if response.is_redirect else path


def print_waterfall(entries: list[dict], first: float) -> None:
    for e in entries:
        print(f"  {e['start']:7.0f} → {e['end']:7.0f} ms  {e['name']}")
    print(f"  first figure at {first:.0f} ms")


def one_visit(browser, url: str, steps: int, waterfall: bool = False) -> tuple[float, float, list[float]]:
    """(first figure ms, first step fully drawn ms, step-to-step ms) in a fresh context."""
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        page.set_default_timeout(60_000)
        page.add_init_script(FIRST_FIGURE_PROBE)
        page.goto(url, wait_until="commit")
        page.wait_for_selector('#step[data-rendered="0"]')
        first = page.evaluate("window.__firstFigure")
        drawn = page.evaluate("performance.now()")  # an upper bound: read after the wait returns
        if waterfall:
            print_waterfall(page.evaluate(WATERFALL), first)
        nexts = [page.evaluate(NEXT_STEP, i) for i in range(1, steps + 1)]
        return first, drawn, nexts
    finally:
        context.close()


def measure(browser, urls: dict[str, str], runs: int, steps: int, waterfall: bool) -> dict[str, dict]:
    """Timings of `runs` fresh-context visits of each page in `urls` (label -> URL), the
    pages taking turns so that a change in the machine's load hits them alike."""
    results = {label: {"first": [], "drawn": [], "next": []} for label in urls}
    for run in range(runs):
        for label, url in urls.items():
            last = waterfall and run == runs - 1
            if last:
                print(f"{label}, the last visit:")
            first, drawn, step_ms = one_visit(browser, url, steps, last)
            results[label]["first"].append(first)
            results[label]["drawn"].append(drawn)
            results[label]["next"] += step_ms
    return results


def bundle_sizes(base: str, page_path: str) -> str:
    """The Plotly.js bundle a page loads: its URL, raw and gzip bytes as served."""
    page = httpx.get(base + page_path, timeout=120).text
    url = re.search(r'src="(/assets/plotly-[^"]+)"', page).group(1)
    raw = httpx.get(base + url, headers={"Accept-Encoding": "identity"}, timeout=60).content
    zipped = httpx.get(base + url, headers={"Accept-Encoding": "gzip"}, timeout=60).headers["content-length"]
    return f"{url}: {len(raw) / 1e6:.2f} MB raw, {int(zipped) / 1e6:.2f} MB gzip"


def report(label: str, result: dict) -> None:
    first, nxt = result["first"], result["next"]
    print(f"{label}:")
    runs = ", ".join(f"{v:.0f}" for v in first)
    print(f"  first figure  median {statistics.median(first):6.0f} ms   (runs: {runs})")
    print(f"  step to step  median {statistics.median(nxt):6.0f} ms   max {max(nxt):.0f} ms over {len(nxt)} steps")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh-context visits per bundle (default 5)")
    parser.add_argument("--steps", type=int, default=12, help="Next clicks per visit (default 12)")
    parser.add_argument("--path", default=DEFAULT_PATH, help=f"the page (default {DEFAULT_PATH})")
    parser.add_argument("--compare-full", action="store_true", help="also time the full plotly.js bundle")
    parser.add_argument("--waterfall", action="store_true", help="print the last visit's requests and milestones")
    parser.add_argument("--baseline", type=Path, help="also time the page served from this checkout")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    apps = {"this checkout": ("app.main:app", ROOT)}
    if args.compare_full:
        apps["the full plotly.js bundle"] = ("benchmarks._full_bundle:app", ROOT)
    if args.baseline:
        apps[f"baseline {args.baseline}"] = ("app.main:app", args.baseline.resolve())
    with ExitStack() as stack:
        servers = {
            label: stack.enter_context(running_server(app=app, root=root)) for label, (app, root) in apps.items()
        }
        browser = stack.enter_context(sync_playwright()).chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        stack.callback(browser.close)
        urls = {}
        for label, server in servers.items():
            started = time.perf_counter()
            urls[label] = server.base + canonical_path(server.base, args.path)
            one_visit(browser, urls[label], 1)  # builds the trace and the first views on that server
            print(f"{label}: warm-up visit (trace built) {time.perf_counter() - started:.1f} s")
        page = canonical_path(servers["this checkout"].base, args.path)
        print(f"page: {page}")
        for label, server in servers.items():
            print(f"{label}: {bundle_sizes(server.base, page)}")
        load = os.getloadavg()[0]
        results = measure(browser, urls, args.runs, args.steps, args.waterfall)
        print(f"load average (1 min) {load:.1f} before, {os.getloadavg()[0]:.1f} after; {os.cpu_count()} cores")
        for label, result in results.items():
            report(label, result)


if __name__ == "__main__":
    main()
