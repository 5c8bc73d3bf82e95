"""Follower lag for the enlarged head on a phone-sized page (issue 34): a class on the
backprop-attention lesson, the presenter (the API, with its key) enlarges a head of the step's
grid at a stop whose marked figure lies below the phone's fold, and a 390×844 Chromium page
following the class opens the same head. Real server (uvicorn on 127.0.0.1), Debian's chromium
through Playwright:

    .venv/bin/python benchmarks/follower_lag.py [--runs 8]

Each run: the presenter moves the class to that stop with a head enlarged; the lag is from the
POST leaving here to the follower's dialog opening (both clocks are this machine's: the page
reports Date.now() when its <dialog open> appears); then the presenter closes the dialog and the
lag to its closing is timed too. Prints the CPU, each run and the median. `--baseline DIR` serves
another checkout (before the fix: `git archive aded1f1~1 | tar -x -C DIR`)."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.helpers.server import running_server  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
PHONE = {"width": 390, "height": 844}
LESSON = "backprop-attention"
STOP = 4  # the softmax's backward: its grid of heads first, the marked figure below the fold
GRID = "arriving.layers.1.attention.probs"
SPEC = {"model": "text", "text": "the cat sat on the mat."}  # lessons/backprop-attention.toml's

# Date.now() of each change of #enlarge's open attribute: [[open, ms], ...]
WATCH = """() => {
  window.__head = [];
  const dialog = document.getElementById("enlarge");
  new MutationObserver(() => window.__head.push([dialog.open, Date.now()]))
    .observe(dialog, {attributes: true, attributeFilter: ["open"]});
}"""


def cpu_name() -> str:
    lines = subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines()
    return next((line.split(":", 1)[1].strip() for line in lines if "Model name" in line), "?")


def timed_change(page, http, code: str, key: str, state: dict, is_open: bool) -> float:
    """ms from the presenter's POST to the follower's dialog being `is_open`."""
    seen = page.evaluate("window.__head.length")
    sent = time.time() * 1000
    http.post(f"/api/sessions/{code}/state", json=state, headers={"X-Presenter-Key": key}).raise_for_status()
    page.wait_for_selector("#enlarge[open]" if is_open else "#enlarge:not([open])", state="attached", timeout=60_000)
    changes = page.evaluate(f"window.__head.slice({seen})")
    changed = next(ms for opened, ms in changes if opened is is_open)
    return changed - sent


def run(base: str, runs: int) -> list[tuple[float, float]]:
    from playwright.sync_api import sync_playwright

    http = httpx.Client(base_url=base, timeout=120)
    lesson = http.get(f"/api/lessons/{LESSON}").json()
    stop = lesson["steps"][STOP]
    results = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for _ in range(runs):
            opened = http.post("/api/sessions", json={"spec": SPEC, "lesson": LESSON})
            opened.raise_for_status()
            code, key = opened.json()["code"], opened.json()["presenter_key"]
            context = browser.new_context(viewport=PHONE, base_url=base, has_touch=True)
            page = context.new_page()
            page.goto(f"/join/{code.lower()}")
            page.wait_for_selector("#lesson-panel[data-drawn='0']", timeout=60_000)
            page.evaluate(WATCH)
            state = {"step": stop["index"], "lesson": LESSON, "lesson_step": STOP, "head": {"figure": GRID, "head": 2}}
            shown = timed_change(page, http, code, key, state, True)
            closed = timed_change(page, http, code, key, {"head": None}, False)
            results.append((shown, closed))
            print(f"  enlarged head shown after {shown:7.0f} ms, closed after {closed:6.0f} ms", flush=True)
            http.delete(f"/api/sessions/{code}", headers={"X-Presenter-Key": key})
            context.close()
        browser.close()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--baseline", type=Path, help="serve another checkout (`git archive <commit> | tar -x -C DIR`)")
    args = parser.parse_args()
    print(f"CPU: {cpu_name()}; {os.cpu_count()} cores; load {os.getloadavg()[0]:.1f}")
    with running_server(**({"root": args.baseline} if args.baseline else {})) as server:
        results = run(server.base, args.runs)
    shown, closed = [r[0] for r in results], [r[1] for r in results]
    print(f"follower lag, 390×844, {LESSON} stop {STOP} (a marked figure below the fold), {len(results)} runs:")
    print(f"  enlarged head shown: median {statistics.median(shown):.0f} ms, max {max(shown):.0f} ms")
    print(f"  closed with the presenter: median {statistics.median(closed):.0f} ms, max {max(closed):.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
