"""A diverged run in the browser: the walk page says from which step on the values hold
NaN/inf, marks that step on the timeline, and its button jumps there; a healthy run shows
no such banner."""

from __future__ import annotations

import json
import re
import urllib.request
from urllib.parse import urlencode

import pytest

from tests.helpers.browser import assert_clean, shoot, url_step, wait_rendered
from tests.helpers.specs import DIVERGING_SPEC

FIRST = 7  # layers.0.attention.scores, forward: the 8th step


def walk_url(base: str, spec: dict) -> str:
    """The spec's permalink, as the API spells it (POST /api/traces answers its `query`)."""
    request = urllib.request.Request(
        f"{base}/api/traces", data=json.dumps(spec).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        query = json.load(response)["query"]
    return "/walk?" + urlencode({**query, "step": "1"})


@pytest.mark.every_run
def test_a_diverged_run_shows_where_nan_begins_and_jumps_there(session):
    page = session.page
    session.goto(walk_url(session.base, DIVERGING_SPEC))
    wait_rendered(session, 0)
    banner = page.locator("#diverged-banner")
    assert banner.is_visible()
    text = banner.text_content()
    assert (
        f"From step {FIRST + 1} (layers.0.attention.scores, forward) on, the values hold NaN/inf: "
        "the run diverged — try a smaller learning rate" in text
    ), text
    assert page.evaluate("window.xt.trace.first_nonfinite.index") == FIRST
    marked = page.locator("#timeline .cell.nonfinite-first")
    assert marked.count() == 1 and marked.get_attribute("data-index") == str(FIRST)
    assert "NaN/inf first appear here" in marked.get_attribute("aria-label")
    assert page.locator("#loss").text_content().startswith("NaN or infinite")
    shoot(session, "30-diverged-banner")

    page.click("#diverged-go")
    wait_rendered(session, FIRST)
    assert url_step(session) == FIRST
    step = page.evaluate(f"window.xt.trace.steps[{FIRST}]")
    assert page.locator("#step-title").text_content() == step["title"]
    assert step["name"] == "layers.0.attention.scores" and step["phase"] == "forward"
    warning = page.locator("#step .alert-warning")
    assert re.search(r"layers\.0\.attention\.scores holds \d+ NaN or infinite", warning.first.text_content())
    assert marked.get_attribute("aria-current") == "step"
    badge = page.locator("#step .gradcheck")  # the rule checks fine in float64, the numbers did not
    assert "badge-warn" in badge.get_attribute("class") and "NaN/inf" in badge.text_content()
    shoot(session, "31-diverged-first-step")
    assert_clean(session)


def test_a_healthy_run_shows_no_divergence_banner(session):
    healthy = {key: value for key, value in DIVERGING_SPEC.items() if key not in ("optimizer", "train_steps")}
    session.goto(walk_url(session.base, healthy))
    wait_rendered(session, 0)
    assert session.page.locator("#diverged-banner").is_hidden()
    assert session.page.locator("#timeline .cell.nonfinite-first").count() == 0
    assert_clean(session)
