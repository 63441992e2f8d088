"""The analyst's loop after v1, in headless Chromium: reopen a trained model, edit one sample in
the grid, delete one, fix a flag, add four rows, train v2, compare v1 and v2 on the evaluation set, tag v2.

The model is realistic: the support-replies and news-style demo data (five traits, 400 short texts), four in
five of each trait's texts as samples and the rest as its evaluation set, three labels flipped by mistake; v1
is trained and evaluated through the client before the app starts on the same data directory.
Screenshots: artifacts/screenshots/reopen_*.png.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from app.samples.grid import POLL_S
from core.demo import read_demo_model
from core.local import LocalService
from harness.streamlit import prepared_workbench
from tests.support.app import BROWSER, Ui, app_client, where_drawn
from tests.support.grid import (
    EDITOR,
    click_row_cell,
    expect_rows,
    move,
    row_count,
    select_row,
    to_last_row,
    type_into_cell,
)

pytestmark = BROWSER

HANDLE = "local.curate"
NEW_TEXTS = [
    "Thanks so much for your patience, I have refunded the full amount to your card today.",
    "Sorry about the mix-up! A replacement ships tomorrow and you will get the tracking number by email.",
    "whatever, read the FAQ before writing to us",
    "as stated before, no refunds. closed.",
]
POLITE = 2  # the first two new texts are polite


def _prepare(service: LocalService) -> dict[str, int]:
    """v1 of a five-trait model trained and evaluated; returns the counts the journey checks against."""
    rng = random.Random(23)
    with service.client() as c:
        c.create_model(HANDLE, description="Support replies and news style, curated after v1")
        samples: list[dict[str, Any]] = []
        held: list[dict[str, Any]] = []
        for slug in ("support_replies", "news_style"):
            demo = read_demo_model(slug)
            c.add_traits(HANDLE, demo.traits)
            for i, row in enumerate(demo.samples):
                (held if i % 5 == 4 else samples).append(row)
        for row in rng.sample([r for r in samples if r["trait"] == "Politeness"], 3):
            row["quality"] = 1.0 - row["quality"]  # labelled by mistake: what the flags should catch
        c.import_samples(HANDLE, samples)
        c.add_evaluation_items(HANDLE, held)
        c.wait(HANDLE, c.train(HANDLE, effort="low").run_id, timeout=300)
        c.wait(HANDLE, c.evaluate(HANDLE, 1).run_id, timeout=300)
        return {"samples": len(samples), "held": len(held)}


@pytest.fixture(scope="module")
def curate_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, int], Path]]:
    data_dir = tmp_path_factory.mktemp("reopen-browser")
    with prepared_workbench(data_dir, _prepare) as (url, counts):
        yield url, counts, data_dir


def _grid(page: Page) -> Locator:
    grid = page.locator("[data-testid='stDataFrame']").first
    grid.locator("[role='columnheader']", has_text="text").first.wait_for(state="attached")
    grid.evaluate("e => e.scrollIntoView({block: 'center'})")  # whole, as a person scrolls to it
    return grid


def test_reopen_curate_train_compare_tag(
    curate_app: tuple[str, dict[str, int], Path],
    browser: Browser,  # noqa: F811 - the fixture imported above
    person: random.Random,
) -> None:
    url, counts, data_dir = curate_app
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    ui = Ui(page)
    try:
        _journey(ui, page, url, counts, data_dir, person)
    finally:
        page.close()


def _journey(
    ui: Ui, page: Page, url: str, counts: dict[str, int], data_dir: Path, rng: random.Random
) -> None:
    # 1. The trained model offers to reopen; v1 keeps serving.
    ui.goto(f"{url}/samples?model={HANDLE}")
    ui.expect_text("its traits and samples are frozen into v1")
    page.locator("[data-testid='stDataFrame'] canvas").first.wait_for()
    ui.shot("reopen_01_offer")
    ui.click("Edit the data (v1 keeps serving)")
    ui.expect_text("Reopened for editing; v1 keeps serving")
    ui.expect_text("Draft reopened from v1")
    ui.no_exception()

    # 2. One save: edit the first row's text, delete the second row, add four rows at the bottom.
    grid = _grid(page)
    click_row_cell(page, grid, 1)
    move(page, grid, "ArrowRight", 2)  # id, trait, text
    page.keyboard.press("Enter")  # the editor on the stored text: select it all and type over it
    page.locator(EDITOR).first.wait_for()
    page.keyboard.press("Control+A")
    type_into_cell(page, grid, "Thank you for your message; I have fixed the address on your order.", rng)
    rows = row_count(grid)
    select_row(page, grid, 2)
    page.keyboard.press("Delete")  # deletes the selected row
    rows -= 1
    expect_rows(grid, rows)
    ui.shot("reopen_02_grid_edits")
    # Clicked as the summary's timer fires (it asks for a rerun every second), as happens now and then on a
    # busy machine: still five more rows, not ten (app/ui/rerun_requests.py).
    ui.click_as_timer_fires("More empty rows", POLL_S)  # three empty rows at first: five more
    # As a person sees the rows arrive before typing into them: one press, five rows (not none, not ten).
    expect_rows(_grid(page), rows + 5)
    rows += 5
    grid = _grid(page)
    click_row_cell(page, grid, 1)
    to_last_row(page, grid, "new row")
    move(page, grid, "ArrowUp", 7)  # the first of the eight empty rows
    move(page, grid, "ArrowRight", 1)  # its trait
    for i, text in enumerate(NEW_TEXTS):
        type_into_cell(page, grid, "politeness", rng, then="Tab")
        type_into_cell(page, grid, text, rng, then="Tab")
        type_into_cell(page, grid, "1" if i < POLITE else "0", rng)  # Enter: down to the next empty row
        move(page, grid, "ArrowLeft", 2)  # its trait
    expect(
        page.locator("[data-testid='stMarkdownContainer']", has_text="sends exactly these")
    ).to_contain_text(f"(1 edited, 1 deleted, {len(NEW_TEXTS)} new)")
    ui.click_as_timer_fires("Save changes", POLL_S)  # one save, and its message stays (not "Nothing to save")
    ui.expect_text(f"Saved: 1 edited, 1 deleted, {len(NEW_TEXTS)} added (#")
    expect(page.get_by_text("Nothing to save")).to_have_count(0)
    ui.no_exception()
    ui.shot("reopen_03_saved")

    # 3. Flags: check, then flip the first flagged sample, without leaving the tab.
    ui.tab("Flags")
    ui.click("Check samples")
    ui.expect_text("flagged sample(s) among", timeout=180_000)
    assert page.get_by_text("Checked ").first.is_visible()  # the check's bar stays in view, full
    first_flip = page.get_by_role("button", name="Flip to", exact=False).first
    first_flip.click()
    ui.settle()
    ui.expect_text("Flipped sample #")
    assert page.get_by_role("tab", name="Flags", selected=True).count() == 1  # still on the Flags tab
    ui.no_exception()
    ui.shot("reopen_04_flags")

    # 4. Train v2 from the reopened draft.
    ui.nav("Training")
    page.get_by_role("slider").first.focus()
    page.keyboard.press("Home")  # effort "low"
    ui.settle()
    page.get_by_role("button", name="Train v2", exact=True).click()
    ui.expect_text("Per-trait metrics of the active version v2", timeout=300_000)
    ui.no_exception()

    # 5. Versions: the evaluation-set comparison comes first; evaluate v2, compare, then tag it.
    ui.nav("Versions")
    evaluation = page.get_by_role("heading", name="Evaluation set").first
    probes = page.get_by_role("heading", name="Probe comparison on training samples").first
    evaluation.wait_for()
    assert where_drawn(evaluation)["y"] < where_drawn(probes)["y"]
    ui.click("Evaluate")  # the picker starts on the newest version, v2
    ui.expect_text("Compare two versions on the evaluation set", timeout=300_000)
    ui.settle()
    ui.click("Compare on the set")
    ui.expect_text("A = v1 · B = v2")
    ui.expect_text("Where v1 and v2 disagree most")
    ui.no_exception()
    ui.shot("reopen_05_compare")
    ui.fill("Tag name", "curated")  # the active version, v2, is picked
    ui.click("Tag")
    ui.expect_text("Tagged v2 as")
    ui.no_exception()
    ui.nav("Traits")  # trained again: the Traits page offers the next round
    ui.expect_text("Edit the data (v2 keeps serving)")
    ui.no_exception()
    ui.shot("reopen_06_traits_offer")

    # What the service holds now, asked of the app's own embedded service.
    with app_client(data_dir) as c:
        model = c.get_model(HANDLE)
        assert (model.state, model.version_no, model.version_tags) == ("ready", 2, ["curated"])
        assert c.get_version(HANDLE, "v2").sample_count == counts["samples"] - 1 + len(NEW_TEXTS)
        texts = {s.text for s in c.list_samples(HANDLE)}
        assert "Thank you for your message; I have fixed the address on your order." in texts
        assert set(NEW_TEXTS) <= texts
        kinds = [(e.kind, e.version_no) for e in c.history(HANDLE)]
        assert ("reopened", 1) in kinds and kinds[-1] == ("tagged", 2)
