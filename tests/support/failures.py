"""What a failing browser test leaves behind, captured in one place: every page the test drove through a `Ui`,
as it was when the test failed (`Ui.failure`: the whole page, its address and its accessibility tree, in
artifacts/screenshots/ as `<test>_failure*`).

A `Ui` made while a test runs is that test's (`watch`). Its page is captured at the first of:

- a close of its page or its browser context while the test's failure propagates: the tests close their pages
  in a `finally`, which runs before pytest knows the test failed, so the close is the last moment the page is
  there to capture;
- pytest's report that the test failed, for pages still open then (a page a fixture closes at teardown):
  tests/app/conftest.py's `pytest_runtest_makereport` calls `capture_open`.

Capturing never masks the failure it documents: a page that cannot be captured (a crashed browser) is logged.
"""

from __future__ import annotations

import functools
import logging
import re
import sys
from collections.abc import Callable
from typing import Any, Protocol

import pytest
from playwright.sync_api import Page

_LOG = logging.getLogger(__name__)


class Capturable(Protocol):
    """What the capture needs of a `Ui` (tests/support/app.py, which calls `watch`)."""

    page: Page

    def failure(self, name: str) -> None: ...


class _Test:
    """The running test: its name for files, and its pages in the order they were opened."""

    def __init__(self, name: str) -> None:
        self.name = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_")
        self.uis: list[Capturable] = []
        self.captured: set[int] = set()


_running: _Test | None = None


def begin(name: str) -> None:
    """A test starts: the `Ui`s made from now on (in its fixtures too) are its."""
    global _running
    _running = _Test(name)


def end() -> None:
    global _running
    _running = None


def watch(ui: Capturable) -> None:
    """Make `ui` one of the running test's pages, captured if the test fails (outside a test: nothing)."""
    test = _running
    if test is None:
        return
    test.uis.append(ui)
    ui.page.close = _capturing_first(ui.page.close)  # type: ignore[method-assign]  # the close the tests call
    context = ui.page.context
    if not getattr(context.close, "_captures_first", False):
        context.close = _capturing_first(context.close)  # type: ignore[method-assign]  # closes its pages too


def capture_open() -> None:
    """The running test failed: capture its pages that are still open and not captured yet."""
    test = _running
    if test is None:
        return
    for n, ui in enumerate(test.uis):
        if id(ui) in test.captured or ui.page.is_closed():
            continue
        test.captured.add(id(ui))
        name = f"{test.name}_failure" + (f"_{n}" if len(test.uis) > 1 else "")
        try:
            ui.failure(name)
        except Exception:  # noqa: BLE001 - evidence is best effort; the test's own failure is what is reported
            _LOG.warning("could not capture the page of %s", name, exc_info=True)


def _failing() -> bool:
    """Whether an exception is propagating through the caller's `finally` (a skip is no failure)."""
    exc = sys.exc_info()[1]
    return exc is not None and not isinstance(exc, pytest.skip.Exception)


def _capturing_first(close: Callable[..., Any]) -> Callable[..., Any]:  # Any: Playwright's own close options
    @functools.wraps(close)
    def closing(*args: Any, **kwargs: Any) -> Any:  # Any: as above
        if _failing():
            capture_open()
        return close(*args, **kwargs)

    closing._captures_first = True  # type: ignore[attr-defined]  # one wrapper per context, however many pages
    return closing
