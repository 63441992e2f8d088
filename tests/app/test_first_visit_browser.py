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


NEWS_MODEL = "local.news-style"  # trained after the support replies: queued or training on a first visit
DRAFT_MODEL = "local.product-reviews"  # the draft, created with the others before any training is awaited


def test_the_demo_page_waits_for_a_demo_model_that_is_training(app_url: str, browser: Browser) -> None:
    """The Demo page of a demo model whose first version is still on its way says so and opens when it is
    ready (it said "no trained version yet: train it" before); every demo model is there, the draft too, and
    no page names an exception's class."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    ui = Ui(page)
    try:
        ui.goto(f"{app_url}/demo?model={NEWS_MODEL}")
        expect(page.get_by_text("no trained version yet")).to_have_count(0)
        waiting = page.get_by_text("training its first version")
        if waiting.count():  # still training: the note, then the demo once the version is there
            ui.shot("first_visit_demo_training_1280x800")
        page.locator(".st-key-demo_version").wait_for(timeout=600_000)  # the demo, once v1 is there
        page.locator(".st-key-preset_0 button").wait_for(timeout=120_000)  # examples drawn, not placeholders
        ui.no_exception()
        ui.shot("first_visit_demo_ready_1280x800")
        # The draft exists (a model not there would answer "not found"): the one demo model left to train.
        ui.goto(f"{app_url}/demo?model={DRAFT_MODEL}")
        expect(page.get_by_text("no trained version yet")).to_be_visible(timeout=120_000)
        body = page.locator("body").inner_text()
        assert "Error:" not in body and "did not load" not in body, body[:2000]
    finally:
        page.close()
