"""The engineer's bench on the walk page, in one page (one load and one reload: cheap): the whole
tensor's numbers under a figure; its colour scale (log, per-row) drawn, named on the colour bar
and kept in the URL; the numbers pager jumped to a token and a selection copied as CSV equal to
the .npy; "Compare with…" float64 showing float32's round-off, kept in the URL."""

from __future__ import annotations

import io
import json
import math
import urllib.request

import numpy as np
import pytest

from tests.helpers.browser import ONE_LAYER, TEXT, assert_clean, open_walk, wait_rendered

PROBS = "output.layers.0.attention.probs"
CARD = f"figure.figure-card[data-figure='{PROBS}']"


def drawn(page) -> dict:
    """The probs figure as Plotly holds it: head 0's z and customdata, and the colour bar's title."""
    page.locator(CARD).scroll_into_view_if_needed()
    page.wait_for_function("(card) => document.querySelector(card + ' .plot').data", arg=CARD)
    return page.evaluate(
        """(card) => {
          const gd = document.querySelector(card + ' .plot');
          const t = gd.data[0];
          return {z: t.z, custom: t.customdata || null, title: gd.layout.coloraxis.colorbar.title.text,
                  cmin: gd.layout.coloraxis.cmin ?? null};
        }""",
        CARD,
    )


def probs_step(base: str) -> int:
    """The walk's step index of layer 0's attention softmax (the spec POSTed: the page finds it built)."""
    spec = {"text": TEXT, "config": {k: int(v) for k, v in ONE_LAYER.items()}}
    request = urllib.request.Request(
        f"{base}/api/traces", json.dumps(spec).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request) as answer:
        steps = json.load(answer)["steps"]
    return next(s["index"] for s in steps if s["name"] == "layers.0.attention.probs" and s["phase"] == "forward")


@pytest.mark.every_run
def test_the_bench(session):
    """Stats and colour scales, then the numbers pager, then a compare, on one page."""
    page = session.page
    index = probs_step(session.base)
    open_walk(session, step=index)
    stats = page.locator(f"{CARD} .tensor-stats")
    assert "argmax" in stats.inner_text() and "(B, H, T, T)" in stats.inner_text()
    linear = drawn(page)
    assert linear["title"] == "p" and linear["custom"] is None

    page.select_option(f"{CARD} select.scale-select", "log")
    page.wait_for_function(f"document.querySelector(\"{CARD} .plot\").layout.coloraxis.colorbar.title.text !== 'p'")
    logged = drawn(page)
    assert logged["title"] == "log₁₀|p|" and "scale." + PROBS + "=log" in page.url
    for row, original in zip(logged["z"], logged["custom"], strict=True):
        for shown, value in zip(row, original, strict=True):
            assert (shown is None and not value) or math.isclose(shown, math.log10(value), rel_tol=1e-6, abs_tol=1e-6)
    assert page.locator(f"{CARD} .cbtitle").text_content().startswith("log")  # the colour bar says which

    page.select_option(f"{CARD} select.scale-select", "row")
    page.wait_for_function(
        f"document.querySelector(\"{CARD} .plot\").layout.coloraxis.colorbar.title.text.includes('row')"
    )
    rows = drawn(page)["z"]
    assert all(math.isclose(max(v for v in row if v is not None), 1.0, rel_tol=1e-6) for row in rows)

    numbers_pager(session)
    compare_float64(session, index)
    assert_clean(session)


def numbers_pager(session):
    """The whole tensor a page at a time: jumped to a token, a selection copied as CSV equal to
    the .npy's numbers."""
    page = session.page
    page.locator(f"{CARD} details.numbers-whole > summary").click()
    pager = page.locator(f"{CARD} .numbers-pager")
    pager.locator("table").wait_for()
    page.select_option(f"{CARD} .numbers-controls select", "token")
    page.fill(f"{CARD} .jump-value", "m")
    page.press(f"{CARD} .jump-value", "Enter")
    labels = page.evaluate("window.xt.trace.tokens.input_labels[0]")
    row = labels.index("m")
    page.wait_for_function(
        "(row) => document.querySelector('.numbers-pager tbody th')?.textContent.startsWith(row + ' ')", arg=row
    )
    cells = pager.locator("td")
    width = pager.locator("tbody tr").first.locator("td").count()  # a page's columns
    cells.nth(0).click()
    cells.nth(width + 2).click(modifiers=["Shift"])  # rows row..row+1, columns 0..2
    pager.get_by_role("button", name="copy the selected cells").click()
    csv = pager.locator("textarea.numbers-csv").input_value().splitlines()
    download = page.locator(CARD).evaluate("el => el.dataset.figure")
    assert download == PROBS
    trace_id = page.evaluate("window.xt.trace.id")
    with urllib.request.urlopen(f"{session.base}/api/traces/{trace_id}/tensors/layers.0.attention.probs") as answer:
        probs = np.load(io.BytesIO(answer.read()))
    assert csv[0].split(",")[1:] == [f"{i} {labels[i]}" for i in range(3)]
    for offset, line in enumerate(csv[1:]):
        np.testing.assert_array_equal([float(v) for v in line.split(",")[1:]], probs[0, 0, row + offset, :3])


def compare_float64(session, index: int):
    """ "Compare with…" float64: float32's round-off; a reload keeps B's spec and the colour scale."""
    page = session.page
    page.select_option(".compare-preset", "dtype")
    page.click(".compare-controls button:has-text('Compare')")
    page.wait_for_selector(".compare-result[data-compared]")
    headings = page.locator(".compare-tensor h3").all_inner_texts()
    rel = [float(h.split("‖A‖₂ = ")[1].split(",")[0]) for h in headings]
    assert all(1e-9 < r < 1e-5 for r in rel), headings  # float32 against float64
    assert "compare=" in page.url
    page.reload()
    wait_rendered(session, index)
    page.wait_for_selector(".compare-result[data-compared]")  # the permalink carries B's spec
    assert page.locator(".compare-tensor h3").all_inner_texts() == headings
    assert page.locator(f"{CARD} select.scale-select").input_value() == "row"  # kept in the URL too
    assert drawn(page)["title"] == "p / row max|p|"
