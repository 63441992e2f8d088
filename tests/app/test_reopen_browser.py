"""The analyst's loop after v1, in headless Chromium: reopen a trained model, edit one sample in
the grid, delete one, fix a flag, add four rows, train v2, compare v1 and v2 on the evaluation set, tag v2.

The model is realistic: the support-replies and news-style demo data (five traits, 400 short texts), four in
five of each trait's texts as samples and the rest as its evaluation set, three labels flipped by mistake; v1
is trained and evaluated through the client before the app starts on the same data directory.

A long editing session in the Samples grid loses nothing, in headless Chromium at 1280x800.

A person edits a draft of a few hundred samples for several minutes: changes qualities and a text, deletes
rows, types new rows into the grid's empty last row, switches to other pages and back, pages through the
list, changes a filter and back, then saves. Every edit must reach the service exactly once; the page says
what will be saved before the save; saved rows come back with their ids; a second Save has nothing to save.

One workbench for both: the models are prepared through the client of the data directory's service, which the
app's embedded service then attaches to.
"""

from __future__ import annotations

import random
import re
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
    look,
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


def _prepare_both(service: LocalService) -> tuple[dict[str, int], list[int]]:
    """Both parts' models, on one service: one workbench for the module."""
    return _prepare(service), _prepare_grid(service)


@pytest.fixture(scope="module")
def prepared(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, dict[str, int], list[int], Path]]:
    data_dir = tmp_path_factory.mktemp("reopen-browser")
    with prepared_workbench(data_dir, _prepare_both) as (url, (counts, ids)):
        yield url, counts, ids, data_dir


@pytest.fixture
def curate_app(prepared: tuple[str, dict[str, int], list[int], Path]) -> tuple[str, dict[str, int], Path]:
    url, counts, _, data_dir = prepared
    return url, counts, data_dir


@pytest.fixture
def grid_app(prepared: tuple[str, dict[str, int], list[int], Path]) -> tuple[str, list[int], Path]:
    url, _, ids, data_dir = prepared
    return url, ids, data_dir


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
    ui.press(page.get_by_role("button", name="Train v2", exact=True))
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


# -- a long editing session in the Samples grid -----------------------------------------------------------

TONE = "local.replies-tone"
NEW_ROWS = [
    ("Thank you for waiting, I have sent the replacement by express post this morning.", "0.9"),
    ("Read the manual. We do not answer questions that are in it.", "0.1"),
    ("I am sorry this took so long; the refund is on its way and you will see it on Friday.", "1"),
    ("Closed. Do not write again about this order.", "0"),
]
EDITED_TEXT = "Thanks for your patience, your order is fixed and ships today with free delivery."


def _prepare_grid(service: LocalService) -> list[int]:
    """A draft with one trait and the support-replies demo texts (a few hundred); returns its sample ids."""
    with service.client() as c:
        c.create_model(TONE, description="Support replies: how kind the tone is")
        c.add_traits(TONE, [{"name": "Tone", "positive_label": "kind", "negative_label": "curt"}])
        rows = read_demo_model("support_replies").samples
        c.import_samples(TONE, [{**r, "trait": "tone"} for r in rows])
        return [s.id for s in c.list_samples(TONE)]


def test_long_editing_session_loses_nothing(
    grid_app: tuple[str, list[int], Path],
    browser: Browser,
    person: random.Random,
) -> None:
    url, ids, data_dir = grid_app
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    ui = Ui(page)
    try:
        _session(ui, page, url, ids, data_dir, person)
    finally:
        page.close()


def test_an_edit_committed_just_before_leaving_the_page_is_kept(
    grid_app: tuple[str, list[int], Path],
    browser: Browser,
    person: random.Random,
) -> None:
    """A person types a quality, presses Enter and at once clicks another page in the sidebar: the edit is
    there when they come back. A page switch sends the browser's state of the widgets the next page keeps
    only, so an edit the grid held in the browser alone was lost (three rounds: a round passes by luck
    only when the page's once-a-second poll happened to fall between the Enter and the click)."""
    url, _, _ = grid_app
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    ui = Ui(page)
    try:
        ui.goto(f"{url}/samples?model={TONE}")
        for n, (row, value) in enumerate(((1, "0.65"), (2, "0.35"), (3, "0.45")), start=1):
            grid = _tone_grid(page)
            click_row_cell(page, grid, row)
            move(page, grid, "ArrowRight", 3)  # id, trait, text, quality
            type_into_cell(page, grid, value, person)
            ui.nav("Traits")  # straight away, as a person does who has finished
            ui.nav("Samples")
            expect(_unsaved(page)).to_contain_text(f"({n} edited)")
        ui.click("Discard changes")  # the stored samples stay as the other test expects them
        expect(page.get_by_text("No unsaved changes.")).to_be_visible()
    finally:
        page.close()


def _tone_grid(page: Page) -> Locator:
    grid = page.locator("[data-testid='stDataFrame']").first
    grid.locator("[role='columnheader']", has_text="quality").first.wait_for(state="attached")
    grid.evaluate("e => e.scrollIntoView({block: 'center'})")  # whole, as a person scrolls to it
    return grid


def _unsaved(page: Page) -> Locator:
    return page.locator("[data-testid='stMarkdownContainer']", has_text="Save changes sends exactly these")


def _pager_above(page: Page, grid: Locator) -> None:
    """The pager is drawn above the grid, whole. Beneath it, it came after the grid's polling fragment, and
    a Save that reran the page while that fragment ran once left the page without a pager."""
    pager = where_drawn(page.get_by_role("button", name="Next ▶"))
    assert pager["y"] + pager["height"] <= where_drawn(grid)["y"], (pager, where_drawn(grid))


def _turn(ui: Ui, page: Page, button: str, number: int) -> None:
    """To another page of samples, as a person does: one click, then the page says `Page N` and its run has
    ended (until then the old pager and grid stand beside the new ones)."""
    ui.press(page.get_by_role("button", name=button))
    ui.settle()
    expect(page.get_by_text(f"Page {number}", exact=True)).to_be_visible()
    ui.idle()


def _set_quality(page: Page, grid: Locator, row: int, value: str, rng: random.Random) -> None:
    click_row_cell(page, grid, row)
    move(page, grid, "ArrowRight", 3)  # id, trait, text, quality
    type_into_cell(page, grid, value, rng)
    look(page, rng)


def _add_rows(page: Page, grid: Locator, rows: list[tuple[str, str]], empty: int, rng: random.Random) -> None:
    """Type each new row into the first of the grid's `empty` empty rows at its bottom: its text, Tab, its
    quality, Enter (down to the next empty row), then left to its text. The trait is not typed: the model
    has one, and an empty row starts with it."""
    click_row_cell(page, grid, 1)
    to_last_row(page, grid, "new row")
    move(page, grid, "ArrowUp", empty - 1)  # the first empty one
    move(page, grid, "ArrowRight", 2)  # id, trait, text
    for text, quality in rows:
        type_into_cell(page, grid, text, rng, then="Tab")
        type_into_cell(page, grid, quality, rng)
        move(page, grid, "ArrowLeft", 1)
        look(page, rng)


def _session(ui: Ui, page: Page, url: str, ids: list[int], data_dir: Path, rng: random.Random) -> None:
    ui.goto(f"{url}/samples?model={TONE}")
    grid = _tone_grid(page)
    expect(page.get_by_text("No unsaved changes.")).to_be_visible()
    _pager_above(page, grid)

    # 1. Qualities of three stored rows, the text of a fourth, two rows deleted.
    for row, value in ((1, "0.8"), (2, "0.3"), (4, "0.55")):
        _set_quality(page, grid, row, value, rng)
    click_row_cell(page, grid, 5)
    move(page, grid, "ArrowRight", 2)  # its text
    page.keyboard.press("Enter")  # open the editor on the stored text, select all, type over it
    page.locator("#portal textarea, #portal input").first.wait_for()
    page.keyboard.press("Control+A")
    type_into_cell(page, grid, EDITED_TEXT, rng)
    look(page, rng)
    for row in (7, 6):  # the lower one first: the upper one keeps its place
        select_row(page, grid, row)
        page.keyboard.press("Delete")
        look(page, rng)
    # 2. Three new rows typed into the empty rows at the bottom.
    _add_rows(page, grid, NEW_ROWS[:3], 3, rng)
    headline = _unsaved(page)
    expect(headline).to_contain_text("(4 edited, 2 deleted, 3 new)")
    ui.no_exception()
    ui.screen("grid_01_unsaved")

    # 3. Away to other pages and back: the grid comes back with every edit, and says so.
    ui.nav("Traits")
    ui.nav("Label")
    ui.nav("Samples")
    grid = _tone_grid(page)
    grid.get_by_text(EDITED_TEXT).first.wait_for(state="attached")
    click_row_cell(page, grid, 1)
    to_last_row(page, grid, "new row")  # the new rows are at the bottom, above the empty ones
    for text, _ in NEW_ROWS[:3]:
        grid.get_by_text(text).first.wait_for(state="attached")  # the grid has the rows in view only
    expect(_unsaved(page)).to_contain_text("(4 edited, 2 deleted, 3 new)")

    # 4. The next page of samples: one more quality there; back; a filter changed and changed back.
    _turn(ui, page, "Next ▶", 2)
    grid = _tone_grid(page)
    _set_quality(page, grid, 2, "0.95", rng)
    expect(_unsaved(page)).to_contain_text("(5 edited, 2 deleted, 3 new)")
    _turn(ui, page, "◀ Previous", 1)
    provenance = page.get_by_role("combobox", name="Provenance")
    for choice in ("authored", "(any)"):
        provenance.click()
        page.keyboard.type(choice, delay=rng.randint(40, 120))
        page.keyboard.press("Enter")
        ui.settle()
        expect(provenance).to_have_value(choice)
    grid = _tone_grid(page)
    # 5. One more new row after all that, then Save: the page said what it would send.
    _add_rows(page, grid, NEW_ROWS[3:], 3, rng)
    expect(_unsaved(page)).to_contain_text("(5 edited, 2 deleted, 4 new)")
    summary = page.locator("[data-testid='stDataFrame']").filter(has_text="what").first
    for text in (EDITED_TEXT, *(t for t, _ in NEW_ROWS)):
        summary.get_by_text(text).first.wait_for(state="attached")
    ui.screen("grid_02_before_save")
    ui.click("Save changes")
    saved = page.get_by_text(re.compile(r"Saved: 5 edited, 2 deleted, 4 added \(#\d+"))
    expect(saved).to_be_visible()
    new_ids = [int(i) for i in re.findall(r"#(\d+)", saved.inner_text())]
    expect(page.get_by_text("No unsaved changes.")).to_be_visible()
    ui.no_exception()
    ui.screen("grid_03_saved")

    # 6. What the service holds: every edit once, nothing else.
    with app_client(data_dir) as c:
        stored = {s.id: s for s in c.list_samples(TONE)}
    assert len(stored) == len(ids) - 2 + 4
    assert [ids[5], ids[6]] == [i for i in ids if i not in stored]
    assert [stored[ids[i]].quality for i in (0, 1, 3)] == [0.8, 0.3, 0.55]
    assert stored[ids[4]].text == EDITED_TEXT
    assert stored[ids[101]].quality == 0.95  # page 2's second row (100 a page)
    added = {stored[i].text: (stored[i].quality, stored[i].trait) for i in new_ids}
    assert added == {text: (float(q), "tone") for text, q in NEW_ROWS}

    # 7. Save again: nothing is pending, and the page does not claim to have saved anything.
    ui.click("Save changes")
    expect(page.get_by_text("Nothing to save")).to_be_visible()
    expect(page.get_by_text("Saved: 5 edited")).to_have_count(0)
    _pager_above(page, _tone_grid(page))  # what that Save once lost
    # 8. The saved rows show their ids on the last page, where the list puts them.
    _turn(ui, page, "Next ▶", 2)
    _turn(ui, page, "Next ▶", 3)
    grid = _tone_grid(page)
    click_row_cell(page, grid, 1)
    to_last_row(page, grid, "new row")  # the saved rows are the last stored ones, above the empty rows
    for i in new_ids:
        grid.get_by_text(stored[i].text).first.wait_for(state="attached")
        grid.get_by_text(str(i), exact=True).first.wait_for(state="attached")
    ui.no_exception()
    ui.screen("grid_04_saved_ids")
