"""Headless Chromium as the browser tests and benchmarks drive it (Debian's `/usr/bin/chromium`)."""

from __future__ import annotations

from typing import Any

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# A Streamlit page whose script has finished running.
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"


def launch(playwright: Any) -> Any:
    """A headless Chromium browser from a `sync_playwright()` context."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
