"""Browser tests: the app under uvicorn on 127.0.0.1 (a subprocess, so the server has its
own core and GIL), driven through Debian's chromium by Playwright. Never `playwright
install`: the system chromium is the browser under test."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import required

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT = {"width": 1366, "height": 768}  # a common projector resolution


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/browser/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.browser)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_healthy(base: str, process: subprocess.Popen, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"the server did not answer {base}/healthz within {timeout} s")


@pytest.fixture(scope="session")
def server(tmp_path_factory) -> str:
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "uvicorn", "app.main:app", "--host", "127.0.0.1", "--port", str(port)]
    # Uploads made by the tests go to a fresh directory, never to the repo's data/models.
    env = {**os.environ, "XT_MODELS_DIR": str(tmp_path_factory.mktemp("uploaded-models"))}
    process = subprocess.Popen(command + ["--log-level", "warning"], cwd=ROOT, env=env)
    try:
        _wait_healthy(base, process)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


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


@dataclass
class Session:
    """A page plus what the browser reported while the test ran."""

    page: object
    base: str
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)

    def goto(self, path: str):
        return self.page.goto(self.base + path)

    def screenshot(self, name: str, full_page: bool = False) -> Path:
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=full_page)
        return path


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
