"""A first visit in headless Chromium: the workbench's own service starts empty and loads the demo models in
the background, while a person pastes and types a text on the Score page of the demo model.

Its own module, so its own `streamlit run` and data dir: this visit is the one that loads the demo models.
"""

from __future__ import annotations

import random

from playwright.sync_api import Browser, expect

from tests.support.app import BROWSER, Ui, pause

pytestmark = BROWSER

DEMO_MODEL = "local.support-replies"  # created at once on the first start, its first version trained after
PASTED = (
    "Thank you for your patience while we looked into your order. The parcel left our warehouse this "
    "morning and the tracking number is in the email we just sent."
)
WORDS = ["thanks", "again", "and", "sorry", "for", "the", "wait"]


def test_text_pasted_on_a_first_visit_is_kept(app_url: str, browser: Browser, person: random.Random) -> None:
    """A text pasted into the Score page's box as soon as a first visit shows it (its demo model most often
    still training: the Score button off, the page watching the training) stays in the box when the page
    redraws with the model's first version (a Version picker above the tabs, the 'no trained version yet'
    note gone): the whole text, with the words typed after it, is scored."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    ui = Ui(page)
    try:
        ui.goto(f"{app_url}/score?model={DEMO_MODEL}")
        box = page.locator(".st-key-score_text textarea")
        box.click()
        page.keyboard.insert_text(PASTED)  # a paste: one input event, no keys
        typed = PASTED
        for word in WORDS:
            pause(page, person.uniform(200, 900))
            page.keyboard.type(" " + word, delay=person.randint(30, 90))
            typed += " " + word
        pause(page, person.uniform(500, 2000))  # rereading it before scoring
        score = page.get_by_role("button", name="Score", exact=True)
        expect(score).to_be_enabled()  # the model's first version: the page has redrawn with it
        expect(box).to_have_value(typed)
        ui.click("Score")
        page.locator(".st-key-score_chart").wait_for()
        ui.no_exception()
        expect(page.locator("[data-testid='stAlertContentError']")).to_have_count(0)
        ui.shot("first_visit_score_1280x800")
    finally:
        page.close()
