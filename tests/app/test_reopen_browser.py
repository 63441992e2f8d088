"""The analyst's loop after v1, in headless Chromium (issue 23): reopen a trained model, edit one sample in
the grid, delete one, fix a flag, add ten rows, train v2, compare v1 and v2 on the evaluation set, tag v2.

The model is realistic: the support-replies and news-style demo data (five traits, 400 short texts), four in
five of each trait's texts as samples and the rest as its evaluation set, three labels flipped by mistake; v1
is trained and evaluated through the client before the app starts on the same data directory.
Screenshots: artifacts/screenshots/reopen_*.png.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.client import Client
from core.demo import read_demo_model
from core.local import start_local_service
from harness.streamlit import streamlit_app
from tests.app.support import BROWSER, Ui

pytestmark = BROWSER

HANDLE = "local.curate"
NEW_TEXTS = [
    "Thanks so much for your patience, I have refunded the full amount to your card today.",
    "Sorry about the mix-up! A replacement ships tomorrow and you will get the tracking number by email.",
    "I completely understand how frustrating this is, and I have escalated it to our billing team.",
    "We appreciate you telling us; your account is unlocked now and you can sign in again.",
    "Thank you for the photos, they helped a lot. The courier will collect the parcel on Monday.",
    "whatever, read the FAQ before writing to us",
    "not our problem, talk to the bank",
    "we already answered this. stop emailing",
    "as stated before, no refunds. closed.",
    "you should have read the terms, nothing we can do",
]


def _prepare(data_dir: Path) -> dict[str, int]:
    """v1 of a five-trait model trained and evaluated; returns the counts the journey checks against."""
    rng = random.Random(23)
    service = start_local_service(data_dir, embedder="hashing")
    try:
        with service.client() as c:
            c.create_model(HANDLE, description="Support replies and news style, curated after v1")
            samples, held = [], []
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
    finally:
        service.stop()


@pytest.fixture(scope="module")
def curate_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, int], Path]]:
    data_dir = tmp_path_factory.mktemp("reopen-browser")
    counts = _prepare(data_dir)
    with streamlit_app(data_dir, SCORING_DEMO="0") as url:
        yield url, counts, data_dir


MARKER = 33  # px: the row-selection column left of the first cell (a grid whose rows can be deleted)
ROW = 35  # px: the header and each row


def _first_cell(page: object, grid: object, row: int | None = None) -> None:
    """Click the id cell of a row (1-based; None: the last row shown). The grid is a canvas: the other
    columns are reached with the arrow keys, as a person would after clicking."""
    box = grid.bounding_box()
    # The last row: 25 px up, inside it whether or not a horizontal scrollbar (15 px) runs below it.
    y = box["y"] + box["height"] - 25 if row is None else box["y"] + ROW * row + ROW / 2
    page.mouse.click(box["x"] + MARKER + 20, y)
    page.wait_for_timeout(250)


def _editor_closed(page: object) -> None:
    """Wait until no cell editor is open: on a busy machine one can still be closing, and a keystroke or click
    then goes to it (in CI a row's quality was lost when "Add row" was clicked while its editor closed)."""
    page.locator("#portal textarea, #portal input").first.wait_for(state="detached")
    page.wait_for_timeout(150)


def _type_cell(page: object, ui: Ui, value: str, then: str) -> None:
    editor = page.locator("#portal textarea, #portal input").first
    _editor_closed(page)
    page.keyboard.press("Enter")  # opens the cell editor, an overlay outside the canvas
    editor.wait_for()
    editor.fill("")
    editor.type(value, delay=8)  # a person typing, quickly
    # A person looks before moving on: on a busy machine the editor can finish opening after the first
    # keystrokes and reset itself to the cell's old value (a one-character quality then vanished whole).
    for _ in range(20):
        if editor.input_value() == value:
            break
        page.wait_for_timeout(100)
        editor.fill(value)
    assert editor.input_value() == value, f"the cell editor would not take {value!r}"
    editor.press(then)  # Tab commits and moves right; Enter commits and moves down
    page.wait_for_timeout(250)


def _app_client(data_dir: Path) -> Client:
    """A client of the app's own embedded service (its address is in its log)."""
    url_line = [x for x in (data_dir / "service.log").read_text().splitlines() if "ready on http" in x][-1]
    return Client(url_line.split("ready on ")[1].strip(), (data_dir / "local_key.txt").read_text().strip())


def _fix_refused_rows(ui: Ui, page: object, grid: object, data_dir: Path) -> None:
    """As a person does when the page says rows were refused: type what is missing into them and save again.

    Under a busy machine the canvas grid sometimes drops a one-character quality typed into a new row (the
    cell editor resets as it opens); the page then keeps the row at the grid's bottom with its reason, which
    is the behaviour under test here too. Anything else refused fails the test."""
    message = page.get_by_text("Saved: 1 edited, 1 deleted,").first.inner_text()
    if "were refused" not in message:
        assert "10 added." in message, message
        return
    assert all(
        why.endswith("quality is missing: give a number in [0, 1]") for why in message.split("; ")[1:]
    ), message
    # A person retries until the page says it saved: a second drop is the same race, not a new behaviour.
    for _ in range(3):
        with _app_client(data_dir) as c:
            stored = {s.text for s in c.list_samples(HANDLE)}
        missing = [("1" if i < 5 else "0") for i, text in enumerate(NEW_TEXTS) if text not in stored]
        assert missing, message
        for k, quality in enumerate(reversed(missing)):  # the refused rows are the grid's last ones, in order
            _first_cell(page, grid, 1)
            page.keyboard.press("Control+ArrowDown")  # to the last row
            for _ in range(k):
                page.keyboard.press("ArrowUp")
            for _ in range(4):  # problem, id, trait, text: then quality
                page.keyboard.press("ArrowRight")
            _type_cell(page, ui, quality, "Enter")
        _save(ui, page)
        outcome = page.get_by_text(re.compile(r"Saved: \d+ added\.|Nothing was saved\.")).first
        outcome.wait_for(timeout=60_000)
        message = outcome.inner_text()
        if message.startswith(f"Saved: {len(missing)} added."):
            return
        assert message.endswith("quality is missing: give a number in [0, 1]"), message
    raise AssertionError(f"the refused rows were never saved: {message}")


def _save(ui: Ui, page: object) -> None:
    """Click Save changes as a person does: after the last cell's editor has closed and a moment's look (the
    grid hands its edits to Streamlit just after the editor closes; a click at once can outrun them)."""
    _editor_closed(page)
    page.wait_for_timeout(1000)
    ui.settle()
    ui.click("Save changes")


def test_reopen_curate_train_compare_tag(
    curate_app: tuple[str, dict[str, int], Path],
    browser: object,  # noqa: F811 - the fixture imported above
) -> None:
    url, counts, data_dir = curate_app
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    ui = Ui(page)
    try:
        _journey(ui, page, url, counts, data_dir)
    except BaseException:
        ui.shot("reopen_failure")
        raise
    finally:
        page.close()


def _journey(ui: Ui, page: object, url: str, counts: dict[str, int], data_dir: Path) -> None:
    # 1. The trained model offers to reopen; v1 keeps serving.
    ui.goto(f"{url}/samples?model={HANDLE}")
    ui.expect_text("its traits and samples are frozen into v1")
    page.locator("[data-testid='stDataFrame'] canvas").first.wait_for()
    ui.shot("reopen_01_offer")
    ui.click("Edit the data (v1 keeps serving)")
    ui.expect_text("Reopened for editing; v1 keeps serving")
    ui.expect_text("Draft reopened from v1")
    ui.no_exception()

    # 2. One save: edit the first row's text, delete the second row, add ten rows at the bottom.
    grid = page.locator("[data-testid='stDataFrame']").first
    grid.locator("[role='columnheader']", has_text="text").first.wait_for(state="attached")
    _first_cell(page, grid, 1)
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")  # id, trait, text
    _type_cell(page, ui, "Thank you for your message; I have fixed the address on your order.", "Enter")
    box = grid.bounding_box()
    page.mouse.click(box["x"] + MARKER / 2, box["y"] + ROW * 2 + ROW / 2)  # selects the second row
    page.wait_for_timeout(300)
    page.keyboard.press("Delete")  # deletes the selected row
    page.wait_for_timeout(500)
    ui.shot("reopen_02_grid_edits")
    for i, text in enumerate(NEW_TEXTS):
        grid.hover()
        page.get_by_role("button", name="Add row").click()  # the grid scrolls to the new row, its last
        page.wait_for_timeout(400)
        _first_cell(page, grid)
        page.keyboard.press("ArrowRight")  # its trait
        _type_cell(page, ui, "politeness", "Tab")
        _type_cell(page, ui, text, "Tab")
        _type_cell(page, ui, "1" if i < 5 else "0", "Tab")
        _editor_closed(page)  # the row's last value is in before the next "Add row" click
    _save(ui, page)
    ui.expect_text("Saved: 1 edited, 1 deleted,")
    _fix_refused_rows(ui, page, grid, data_dir)
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
    assert evaluation.bounding_box()["y"] < probes.bounding_box()["y"]
    ui.click("Evaluate")  # the picker starts on the newest version, v2
    ui.expect_text("Compare two versions on the evaluation set", timeout=300_000)
    ui.settle()
    ui.click("Compare on the set")
    ui.expect_text("A = v1 · B = v2")
    ui.expect_text("Where v1 and v2 disagree most")
    ui.no_exception()
    ui.shot("reopen_05_compare")
    ui.fill("Tag the active version (v2)", "curated")
    ui.click("Tag")
    ui.expect_text("Tagged v2 as")
    ui.no_exception()
    ui.nav("Traits")  # trained again: the Traits page offers the next round
    ui.expect_text("Edit the data (v2 keeps serving)")
    ui.no_exception()
    ui.shot("reopen_06_traits_offer")

    # What the service holds now, asked of the app's own embedded service.
    with _app_client(data_dir) as c:
        model = c.get_model(HANDLE)
        assert (model.state, model.version_no, model.version_tags) == ("ready", 2, ["curated"])
        assert c.get_version(HANDLE, "v2").sample_count == counts["samples"] - 1 + 10
        texts = {s.text for s in c.list_samples(HANDLE)}
        assert "Thank you for your message; I have fixed the address on your order." in texts
        assert set(NEW_TEXTS) <= texts
        kinds = [(e.kind, e.version_no) for e in c.history(HANDLE)]
        assert ("reopened", 1) in kinds and kinds[-1] == ("tagged", 2)
