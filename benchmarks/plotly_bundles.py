"""Plotly.js bundles side by side: how long a browser takes to load and run each one, then to
draw a first heatmap and a next bar chart, in a blank page of a fresh browser context (no code
cache), Debian's chromium through Playwright, the files served on 127.0.0.1:

    .venv/bin/python benchmarks/plotly_bundles.py [--runs 7] [more.min.js ...]

By default xt's bundle (app/vendor/plotly) and the full one of the Python plotly package; any
other file given is timed beside them (npm's plotly.js-cartesian-dist-min, say). The bundles take
turns, run by run, so a change in the machine's load hits them alike."""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import statistics
import sys
import tempfile
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.routes.assets import PLOTLY_JS  # noqa: E402
from benchmarks._full_bundle import FULL_PLOTLY_JS  # noqa: E402
from benchmarks.first_figure import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

# (ms to load and run the bundle, ms to the first heatmap drawn, ms to a bar chart after it)
TIMES = """
async (src) => {
  const t0 = performance.now();
  await new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = src;
    script.onload = resolve;
    script.onerror = reject;
    document.head.append(script);
  });
  const t1 = performance.now();
  const z = Array.from({ length: 64 }, (_, i) => Array.from({ length: 64 }, (_, j) => Math.sin(i * j)));
  const layout = { title: { text: "t" }, annotations: [{ text: "a", x: 0, y: 0 }] };
  await Plotly.newPlot("plot", [{ type: "heatmap", z }], layout);
  const t2 = performance.now();
  await Plotly.newPlot("plot", [{ type: "bar", x: [1, 2, 3], y: [3, 1, 2] }], {});
  return [t1 - t0, t2 - t1, performance.now() - t2];
}
"""


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="fresh-context loads per bundle (default 7)")
    parser.add_argument("more", nargs="*", type=Path, help="other Plotly.js files to time beside them")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    bundles = [PLOTLY_JS, FULL_PLOTLY_JS, *args.more]
    with tempfile.TemporaryDirectory(prefix="xt-bundles-") as tmp:
        names = []
        for k, path in enumerate(bundles):
            names.append(f"{k}-{path.name}")
            shutil.copyfile(path, Path(tmp) / names[-1])
        (Path(tmp) / "index.html").write_text('<!doctype html><html><body><div id="plot"></div></body></html>')
        server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=tmp))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_address[1]}"
        times: dict[str, list] = {name: [] for name in names}
        load = os.getloadavg()[0]
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for _ in range(args.runs):
                for name in names:
                    context = browser.new_context()
                    page = context.new_page()
                    page.goto(f"{base}/index.html")
                    times[name].append(page.evaluate(TIMES, name))
                    context.close()
            browser.close()
        server.shutdown()
    print(f"load average (1 min) {load:.1f} before, {os.getloadavg()[0]:.1f} after; medians of {args.runs}")
    for path, name in zip(bundles, names, strict=True):
        run, heatmap, bars = (statistics.median(column) for column in zip(*times[name], strict=True))
        size = path.stat().st_size / 1e6
        print(
            f"{path} ({size:.2f} MB): load and run {run:.0f} ms, first heatmap {heatmap:.0f} ms, next bars {bars:.0f} ms"
        )


if __name__ == "__main__":
    main()
