"""Browser tests: the app under uvicorn on 127.0.0.1 (a subprocess, so the server has its
own core and GIL), driven through Debian's chromium by Playwright. Never `playwright
install`: the system chromium is the browser under test."""

from __future__ import annotations

import os

import pytest

from tests.helpers.browser import CHROMIUM, CHROMIUM_ARGS, VIEWPORT, Session
from tests.helpers.env import required


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/browser/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def server(live_server) -> str:
    """The run's uvicorn subprocess (tests/conftest.py), by its base URL."""
    return live_server.base


@pytest.fixture(scope="session")
def browser():
    if not os.path.exists(CHROMIUM):
        message = f"{CHROMIUM} is missing: install Debian's chromium package to run the browser tests"
        if required("XT_REQUIRE_BROWSER"):
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def context(browser, server):
    """One context for the run: its HTTP cache keeps Plotly.js (immutable) between tests."""
    context = browser.new_context(viewport=VIEWPORT, base_url=server)
    yield context
    context.close()


@pytest.fixture
def session(context, server):
    page = context.new_page()
    page.set_default_timeout(20_000)
    state = Session(page, server)
    page.on("console", lambda message: message.type == "error" and state.errors.append(message.text))
    page.on("pageerror", lambda error: state.errors.append(f"pageerror: {error}"))

    def on_dialog(dialog):
        state.dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    # Offline: nothing may be fetched from anywhere but this server.
    page.on("request", lambda request: request.url.startswith((server, "data:")) or state.outside.append(request.url))
    yield state
    page.evaluate("window.localStorage.clear()") if page.url.startswith(server) else None
    page.close()
