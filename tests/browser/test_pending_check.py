"""A large model's step view comes before its gradient check (settings.view_check_max_params):
the page shows the view, asks for the check and shows its badge, its details and a failed
check's warning when it comes. Here on a toy model, on a server that defers every check."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from tests.helpers.browser import ONE_LAYER, TEXT, assert_clean, open_session, wait_rendered
from tests.helpers.server import running_server
from xt_core.lab.faults import CATALOGUE

FAULT = "softmax_missing_sum_term"


@pytest.fixture(scope="module")
def deferring(tmp_path_factory):
    env = {"XT_VIEW_CHECK_MAX_PARAMS": "0", "XT_MODELS_DIR": str(tmp_path_factory.mktemp("models"))}
    with running_server(env) as server:
        yield server.base


@pytest.mark.long  # a server of its own (checks deferred): make test-long (tests/conftest.py in_long_tier)
def test_the_badge_waits_for_its_check_then_shows_the_verdict(context, deferring):
    with open_session(context, deferring) as session:
        page = session.page
        spec = {"text": TEXT, "config": {k: int(v) for k, v in ONE_LAYER.items()}, "faults": [FAULT]}
        trace = page.request.post(f"{deferring}/api/traces", data=spec).json()
        broken = next(
            s["index"]
            for s in trace["steps"]
            if s["name"] == CATALOGUE[FAULT].step_name(0) and s["phase"] == "backward"
        )
        view = page.request.get(f"{deferring}/api/traces/{trace['id']}/steps/{broken}").json()
        assert view["gradcheck"] == {"pending": True} and not view["warnings"]
        session.goto(f"/walk?{urlencode({**trace['query'], 'step': broken + 1})}")
        wait_rendered(session, broken)
        badge = page.locator("#step .gradcheck.badge-bad")
        badge.wait_for()
        assert "✗" in badge.text_content() and page.locator("#step .gradcheck.pending").count() == 0
        assert "gradient check failed" in page.locator("#step .step-warnings").text_content()
        assert page.locator("#step .figures + .gradcheck-details").count() == 1  # below the figures
        passing = next(  # a step the fault leaves right (the forward steps before it, the backward ones after)
            s["index"]
            for s in trace["steps"]
            if page.request.get(f"{deferring}/api/traces/{trace['id']}/steps/{s['index']}/check").json()["warning"]
            is None
        )
        page.evaluate(f"document.querySelector('.cell[data-index=\"{passing}\"]').click()")
        wait_rendered(session, passing)
        page.locator("#step .gradcheck.badge-ok").wait_for()
        assert page.locator("#step .step-warnings").count() == 0 and page.locator("#step .gradcheck").count() == 1
        assert_clean(session)
