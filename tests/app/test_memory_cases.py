"""Issue 24's memory cases (tests/helpers/memory_cases.py): each case's peak RSS within the stated
bound (cache_bytes + 512 MB, + SmolLM2's weights where a case loads them). Each starts a real server
and builds SmolLM2 traces (a minute or more in all): they run under XT_LONG_TESTS=1 (`make
loadtest`); `make test` holds the budget's rules in tests/app/test_memory_budget.py."""

from __future__ import annotations

import pytest

from tests.helpers.env import required
from tests.helpers.memory_cases import CASES, run_case
from tests.helpers.real_model import require_smollm2

pytestmark = [
    pytest.mark.server,
    pytest.mark.skipif(not required("XT_LOADTEST"), reason="a minute of SmolLM2 builds: XT_LOADTEST=1 (make loadtest)"),
]


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_memory_case_stays_within_the_stated_bound(name):
    require_smollm2()
    case = run_case(name)
    assert case["peak"] <= case["bound"], case
