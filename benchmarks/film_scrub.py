"""Scrubbing the film in a browser (docs/film.md, "Attention while scrubbing"): the frame rate of the
film page while the scrubber is dragged, as a ratio against a bare page's frame rate in the same
Chromium process, and the time from opening a step to its first figure. Real server (uvicorn on
127.0.0.1, the shipped run), Debian's chromium through Playwright:

    .venv/bin/python benchmarks/film_scrub.py [--seconds 4] [--visits 3]

Frame rate: requestAnimationFrame callbacks per second. On the bare page each callback does nothing;
on the film each one moves the scrubber 3 steps (an `input` event, as a drag sends: the readout, the
figure's line, the chosen heads' attention at the recorded step nearest) back and forth over steps
600-900, where the run keeps a frame every 5 steps around the steepest fall. "Painted" counts the
attention frames drawn (a new recorded step reached), per second. Measured with the 2 heads shown at
first and with all 8. Opening a step: a fresh browser context each visit (an empty HTTP cache), from
navigation to the film's figure drawn and to the step's attention frame painted; and the walkthrough
of a step (/walk?run=&run_step=, what "open this step" does) to its first figure, at a checkpoint and
at a step replayed from one (the trace built on the first visit is cached by the server after).
Last, which gradients build the head (GET /api/runs/induction/composition) at a checkpoint, near the
fall and at the step farthest from a checkpoint, each asked twice (the second answered from the cache).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.first_figure import CHROMIUM, CHROMIUM_ARGS, FIRST_FIGURE_PROBE  # noqa: E402
from benchmarks.machine import cpu_name  # noqa: E402
from tests.helpers.server import ROOT, running_server  # noqa: E402

RUNS = ROOT / "xt_core" / "checkpoint" / "demos" / "runs"
VIEWPORT = {"width": 1280, "height": 720}

# Counts animation frames for `seconds`; with `scrub`, each one moves the film's scrubber first.
FRAME_RATE = """
async ([seconds, scrub]) => {
  const range = document.getElementById("film-scrub");
  const panel = document.getElementById("film-frames");
  const paintedBefore = Number(panel?.dataset.painted || 0);
  let step = 600, by = 3, frames = 0;
  const started = performance.now();
  await new Promise((resolve) => {
    function tick(now) {
      frames++;
      if (scrub) {
        if (step + by > 900 || step + by < 600) by = -by;
        step += by;
        range.value = String(step);
        range.dispatchEvent(new Event("input"));
      }
      if (now - started < seconds * 1000) requestAnimationFrame(tick);
      else resolve();
    }
    requestAnimationFrame(tick);
  });
  const elapsed = (performance.now() - started) / 1000;
  const painted = panel ? Number(panel.dataset.painted || 0) - paintedBefore : 0;
  return { fps: frames / elapsed, painted: painted / elapsed };
}
"""

FILM_PROBE = """
window.__filmFigure = null; window.__filmFrame = null;
new MutationObserver((records, observer) => {
  if (!window.__filmFigure && document.querySelector("#film-plot .cartesianlayer .trace"))
    window.__filmFigure = performance.now();
  if (!window.__filmFrame && document.querySelector("#film-frames[data-painted]"))
    window.__filmFrame = performance.now();
  if (window.__filmFigure && window.__filmFrame) observer.disconnect();
}).observe(document, { childList: true, subtree: true, attributes: true });
"""


def frame_rates(browser, base: str, seconds: float) -> dict:
    page = browser.new_page(viewport=VIEWPORT)
    page.set_content("<!doctype html><title>bare</title><p>a bare page</p>")
    bare = page.evaluate(FRAME_RATE, [seconds, False])
    page.goto(f"{base}/film?run=induction&step=600")
    page.wait_for_selector("#film[data-ready]")
    two = page.evaluate(FRAME_RATE, [seconds, True])
    for box in page.locator("#film-heads input").all():
        box.check()
    eight = page.evaluate(FRAME_RATE, [seconds, True])
    page.close()
    return {"bare": bare, "two heads": two, "eight heads": eight}


def film_opened(browser, base: str, step: int) -> tuple[float, float]:
    context = browser.new_context(viewport=VIEWPORT)
    context.add_init_script(FILM_PROBE)
    page = context.new_page()
    page.goto(f"{base}/film?run=induction&step={step}")
    page.wait_for_function("() => window.__filmFigure && window.__filmFrame", timeout=120_000)
    times = page.evaluate("[window.__filmFigure, window.__filmFrame]")
    context.close()
    return times[0] / 1000, times[1] / 1000


def walk_opened(browser, base: str, step: int) -> float:
    context = browser.new_context(viewport=VIEWPORT)
    context.add_init_script(FIRST_FIGURE_PROBE)
    page = context.new_page()
    page.goto(f"{base}/walk?run=induction&run_step={step}")
    page.wait_for_function("() => window.__firstFigure", timeout=300_000)
    seconds = page.evaluate("window.__firstFigure") / 1000
    context.close()
    return seconds


def composition_times(base: str) -> None:
    for step, ahead in ((1000, 50), (760, 50), (499, 100)):
        seconds = []
        for _ in range(2):
            started = time.perf_counter()
            answer = httpx.get(
                f"{base}/api/runs/induction/composition", params={"step": step, "ahead": ahead}, timeout=600
            )
            answer.raise_for_status()
            seconds.append(time.perf_counter() - started)
        replayed = answer.json()["replayed"]
        print(
            f"composition at step {step} ({replayed} replayed, {ahead} ahead): {seconds[0]:.2f} s, again {seconds[1]:.3f} s"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="seconds each frame rate is counted (default 4)")
    parser.add_argument("--visits", type=int, default=3, help="fresh-context visits per opening (default 3)")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with running_server(env={"XT_RUNS_DIR": str(RUNS)}) as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        print(f"{cpu_name()}, load average {os.getloadavg()[0]:.1f}; Chromium {browser.version}")
        rates = frame_rates(browser, server.base, args.seconds)
        bare = rates["bare"]["fps"]
        for label, rate in rates.items():
            ratio = rate["fps"] / bare
            print(
                f"{label:12s} {rate['fps']:6.1f} frames/s ({ratio:.2f} of the bare page), {rate['painted']:5.1f} attention frames painted/s"
            )
        for step in (1000, 760):
            visits = [film_opened(browser, server.base, step) for _ in range(args.visits)]
            figure = statistics.median(v[0] for v in visits)
            frame = statistics.median(v[1] for v in visits)
            print(
                f"film at step {step}: its figure {figure:.2f} s, its attention frame {frame:.2f} s (median of {args.visits})"
            )
        for step in (1000, 800):
            first, *again = [walk_opened(browser, server.base, step) for _ in range(args.visits)]
            cached = f", {statistics.median(again):.2f} s again (the trace cached)" if again else ""
            print(f"walkthrough of step {step}: first figure {first:.2f} s on the first visit{cached}")
        browser.close()
        composition_times(server.base)


if __name__ == "__main__":
    main()
