"""The Content-Security-Policy (app/security.py) in a real browser: the home page, the walk
through attention heatmaps, the Jacobian and an update step draw with no CSP violation."""

from __future__ import annotations

import pytest

from tests.helpers.browser import assert_clean, click_step, start_walk, step_index

# Runs before any page script (DevTools injects it, so the CSP does not apply to it).
RECORD_VIOLATIONS = """
window.__csp = [];
document.addEventListener("securitypolicyviolation",
  e => window.__csp.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`));
"""


def violations(session) -> list[str]:
    return session.page.evaluate("window.__csp")


@pytest.mark.every_run
def test_pages_draw_with_no_csp_violation(session):
    page = session.page
    page.add_init_script(RECORD_VIOLATIONS)
    response = session.goto("/")
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    assert violations(session) == []
    start_walk(session)
    for name, phase in (("layers.0.attention.probs", "forward"), ("layers.0.attention.probs", "backward"),
                        ("output_probs", "backward"), ("loss", "loss")):  # fmt: skip
        click_step(session, step_index(session, name, phase))
        page.locator(".js-plotly-plot").first.hover()  # Plotly's hover labels and modebar styles
        assert violations(session) == [], (name, phase)
    session.goto("/walk?optimizer=adamw&n_layer=1&n_embd=16&ffn_hidden=24&seq_len=32&text=abcabc&step=0")
    page.wait_for_selector("#step[data-rendered]")
    assert violations(session) == []
    assert_clean(session)
