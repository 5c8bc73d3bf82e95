"""Running a coroutine from a test, whichever tests ran before it in the same process."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor


def run_async(coroutine):
    """asyncio.run in a thread of its own: once a browser test has started Playwright's sync API
    (session-wide), the worker's main thread runs an event loop, where asyncio.run refuses."""
    with ThreadPoolExecutor(1, thread_name_prefix="test-asyncio") as pool:
        return pool.submit(asyncio.run, coroutine).result()
