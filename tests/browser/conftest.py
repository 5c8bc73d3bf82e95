"""Browser tests: the app under uvicorn on 127.0.0.1 (a subprocess, so the server has its
own core and GIL), driven through Debian's chromium by Playwright. Never `playwright
install`: the system chromium is the browser under test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.browser import CHROMIUM, CHROMIUM_ARGS, VIEWPORT, open_session
from tests.helpers.env import required

AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/browser/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def server(live_server) -> str:
    """The run's uvicorn subprocess (tests/conftest.py), by its base URL."""
    return live_server.base


@pytest.fixture(scope="session")
def playwright_driver():
    if not os.path.exists(CHROMIUM):
        message = f"{CHROMIUM} is missing: install Debian's chromium package to run the browser tests"
        if required("XT_REQUIRE_BROWSER"):
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        yield playwright


@pytest.fixture(scope="session")
def context(playwright_driver, server, tmp_path_factory):
    """One browser profile for the run, in a fresh directory: its HTTP cache keeps Plotly.js
    (immutable) between tests, and its code cache V8's compiled Plotly.js. Without the code
    cache (an incognito context) every new page compiles the 4.8 MB again: a walk page took
    3-7 s to load on 2 busy cores, 0.5-1.2 s with it."""
    profile = tmp_path_factory.mktemp("chromium-profile")
    context = playwright_driver.chromium.launch_persistent_context(
        profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS, viewport=VIEWPORT, base_url=server
    )
    yield context
    context.close()


@pytest.fixture(scope="session")
def browser(playwright_driver):
    """A browser for tests that need several separate contexts (two students' machines: no
    shared storage); the other tests share the one persistent profile above."""
    browser = playwright_driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    yield browser
    browser.close()


@pytest.fixture
def session(context, server):
    with open_session(context, server) as state:
        yield state


@pytest.fixture
def axe():
    """axe-core's source (node_modules, from `npm ci`); without it a test that runs axe skips,
    or fails where CI requires the browser tests (XT_REQUIRE_BROWSER)."""
    if not AXE.exists():
        message = f"{AXE} is missing: run `npm ci` (axe-core is a devDependency in package.json)"
        if required("XT_REQUIRE_BROWSER"):
            pytest.fail(message)
        pytest.skip(message)
    return AXE.read_text()
