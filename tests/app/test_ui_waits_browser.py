"""The browser tests' waits (tests/support/app.py's `Ui`) on a page that is never seen idle.

A fragment that reruns on a timer, on a loaded machine, has its next run asked for before the last one ends:
the app stays "running" for as long as the page is open (the Models page while a model is busy did, beside
two busy processes). Moving to and from such a page must still wait for what the page draws.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from harness.streamlit import streamlit_script
from tests.support.app import BROWSER, Ui

pytestmark = BROWSER

APP = """
import time

import streamlit as st


def calm() -> None:
    st.header("Calm")
    st.write("Nothing reruns here.")


def quick() -> None:
    st.header("Quick")
    st.session_state.setdefault("clicks", 0)
    if st.button("Count"):
        st.session_state["clicks"] += 1
    st.write(f"Clicked {st.session_state['clicks']} times")


def ticking() -> None:
    st.header("Ticking")

    @st.fragment(run_every=0.3)
    def tick() -> None:  # quicker than its timer: each run ends (FINISHED_FRAGMENT_RUN_SUCCESSFULLY)
        st.write(f"Ticked at {time.monotonic():.1f}")

    tick()


def polling() -> None:
    st.header("Polling")

    @st.fragment(run_every=0.5)
    def follow() -> None:
        time.sleep(0.8)  # longer than the timer: the next run is asked for before this one ends
        st.write(f"Polled at {time.monotonic():.1f}")

    follow()
    st.write("Drawn below the fragment.")


pages = [
    st.Page(calm, title="Calm"),
    st.Page(quick, title="Quick"),
    st.Page(ticking, title="Ticking"),
    st.Page(polling, title="Polling"),
]
st.navigation(pages).run()
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
        ui.nav("Ticking")
        drawn = int(page.evaluate("window.__stDrawn"))
        finished = int(page.evaluate("window.__stFinished"))
        page.wait_for_function("(n) => window.__stFinished > n + 3", arg=finished)
        assert int(page.evaluate("window.__stDrawn")) == drawn  # fragment runs ended; no page was drawn
    finally:
        page.close()


def test_settle_sees_runs_too_quick_to_show_running(never_idle_app: str, browser: Browser) -> None:
    """A run that starts and ends within one render never shows "running" on the page; `settle` still sees it
    (its `script_finished` message) and returns, where it waited out its whole timeout before. A rerun the
    page asked for that never comes fails the wait rather than passing unnoticed."""
    page = browser.new_page()
    ui = Ui(page)
    try:
        ui.goto(never_idle_app)
        ui.nav("Quick")
        for clicks in range(1, 21):
            ui.click("Count", timeout=15_000)
            expect(page.get_by_text(f"Clicked {clicks} times")).to_be_visible()
        # Here about a third of the runs never showed "running" (14 of 22 seen); every one was counted.
        assert int(page.evaluate("window.__stFinished")) >= 20
    finally:
        page.close()
