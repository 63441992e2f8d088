"""Importing files shaped as they come, in headless Chromium at 1280x800.

A review export `id,score,review` with mean ratings from -3 to +3.6 goes into a draft's samples: the page
proposes the review as the text and the rating's scale (-4..+4, middle 0) instead of "as is", so every row
maps. The held-out part of another export, in its own columns, goes into a trained model's evaluation set
through the same column mapping, preview and refused-row table. Politeness requests with their mean rating on
-4..+4 (never reaching +-3): the analyst's own scale survives a look at the threshold rule, the summary names
the rules and the neutral rows, and the grid shows the stored rows as soon as the import ends.
Screenshots: artifacts/screenshots/import_*.
"""

from __future__ import annotations

import csv
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from core.demo import read_demo_model
from core.local import LocalService
from harness.datasets import find_datasets
from harness.streamlit import prepared_workbench
from tests.support.app import BROWSER, Ui, app_client, pause
from tests.support.grid import type_like_a_person

pytestmark = BROWSER

DRAFT = "local.reviews"
TRAINED = "local.reviews-v1"
RATED = "local.polite-raters"
MEANS = "local.polite-means"
DATASETS = find_datasets()
POLITENESS_CSV = (
    (DATASETS or Path("../shared/datasets")) / "stanford_politeness" / "stack-exchange.annotated.csv"
)
SENTIMENT = {"name": "Sentiment", "positive_label": "positive", "negative_label": "negative"}


def _rating(quality: float, rng: random.Random) -> str:
    """A mean rating on a -4..+4 scale as review sites export them: graded, rarely at the ends."""
    centre = 2.0 if quality >= 0.5 else -1.8
    return f"{max(-3.0, min(3.6, rng.gauss(centre, 0.9))):.2f}"


def _review_texts() -> list[tuple[str, float]]:
    rows = read_demo_model("product_reviews").samples + read_demo_model("support_replies").samples
    return list({r["text"]: float(r["quality"]) for r in rows}.items())  # a few hundred distinct texts


def _prepare(service: LocalService) -> None:
    """A one-trait draft, and a trained one-trait model (v1) without an evaluation set."""
    with service.client() as c:
        for handle in (DRAFT, TRAINED):
            c.create_model(handle, description="Product and support reviews")
            c.add_traits(handle, [SENTIMENT])
        for handle, description in (
            (RATED, "Requests rated by five raters each"),
            (MEANS, "Requests with their mean rating"),
        ):
            c.create_model(handle, description=description)
            c.add_traits(
                handle, [{"name": "Politeness", "positive_label": "polite", "negative_label": "rude"}]
            )
        demo = [r for r in read_demo_model("product_reviews").samples if r["trait"] == "Sentiment"]
        c.import_samples(TRAINED, [{**r, "trait": "sentiment"} for r in demo])
        c.wait(TRAINED, c.train(TRAINED, effort="low").run_id, timeout=300)


@pytest.fixture(scope="module")
def import_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    data_dir = tmp_path_factory.mktemp("import-browser")
    with prepared_workbench(data_dir, _prepare) as (url, _):
        yield url, data_dir


def _upload(page: Page, ui: Ui, path: Path, scope: Locator | None = None) -> None:
    ui.upload(path, scope)


def _pick_scale(page: Page, ui: Ui, scale: str, scope: Locator | None = None) -> None:
    """The file's scale, picked as a person does: a click on its option (the page preselects none when the
    ratings fit more than one, and offers no import until one is picked)."""
    where = scope or page
    expect(where.get_by_role("radio", name=scale)).not_to_be_checked()
    ui.expect_text("Until you pick the file's scale above, the mapping, the counts and the preview")
    where.get_by_text(scale, exact=True).click()
    ui.settle()
    expect(where.get_by_role("radio", name=scale)).to_be_checked()


def test_review_export_maps_from_its_scale(
    import_app: tuple[str, Path], browser: Browser, tmp_path: Path, person: random.Random
) -> None:
    url, data_dir = import_app
    rng = person
    texts = _review_texts()
    path = tmp_path / "reviews.csv"
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "score", "review"])
        for i, (text, quality) in enumerate(texts):
            writer.writerow([f"{200 + i // 40}_{i % 40}", _rating(quality, rng), text])
        writer.writerow(["999_1", "n/a", "A review whose rating was lost."])
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    ui = Ui(page)
    try:
        ui.goto(f"{url}/samples?model={DRAFT}")
        ui.tab("Import")
        _upload(page, ui, path)
        expect(page.get_by_role("combobox", name="Text column")).to_have_value("review")
        expect(page.get_by_role("combobox", name="Label column")).to_have_value("score")
        expect(page.get_by_role("radio", name="from its scale (low end → 0, high end → 1)")).to_be_checked()
        expect(page.get_by_label("Scale from", exact=True)).to_have_value("-4.00")
        expect(page.get_by_label("to", exact=True)).to_have_value("4.00")
        ui.expect_text("Its middle, 0, becomes quality 0.5")
        ui.expect_text(f"{len(texts)} row(s) read, 1 unreadable.")
        expect(page.get_by_role("button", name="Import", exact=True)).to_have_count(0)  # no scale yet
        _pick_scale(page, ui, "−4..+4")  # -3..3.6 fits -5..+5 too
        ui.shot("import_01_reviews_mapped")
        ui.click("Import")
        ui.expect_text(f"Stored {len(texts)} of {len(texts) + 1} rows.")
        ui.no_exception()
        ui.shot("import_02_reviews_stored")
        with app_client(data_dir) as c:
            stored = list(c.list_samples(DRAFT))
        assert len(stored) == len(texts) and all(0.0 < s.quality < 1.0 for s in stored)
        assert {s.text for s in stored} == {t for t, _ in texts}  # the reviews, not the ids
    finally:
        page.close()


def test_evaluation_set_takes_any_columns(
    import_app: tuple[str, Path], browser: Browser, tmp_path: Path, person: random.Random
) -> None:
    url, data_dir = import_app
    rng = person
    held = [
        (t, q)
        for t, q in _review_texts()
        if t not in {r["text"] for r in read_demo_model("product_reviews").samples}
    ]
    path = tmp_path / "held_out.csv"
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["Id", "Review", "Mean rating"])
        for i, (text, quality) in enumerate(held):
            writer.writerow([i, text, _rating(quality, rng)])
        writer.writerow([len(held), "", "1.5"])  # a row without its text
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    ui = Ui(page)
    try:
        ui.goto(f"{url}/versions?model={TRAINED}")
        page.get_by_text("Add evaluation items from a file").click()
        expander = page.locator("[data-testid='stExpander']").filter(has_text="Add evaluation items")
        _upload(page, ui, path, expander)
        expect(expander.get_by_role("combobox", name="Text column")).to_have_value("Review")
        expect(expander.get_by_role("combobox", name="Label column")).to_have_value("Mean rating")
        ui.expect_text(f"{len(held)} row(s) read, 1 unreadable.")
        expander.get_by_text("Rows that will not be imported").wait_for()
        expander.locator("[data-testid='stDataFrame']").get_by_text("no text").first.wait_for(
            state="attached"
        )
        expect(page.get_by_role("button", name="Add to the evaluation set")).to_have_count(0)
        _pick_scale(page, ui, "−4..+4", expander)  # its ratings fit -5..+5 too
        ui.shot("import_03_evaluation_mapped")
        ui.click("Add to the evaluation set")
        ui.expect_text(
            f"Added {len(held)} items ({len(held)} in the set). 1 row(s) of the file were not used"
        )
        page.get_by_role("button", name="Evaluate").wait_for()
        ui.no_exception()
        ui.shot("import_04_evaluation_added")
        with app_client(data_dir) as c:
            assert c.evaluation_set(TRAINED).total == len(held)
    finally:
        page.close()


@pytest.mark.skipif(
    not POLITENESS_CSV.exists(),
    reason="needs ../shared/datasets beside the checkout (or SCORING_DATASETS): the politeness CSV",
)
def test_several_raters_import_as_votes(
    import_app: tuple[str, Path], browser: Browser, tmp_path: Path
) -> None:
    """The politeness CSV's Score1..Score5 with TurkId1..TurkId5 become one vote each (through the
    1-25 scale), previewed as texts, votes per text and raters before anything is stored; a rater column
    without values is a mapping error that stores nothing."""
    url, data_dir = import_app
    with POLITENESS_CSV.open(newline="") as fh:
        rows = [r for _, r in zip(range(300), csv.DictReader(fh), strict=False)]
    path = tmp_path / "politeness_raters.csv"
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=[*rows[0], "Notes"])
        writer.writeheader()
        writer.writerows({**r, "Notes": ""} for r in rows)
    votes = sum(1 for r in rows for i in range(1, 6) if r[f"Score{i}"].strip())
    raters = {r[f"TurkId{i}"] for r in rows for i in range(1, 6) if r[f"Score{i}"].strip()}
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    ui = Ui(page)
    try:
        ui.goto(f"{url}/samples?model={RATED}")
        ui.tab("Import")
        _upload(page, ui, path)
        page.get_by_text("several raters (a column each)").click()
        ui.settle()
        ui.expect_text(f"{votes:,} votes on {len(rows):,} texts from {len(raters):,} raters")
        expect(page.get_by_role("radio", name="from its scale (low end → 0, high end → 1)")).to_be_checked()
        expect(page.get_by_label("Scale from", exact=True)).to_have_value("1.00")
        expect(page.get_by_label("to", exact=True)).to_have_value("25.00")
        ui.expect_text("Raters (")
        ui.shot("import_05_raters_preview")
        with app_client(data_dir) as c:
            assert list(c.list_samples(RATED)) == []  # nothing stored before Import

        # A rater column without values: a clear mapping error, nothing stored.
        page.get_by_text("Rater id column beside each label column").click()
        rater_of = page.get_by_role("combobox", name="Rater of Score1", exact=True)
        rater_of.click()
        page.keyboard.type("Notes", delay=60)
        page.keyboard.press("Enter")
        ui.settle()
        ui.expect_text("The rater column 'Notes' (beside 'Score1') has no values: pick another one.")
        expect(page.get_by_role("button", name="Import", exact=True)).to_have_count(0)
        rater_of.click()
        page.keyboard.type("TurkId1", delay=60)
        page.keyboard.press("Enter")
        ui.settle()
        ui.expect_text(f"{votes:,} votes on {len(rows):,} texts")
        ui.click("Import")
        ui.expect_text(f"Stored {votes} of {votes} rows.")
        ui.no_exception()
        with app_client(data_dir) as c:
            stored = list(c.list_samples(RATED))
        assert len(stored) == votes and {s.annotator for s in stored} == raters
        first = [s for s in stored if s.text == rows[0]["Request"].strip()]
        assert sorted(s.quality for s in first) == sorted(
            round((int(rows[0][f"Score{i}"]) - 1) / 24, 6) for i in range(1, 6)
        )
    finally:
        page.close()


def _type_number(page: Page, ui: Ui, label: str, value: str, rng: random.Random) -> None:
    """Into a number box as a person does: click it, select what it holds, type, Tab out (which commits)."""
    box = page.get_by_label(label, exact=True)
    box.click()
    pause(page, rng.uniform(150, 500))
    page.keyboard.press("Control+A")
    type_like_a_person(page, value, rng)
    page.keyboard.press("Tab")
    ui.settle()


@pytest.mark.skipif(
    not POLITENESS_CSV.exists(),
    reason="needs ../shared/datasets beside the checkout (or SCORING_DATASETS): the politeness CSV",
)
def test_the_analyst_s_scale_stays_and_the_grid_shows_the_import(
    import_app: tuple[str, Path], browser: Browser, tmp_path: Path, person: random.Random
) -> None:
    """The first 600 Stack Exchange requests with their mean rating on -4..+4 ((mean of Score1..5 - 13) / 3:
    the raters' 1..25 scale), which span -2.53..2.67: the boxes say -3..+3, no scale is picked, and the page
    asks whether it is -4..+4 (no Import until one is). The analyst types -4 and 4 (which picks -4..+4), looks
    at the threshold rule and goes back: the boxes still say -4 and 4 and -4..+4 is still picked, the summary
    names the rules and the neutral rows (a mean of exactly 13); after Import the Browse tab's grid holds the
    stored requests without leaving the page."""
    url, data_dir = import_app
    rng = person
    with POLITENESS_CSV.open(newline="") as fh:
        rows = [r for _, r in zip(range(600), csv.DictReader(fh), strict=False)]
    means = [round((sum(int(r[f"Score{i}"]) for i in range(1, 6)) / 5 - 13) / 3, 2) for r in rows]
    neutral = sum(m == 0 for m in means)
    path = tmp_path / "politeness_means.csv"
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["Id", "Request", "Mean rating"])
        writer.writerows([r["Id"], r["Request"], f"{m:.2f}"] for r, m in zip(rows, means, strict=True))
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    ui = Ui(page)
    try:
        ui.goto(f"{url}/samples?model={MEANS}")
        ui.tab("Import")
        _upload(page, ui, path)
        expect(page.get_by_role("radio", name="from its scale (low end → 0, high end → 1)")).to_be_checked()
        for scale in ("−3..+3", "−4..+4"):  # the labels fit both: none is picked for the analyst
            expect(page.get_by_role("radio", name=scale)).not_to_be_checked()
        expect(page.get_by_role("button", name="Import", exact=True)).to_have_count(0)
        ui.expect_text(f"Your labels span {min(means):g}..{max(means):g}".replace("-", "−"))
        ui.expect_text("is the file's scale −3..+3 or −4..+4?")
        expect(page.get_by_label("Scale from", exact=True)).to_have_value("-3.00")
        ui.screen("import_06_means_proposed")

        _type_number(page, ui, "Scale from", "-4", rng)
        _type_number(page, ui, "to", "4", rng)
        expect(page.get_by_role("radio", name="−4..+4")).to_be_checked()  # the ends typed name it
        page.get_by_text("threshold (two poles)").click()
        ui.settle()
        expect(page.get_by_label("Positive at or above", exact=True)).to_have_value("0.00")
        ui.expect_text(
            f"> 0 → 1.0 (positive), < 0 → 0.0 (negative), 0 → 0.5 (neutral); {neutral} rows neutral"
        )
        ui.screen("import_07_means_threshold")
        pause(page, rng.uniform(300, 1200))  # a look at the threshold's default
        page.get_by_text("from its scale (low end → 0, high end → 1)").click()
        ui.settle()
        expect(page.get_by_label("Scale from", exact=True)).to_have_value("-4.00")
        expect(page.get_by_label("to", exact=True)).to_have_value("4.00")
        expect(page.get_by_role("radio", name="−4..+4")).to_be_checked()  # the analyst's pick stays
        ui.expect_text(f"−4..+4 → quality 0..1; middle 0 → 0.5, neutral; {neutral} rows neutral")
        leave_out = page.get_by_role("checkbox", name=f"leave out the {neutral} neutral rows")
        expect(leave_out).not_to_be_checked()
        ui.screen("import_08_means_back_to_scale")
        ui.shot("import_08_means_back_to_scale_page")

        ui.click("Import")
        ui.expect_text(f"Stored {len(rows)} of {len(rows)} rows.")
        ui.no_exception()
        ui.screen("import_09_means_stored")
        with app_client(data_dir) as c:
            stored = list(c.list_samples(MEANS))
        assert len(stored) == len(rows)
        assert sorted(s.quality for s in stored) == sorted(round((m + 4) / 8, 6) for m in means)
        ui.tab("Browse & add")
        grid = page.locator("[data-testid='stDataFrame']").first
        grid.get_by_text(stored[0].text.strip()[:30]).first.wait_for(state="attached")
        expect(page.get_by_role("button", name="Next ▶")).to_be_enabled()  # 600 rows: more than a page
        # The grid's summary reruns every second and sends the page's widgets back with it (the mapping's
        # too): one such run after the import, then nothing on the page has failed.
        runs = page.evaluate("window.__stRuns")
        page.wait_for_function("(n) => window.__stRuns > n", arg=runs)
        ui.settle()
        ui.no_exception()
        ui.screen("import_10_means_grid")
    finally:
        page.close()
