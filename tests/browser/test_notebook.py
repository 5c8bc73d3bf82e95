"""docs/notebook.ipynb run by a real Jupyter kernel (nbclient, ipykernel): its last output is the
walk page inline (app/notebook.py), which Chromium then opens offline and steps through."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "docs" / "notebook.ipynb"


def _run_notebook():
    """The notebook executed in a real kernel (nbclient runs its own event loop: in a thread of its
    own, beside the browser tests' running loop)."""
    nbclient = pytest.importorskip("nbclient", reason="the test extra installs nbclient and ipykernel")
    import nbformat

    notebook = nbformat.read(NOTEBOOK, as_version=4)
    env_path = os.environ.get("PYTHONPATH", "")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env_path) if p)  # the kernel imports this tree
    client = nbclient.NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
    )
    try:
        with ThreadPoolExecutor(1) as pool:
            pool.submit(client.execute).result()
    finally:
        os.environ["PYTHONPATH"] = env_path
    return notebook


@pytest.mark.long  # a Jupyter kernel of its own: make test-long (tests/conftest.py in_long_tier)
def test_the_notebook_shows_the_walk_page_inline(browser, tmp_path):
    notebook = _run_notebook()
    printed = notebook.cells[1].outputs[0]["text"]
    assert printed.startswith("loss ") and "steps" in printed
    shown = notebook.cells[-1].outputs[0]["data"]["text/html"]
    assert shown.startswith('<iframe class="xt-walk"') and "id=&quot;xt-export&quot;" in shown
    page = tmp_path / "output.html"  # the cell's output as a notebook front end draws it
    page.write_text(f"<!doctype html><html><body>{shown}</body></html>", encoding="utf-8")
    context = browser.new_context(offline=True, viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    try:
        tab = context.new_page()
        tab.on("pageerror", lambda e: errors.append(str(e)))
        tab.goto(page.as_uri())
        frame = tab.frame_locator("iframe.xt-walk")
        frame.locator('#step[data-rendered="0"]').wait_for(timeout=20_000)
        loss = printed.split()[1]
        assert frame.locator("#loss").inner_text().startswith(loss[:5])  # the kernel's trace, not a rebuild
        frame.locator("#next").click()
        for index in (1, 2, 3):
            frame.locator(f'#step[data-rendered="{index}"]').wait_for()
            tab.keyboard.press("ArrowRight")
        frame.locator('#step[data-rendered="4"]').wait_for()
    finally:
        context.close()
    assert errors == []
