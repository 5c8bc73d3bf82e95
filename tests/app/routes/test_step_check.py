"""A large model's step view answers before its gradient check (settings.view_check_max_params):
`gradcheck` pending, the check at GET .../steps/{index}/check, the same numbers either way."""

from __future__ import annotations

import pytest

from tests.helpers.client import make_client, post_trace
from tests.helpers.specs import SMALL_SPEC

UPDATE = {
    **SMALL_SPEC,
    "faults": ["softmax_missing_sum_term"],
    "optimizer": {"name": "sgd", "lr": 0.1},
}  # the update step's own view and warning


@pytest.fixture(scope="module")
def deferred():
    with make_client(view_check_max_params=0) as c:  # every model counts as large
        yield c


@pytest.fixture(scope="module")
def inline():
    with make_client() as c:
        yield c


def test_a_deferred_view_holds_no_check_and_the_check_route_answers_it(deferred, inline):
    """UPDATE's steps hold every kind of step: checks that pass, the fault's that fails, the update."""
    late, now = post_trace(deferred, UPDATE), post_trace(inline, UPDATE)
    warned = []
    for step in late["steps"]:
        view = deferred.get(f"/api/traces/{late['id']}/steps/{step['index']}").json()
        full = inline.get(f"/api/traces/{now['id']}/steps/{step['index']}").json()
        assert view["gradcheck"] == {"pending": True}
        failed = [w for w in full["warnings"] if w.startswith("The gradient check failed")]
        assert view["warnings"] == [w for w in full["warnings"] if w not in failed]
        assert {k: v for k, v in view.items() if k not in ("gradcheck", "warnings")} == {
            k: v for k, v in full.items() if k not in ("gradcheck", "warnings")
        }
        check = deferred.get(f"/api/traces/{late['id']}/steps/{step['index']}/check").json()
        assert check == {"index": step["index"], "gradcheck": full["gradcheck"], "warning": (failed or [None])[0]}
        warned += [step["phase"]] if check["warning"] else []
    assert "backward" in warned  # the fault's step fails, with the view's warning
    assert late["steps"][-1]["phase"] == "update"


def test_the_check_route_keeps_a_quiz_sealed_and_refuses_bad_steps(deferred, inline):
    for client in (deferred, inline):
        quiz = post_trace(client, {**SMALL_SPEC, "quiz": 23})
        base = f"/api/traces/{quiz['id']}"
        for index in (0, len(quiz["steps"]) - 1):
            assert client.get(f"{base}/steps/{index}").json()["gradcheck"] == {"sealed": True}
            assert client.get(f"{base}/steps/{index}/check").json() == {
                "index": index,
                "gradcheck": {"sealed": True},
                "warning": None,
            }
        client.post(f"{base}/quiz/probe", json={"step": 0})
        assert "passed" in client.get(f"{base}/steps/0/check").json()["gradcheck"]  # probed: shown
        assert client.get(f"{base}/steps/{len(quiz['steps'])}/check").status_code == 404
        assert client.get("/api/traces/nope/steps/0/check").status_code == 404
