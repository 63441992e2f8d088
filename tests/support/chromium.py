"""One Chromium per test worker, for every suite that drives a browser (tests/app's browser modules, the API
docs page): registered in tests/conftest.py; each module's `browser` fixture closes what it opened."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from harness import browser as chromium


@pytest.fixture(scope="session")
def chromium_browser() -> Iterator[Any]:
    """A launch (with Playwright's driver) costs about 2 CPU-s, once per module before. While it runs, the
    worker's main thread counts as inside an event loop (Playwright's sync API): a second `sync_playwright()`
    in it fails, and a test there runs its own loop in another thread (tests/service/test_score.py)."""
    from playwright.sync_api import expect, sync_playwright  # imported here: only browser tests need it

    from tests.support.app import EXPECT_BOUND_MS  # (imports Playwright too)

    expect.set_options(timeout=EXPECT_BOUND_MS)
    with sync_playwright() as p:
        b = chromium.launch(p)
        try:
            yield b
        finally:
            b.close()


def module_browser(shared: Any) -> Iterator[Any]:
    """The worker's Chromium for a module, which leaves nothing open behind it: a page left open on an app
    that has stopped would keep reconnecting to it."""
    yield shared
    for context in shared.contexts:
        context.close()
