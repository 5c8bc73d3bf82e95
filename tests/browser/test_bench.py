"""The engineer's bench on the walk page, in one page: the whole tensor's numbers under a figure,
its colour scale (log, per-row, symmetric) drawn, named on the colour bar and kept in the URL
across a reload."""

from __future__ import annotations

import math

from tests.helpers.browser import assert_clean, open_walk, step_index, wait_rendered

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


def test_stats_and_colour_scales(session):
    page = session.page
    open_walk(session)
    index = step_index(session, "layers.0.attention.probs", "forward")
    page.goto(page.url.replace("step=0", f"step={index}"))
    wait_rendered(session, index)
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

    page.reload()
    wait_rendered(session, index)
    assert page.locator(f"{CARD} select.scale-select").input_value() == "row"  # kept in the URL
    assert drawn(page)["title"] == "p / row max|p|"
    assert_clean(session)
