"""A published ratings file as it comes, and the evaluation set held out, in headless Chromium at 1280x800.

The Stanford politeness requests (Stack Exchange) written as their publisher might: tab-separated `.txt`, no
header row, columns id, request, mean rating on -4..+4 ((mean of Score1..5 - 13) / 3). The Samples page
proposes "data (no header row)" and the ids as `source_id`, asks the file's scale and says which rows are
evaluation texts (never trained on: the version is measured on all of them); the Label page's pool import
leaves the evaluation texts out and says how many; the other order, pool texts added to the evaluation set
on the Versions page, is said there, and a label of one from the queue fetched before is refused. A
newcomer's first hour, in one session from a HOME of its own: import, train on the Training page, evaluate,
the pool, then Score a text typed in and open the Demo. Screenshots: artifacts/screenshots/heldout_*."""

from __future__ import annotations

import csv
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from core.local import LocalService
from harness.datasets import find_datasets
from harness.streamlit import prepared_workbench
from tests.support.app import BROWSER, Ui, app_client, pause

POLITENESS_CSV = (
    (find_datasets() or Path("../shared/datasets")) / "stanford_politeness" / "stack-exchange.annotated.csv"
)
pytestmark = [
    *BROWSER,
    pytest.mark.skipif(
        not POLITENESS_CSV.exists(),
        reason="needs ../shared/datasets beside the checkout (or SCORING_DATASETS): the politeness CSV",
    ),
]

MODEL = "local.polite-heldout"
SAMPLES, EVALUATION, OVERLAP, NEW = 300, 60, 12, 40  # OVERLAP evaluation texts are also samples
LATE = 4  # pool texts added to the evaluation set after the pool


def _rows() -> list[tuple[str, str, float]]:
    with POLITENESS_CSV.open(newline="", encoding="utf-8") as fh:
        rows = [r for _, r in zip(range(SAMPLES + EVALUATION + NEW), csv.DictReader(fh), strict=False)]
    mean = [sum(int(r[f"Score{i}"]) for i in range(1, 6)) / 5 for r in rows]
    return [(r["Id"], r["Request"], round((m - 13) / 3, 2)) for r, m in zip(rows, mean, strict=True)]


@pytest.fixture(scope="module")
def heldout_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A one-trait draft whose evaluation set holds the rows after the samples' and OVERLAP of theirs."""
    data_dir = tmp_path_factory.mktemp("heldout-browser")
    rows = _rows()
    held = rows[SAMPLES : SAMPLES + EVALUATION] + rows[:OVERLAP]

    def prepare(service: LocalService) -> None:
        with service.client() as c:
            c.create_model(MODEL, description="Stack Exchange requests")
            c.add_traits(
                MODEL, [{"name": "Politeness", "positive_label": "polite", "negative_label": "rude"}]
            )
            items = [{"trait": "politeness", "text": t, "quality": (v + 4) / 8} for _, t, v in held]
            c.add_evaluation_items(MODEL, items)

    home = tmp_path_factory.mktemp("newcomer-home")  # nothing of an earlier run: no Streamlit config, no data
    with prepared_workbench(data_dir, prepare, env={"HOME": str(home)}) as (url, _):
        yield url, data_dir


def test_a_headerless_txt_imports_and_the_evaluation_set_stays_held_out(
    heldout_app: tuple[str, Path], browser: Browser, tmp_path: Path, person: random.Random
) -> None:
    url, data_dir = heldout_app
    rows = _rows()
    samples = tmp_path / "politeness.txt"
    samples.write_text("".join(f"{i}\t{t}\t{v}\n" for i, t, v in rows[:SAMPLES]), encoding="utf-8")
    pool = tmp_path / "pool.txt"  # new texts, and the evaluation texts that are not samples
    new = [t for _, t, _ in rows[SAMPLES + EVALUATION :]]
    held = [t for _, t, _ in rows[SAMPLES : SAMPLES + EVALUATION]]
    pool.write_text("\n".join(new + held) + "\n", encoding="utf-8")
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    ui = Ui(page)
    try:
        ui.goto(f"{url}/samples?model={MODEL}")
        ui.tab("Import")
        ui.settle()
        page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(samples))
        ui.settle()
        expect(page.get_by_role("radio", name="data (no header row)")).to_be_checked()
        ui.expect_text("Read as tab-separated values.")
        ui.expect_text(f"{SAMPLES} row(s) read, 0 unreadable.")
        panel = page.locator("[role='tabpanel']:visible")
        expect(panel.get_by_label("Text column", exact=True)).to_have_value("column 2")
        id_box = panel.get_by_label("Id column", exact=True)
        expect(id_box).to_have_value("column 1")  # proposed: its values look like ids
        pause(page, person.uniform(300, 1000))
        # -2.5..2.7 fits -3..+3 and -4..+4: no Import until the analyst picks the file's scale.
        expect(page.get_by_role("button", name="Import", exact=True)).to_have_count(0)
        panel.get_by_text("−4..+4", exact=True).click()
        ui.settle()
        expect(panel.get_by_role("radio", name="−4..+4")).to_be_checked()
        ui.screen("heldout_01_headerless_preview")
        ui.click("Import")
        ui.expect_text(f"Stored {SAMPLES} of {SAMPLES} rows.")
        kept = "they are stored, but no training takes them in"
        ui.expect_text(f"{OVERLAP} of these texts are in the evaluation set: {kept}")
        ui.screen("heldout_02_stored")
        with app_client(data_dir) as c:
            stored = list(c.list_samples(MODEL))
            assert sorted(s.source_id or "" for s in stored) == sorted(i for i, _, _ in rows[:SAMPLES])

        ui.nav("Training")
        page.get_by_role("slider").first.focus()
        page.keyboard.press("Home")  # effort "low"
        ui.settle()
        pause(page, person.uniform(300, 1000))
        ui.press(page.get_by_role("button", name="Train", exact=True))
        ui.expect_text("Per-trait metrics of the active version v1", timeout=300_000)
        ui.no_exception()
        with app_client(data_dir) as c:
            c.wait(MODEL, c.evaluate(MODEL, "v1").run_id, timeout=300)

        ui.nav("Label")  # an empty pool's section is open
        page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(pool))
        ui.settle()
        pause(page, person.uniform(300, 1000))
        ui.click("Import into the pool")
        added = (
            f"Added {len(new)} of the file's {len(new) + EVALUATION} texts to the pool. {EVALUATION} were "
            "left out: they are in the evaluation set, which stays held out."
        )
        ui.expect_text(added)
        # The first suggestions come after it (the page reruns for them): the message is still there to read.
        expect(page.get_by_role("button", name="2 · polite")).to_be_visible(timeout=60_000)
        ui.idle()
        expect(page.get_by_text(added)).to_be_visible()
        ui.screen("heldout_03_pool")
        with app_client(data_dir) as c:
            assert {p.text for p in c.list_pool(MODEL)} == {t.strip() for t in new}
        shown = page.locator("[data-testid='label-text']").first.inner_text().strip()

        # The other order: texts of the pool, the one shown among them, become evaluation texts.
        ui.goto(f"{url}/versions?model={MODEL}")  # its evaluation, charts and curves: a slow first paint
        ui.expect_text(f"v1 on {EVALUATION + OVERLAP} evaluation items")  # it trained on none of them
        expect(page.get_by_text("in v1's training data")).to_have_count(0)
        first = [r for r in rows[SAMPLES + EVALUATION :] if r[1].split() == shown.split()]
        assert len(first) == 1, shown
        late = first + [r for r in rows[-LATE:] if r != first[0]]
        more = tmp_path / "more-held.txt"  # the samples' columns: their scale is proposed, not asked
        more.write_text("".join(f"{i}\t{t}\t{v}\n" for i, t, v in late), encoding="utf-8")
        page.get_by_text("Add evaluation items from a file").click()
        page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(more))
        ui.settle()
        ui.click("Add to the evaluation set")
        ui.expect_text(
            f"Of this file's texts, {len(late)} are texts of the unlabelled pool: left out of labelling from "
            "now on"
        )
        ui.no_exception()
        ui.screen("heldout_04_versions")

        ui.nav("Label")
        text_box = page.locator("[data-testid='label-text']").first
        now = text_box.inner_text().strip()
        with app_client(data_dir) as c:  # the text shown joins the set now (another tab), if it is not in yet
            found = [t for _, t, _ in rows[SAMPLES + EVALUATION :] if t.split() == now.split()]
            assert len(found) == 1, now
            if not [r for r in late if r[1] == found[0]]:
                c.add_evaluation_items(MODEL, [{"trait": "politeness", "text": found[0], "quality": 1.0}])
        ui.press(page.get_by_role("button", name="2 · polite"))  # from the queue fetched before
        ui.settle()
        ui.expect_text("That label was not stored: the text is in the evaluation set now")
        expect(text_box).not_to_have_text(now)  # the next text
        ui.screen("heldout_05_refused")
        with app_client(data_dir) as c:
            assert not [s for s in c.list_samples(MODEL) if s.text == found[0].strip()]
            assert c.get_model(MODEL).buffered_feedback == 0

        ui.nav("Score")
        box = page.locator(".st-key-score_text textarea")
        box.click()
        typed = "Could you please take a look at my question when you have a moment? Thanks!"
        for word in typed.split(" "):
            page.keyboard.type(word + " ", delay=person.randint(30, 90))
        pause(page, person.uniform(300, 1000))
        ui.click("Score")
        page.locator(".st-key-score_chart").wait_for()
        ui.no_exception()
        ui.screen("heldout_06_score")

        ui.nav("Demo", heading="Stack Exchange requests")  # the model's description heads it
        page.locator(".st-key-preset_0 button").wait_for(timeout=120_000)  # its examples, from the samples
        ui.no_exception()
        ui.screen("heldout_07_demo")
    finally:
        page.close()
