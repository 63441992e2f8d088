"""Chromium for every suite that drives a browser (tests/app's browser modules, the API docs page), one per
module: the `browser` fixture, registered in tests/conftest.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from harness import browser as chromium


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One per module, not per worker: while Playwright's sync API runs, the thread counts as inside an event
    loop, so a later module's `asyncio.run` (the load benchmarks' clients) or `sync_playwright()` would fail
    on a worker that kept it."""
    from playwright.sync_api import expect, sync_playwright  # imported here: only browser tests need it

    from tests.support.app import EXPECT_BOUND_MS  # (imports Playwright too)

    expect.set_options(timeout=EXPECT_BOUND_MS)
    with sync_playwright() as p:
        b = chromium.launch(p)
        try:
            yield b
        finally:
            b.close()
