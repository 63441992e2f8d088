"""The Samples page keeps the tab the analyst is on, in headless Chromium at 1280x800: settling a text on
the Disagreements tab, and picking a file on the Import tab right after reopening a trained model, each
change what the page shows above its tabs (a message, the reopen offer); the tabs stay where they were, and
so does the mapping of the file picked. Screenshots: artifacts/screenshots/samples_tabs_*."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from core.demo import read_demo_model
from core.local import LocalService
from harness.streamlit import prepared_workbench
from tests.support.app import BROWSER, Ui, pause

pytestmark = BROWSER

CONTESTED = "local.tabs-contested"
TRAINED = "local.tabs-trained"
SENTIMENT = {"name": "Sentiment", "positive_label": "positive", "negative_label": "negative"}
TEXT = "The parcel came late but the seller answered at once."


def _prepare(service: LocalService) -> None:
    """Two trained models (v1): one holds a text two annotators put on opposite poles."""
    demo = [
        {**r, "trait": "sentiment"}
        for r in read_demo_model("product_reviews").samples
        if r["trait"] == "Sentiment"
    ]
    with service.client() as c:
        for handle in (CONTESTED, TRAINED):
            c.create_model(handle, description="Product reviews")
            c.add_traits(handle, [SENTIMENT])
        c.import_samples(CONTESTED, demo[:40])
        c.add_samples(
            CONTESTED,
            [
                {"trait": "sentiment", "text": TEXT, "quality": q, "annotator": who}
                for q, who in ((1.0, "rater-a"), (0.0, "rater-b"))
            ],
        )
        c.import_samples(TRAINED, demo)
        for handle in (CONTESTED, TRAINED):
            c.wait(handle, c.train(handle, effort="low").run_id, timeout=300)


@pytest.fixture(scope="module")
def tabs_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with prepared_workbench(tmp_path_factory.mktemp("samples-tabs"), _prepare) as (url, _):
        yield url


def _selected(page: Page, name: str) -> None:
    expect(page.get_by_role("tab", name=name, exact=True)).to_have_attribute("aria-selected", "true")


def test_settling_a_text_stays_on_the_disagreements_tab(
    tabs_app: str, browser: Browser, person: random.Random
) -> None:
    """Settling is a sample edit: the analyst reopens the model, then settles; that run drops the reopen's
    message above the tabs."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    ui = Ui(page)
    try:
        ui.goto(f"{tabs_app}/samples?model={CONTESTED}")
        ui.click("Edit the data (v1 keeps serving)")
        ui.expect_text("Draft reopened from v1")
        ui.tab("Disagreements")
        ui.settle()
        ui.expect_text(TEXT)
        pause(page, person.uniform(400, 1500))  # reading both votes
        ui.click("Settle: positive")
        ui.expect_text("Settled as “positive”")
        _selected(page, "Disagreements")
        ui.expect_text(TEXT)  # the settled text, on the tab the analyst was on
        ui.no_exception()
        ui.screen("samples_tabs_settled")
    finally:
        page.close()


def test_a_file_picked_after_reopening_keeps_the_import_tab_and_its_mapping(
    tabs_app: str, browser: Browser, person: random.Random, tmp_path: Path
) -> None:
    """Reopening shows a message above the tabs for one run; the next run (the file picked) drops it."""
    path = tmp_path / "more_reviews.txt"
    rows = [("r1", "Great value, works as described.", 3.5), ("r2", "Broke after a day.", -3.2)]
    rows += [(f"r{i}", f"Review number {i}: fine for the price.", 1.0) for i in range(3, 12)]
    path.write_text("".join(f"{i}\t{t}\t{q}\n" for i, t, q in rows), encoding="utf-8")
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    ui = Ui(page)
    try:
        ui.goto(f"{tabs_app}/samples?model={TRAINED}")
        ui.tab("Import")
        ui.settle()
        pause(page, person.uniform(300, 1200))
        ui.click("Edit the data (v1 keeps serving)")
        ui.expect_text("Draft reopened from v1")
        _selected(page, "Import")
        page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(path))
        ui.settle()
        _selected(page, "Import")
        main = page.locator("[data-testid='stMain']")
        expect(main.get_by_label("Text column", exact=True)).to_have_value("column 2")
        expect(main.get_by_label("Label column", exact=True)).to_have_value("column 3")
        ui.expect_text(f"{len(rows)} row(s) read, 0 unreadable.")
        ui.no_exception()
        ui.screen("samples_tabs_reopened_import")
    finally:
        page.close()
