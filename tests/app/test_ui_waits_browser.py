"""The browser tests' waits (tests/app/support.py's `Ui`) on a page that is never seen idle.

A fragment that reruns on a timer, on a loaded machine, has its next run asked for before the last one ends:
the app stays "running" for as long as the page is open (the Models page while a model is busy did, beside
two busy processes). Moving to and from such a page must still wait for what the page draws.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from harness.streamlit import streamlit_script
from tests.app.support import BROWSER, Ui

pytestmark = BROWSER

APP = """
import time

import streamlit as st


def calm() -> None:
    st.header("Calm")
    st.write("Nothing reruns here.")


def polling() -> None:
    st.header("Polling")

    @st.fragment(run_every=0.5)
    def follow() -> None:
        time.sleep(0.8)  # longer than the timer: the next run is asked for before this one ends
        st.write(f"Polled at {time.monotonic():.1f}")

    follow()
    st.write("Drawn below the fragment.")


st.navigation([st.Page(calm, title="Calm"), st.Page(polling, title="Polling")]).run()
"""


@pytest.fixture(scope="module")
def never_idle_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("never-idle")
    script = folder / "never_idle.py"
    script.write_text(APP)
    with streamlit_script(script, folder) as url:
        yield url


def test_moving_to_and_from_a_page_that_is_never_idle(never_idle_app: str, browser: Browser) -> None:
    page = browser.new_page()
    ui = Ui(page)
    try:
        ui.goto(never_idle_app)
        ui.nav("Polling")
        expect(page.get_by_text("Drawn below the fragment.")).to_be_visible()
        expect(page.locator("[data-testid='stApp']")).to_have_attribute("data-test-script-state", "running")
        ui.nav("Calm")
        expect(page.get_by_text("Nothing reruns here.")).to_be_visible()
        ui.nav("Polling")  # twice: the counts go on across page switches
        expect(page.get_by_text("Drawn below the fragment.")).to_be_visible()
    finally:
        page.close()


def test_the_page_drawn_is_the_one_the_link_leads_to(never_idle_app: str, browser: Browser) -> None:
    """`drawn` waits for a whole-page run that finished after the click, not for any run: the timer
    fragment's runs (FINISHED_FRAGMENT_RUN_SUCCESSFULLY) do not count."""
    page = browser.new_page()
    ui = Ui(page)
    try:
        ui.goto(never_idle_app)
        ui.nav("Polling")
        drawn = int(page.evaluate("window.__stDrawn"))
        page.wait_for_function("(n) => window.__stRuns > n + 3", arg=int(page.evaluate("window.__stRuns")))
        assert int(page.evaluate("window.__stDrawn")) == drawn  # fragment runs went by; no page was drawn
    finally:
        page.close()
