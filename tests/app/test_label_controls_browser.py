"""Labels stored = key presses, each on the text shown when its key went down, while a person moves every
control of the Label page between presses (headless Chromium, the workbench's own service): the
suggestion mode, the trait picker, the pool's expander, and leaving the page and coming back.
Some presses come while a control's rerun is still running, as a quick person's do."""

from __future__ import annotations

import random
import re
from pathlib import Path

from playwright.sync_api import Browser, Locator, Page, expect

from tests.support.app import BROWSER, FORMALITY, SENTIMENT, Ui, app_client, make_draft, pause

pytestmark = BROWSER

HANDLE = "local.presses"
POOL = [f"Pool text {i}: the meeting moved to {i} o'clock, sorry about that." for i in range(40)]
PRESSES = 12


def _shown(page: Page) -> tuple[str, str]:
    """The trait being labelled (its key) and the text shown, as a person reads them off the page."""
    metric = page.get_by_text(re.compile(r"Left to label for \w+")).first.inner_text()
    found = re.search(r"Left to label for (\w+)", metric)
    assert found, metric
    return found.group(1).lower(), page.locator("[data-testid='label-text']").first.inner_text()


def _counter(page: Page) -> Locator:
    return page.get_by_text(re.compile(r"\d+ labelled this session")).first


def _move_a_control(ui: Ui, page: Page, person: random.Random) -> tuple[str, str | None]:
    """One control moved as a person would; returns which, and for the trait picker the trait picked."""
    picked = None
    what = person.choice(["mode", "trait", "expander", "page"])
    if what == "mode":
        page.get_by_role("combobox", name=re.compile("Suggest")).first.click()
        page.get_by_role("option", name=person.choice(["auto", "diverse", "uncertain", "typical"])).click()
    elif what == "trait":
        page.get_by_role("combobox", name=re.compile("Trait")).first.click()
        picked = person.choice(["Formality", "Sentiment"])
        page.get_by_role("option", name=picked).click()
    elif what == "expander":
        page.locator("summary").filter(has_text="Pool (").first.click()
    else:
        ui.nav("Samples")
        pause(page, person.uniform(200, 900))
        ui.nav("Label")
    return what, picked


def test_labels_equal_key_presses_while_every_control_moves(
    app_url: str, app_dir: Path, browser: Browser, person: random.Random
) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1400})
    ui = Ui(page)
    try:
        ui.goto(app_url)  # starts the workbench's service
        with app_client(app_dir) as client:
            make_draft(client, HANDLE, (FORMALITY, SENTIMENT))
            client.add_pool_texts(HANDLE, POOL)
        ui.goto(f"{app_url}/label?model={HANDLE}")
        page.locator("[data-testid='label-text']").first.wait_for()
        ui.keys_to_the_page()
        pressed: dict[tuple[str, str], float] = {}  # (trait, text) -> quality, as the person pressed
        this_session = 0  # "labelled this session": a trait's session starts at 0
        for _ in range(PRESSES):
            trait, text = _shown(page)
            key = person.choice(["1", "2"])
            page.keyboard.press(key)
            pressed[(trait, text)] = 1.0 if key == "2" else 0.0
            this_session += 1
            expect(_counter(page)).to_contain_text(f"{this_session} labelled this session")
            pause(page, person.uniform(150, 700))
            _, picked = _move_a_control(ui, page, person)
            if picked is not None:  # the next text is the picked trait's, once its suggestions came
                ui.settle()
                expect(page.get_by_text(f"Left to label for {picked}")).to_be_visible()
                if picked.lower() != trait:
                    this_session = 0  # labels belong to a trait: another trait's session is its own
            elif person.random() < 0.5:
                ui.settle()  # else the next key may come while the control's rerun is still running
            ui.keys_to_the_page()
            expect(_counter(page)).to_contain_text(f"{this_session} labelled this session")
            page.locator("[data-testid='label-text']").first.wait_for()
        ui.settle()
        ui.no_exception()
        with app_client(app_dir) as client:
            stored = {
                (x.trait, x.text): x.quality
                for x in client.list_samples(HANDLE, page_size=500)
                if x.text in POOL
            }
        assert stored == pressed  # every press stored once, on the text it was pressed on; nothing else
    finally:
        page.close()
