"""Importing files shaped as they come, and what the Samples and Versions pages show of prepared models, in
headless Chromium at 1280x800 (1400x1600 for the evaluation view): one workbench for every part.

A review export `id,score,review` with mean ratings from -3 to +3.6 goes into a draft's samples: the page
proposes the review as the text and the rating's scale (-4..+4, middle 0) instead of "as is", so every row
maps. The held-out part of another export, in its own columns, goes into a trained model's evaluation set
through the same column mapping, preview and refused-row table. Politeness requests with their mean rating on
-4..+4 (never reaching +-3): the analyst's own scale survives a look at the threshold rule, the summary names
the rules and the neutral rows, and the grid shows the stored rows as soon as the import ends.

The Versions page's evaluation part: two versions side by side on the evaluation set (metrics with B − A and
significance, reliability plots, disagreements, CSV export) and a threshold chosen on the PR curve.

The Samples page keeps the tab the analyst is on: settling a text on the Disagreements tab, and picking a file
on the Import tab right after reopening a trained model, each change what the page shows above its tabs (a
message, the reopen offer); the tabs stay where they were, and so does the mapping of the file picked.

What colleagues typed stays text: a comment, a labelled text, an annotator's name and a trait's guidelines
written in Markdown (a link, an image that would be fetched as a tracking pixel, a bare address GitHub's
Markdown links by itself) show as typed on the reviewer's Disagreements tab and beside the text on the Label
page, and a trait's name and pole labels written in Markdown or as an e-mail address show as typed on the
Label page's metric and buttons; no link and no image comes of them.

The models are prepared through the client of the data directory's service, which the app's embedded service
then attaches to.
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
from tests.support.app import (
    BROWSER,
    CASUAL,
    FORMAL,
    FORMALITY,
    Ui,
    app_client,
    pause,
    sentiment_samples,
)
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


def _prepare_all(service: LocalService) -> None:
    """Every part's models, on one service: one workbench for the module."""
    _prepare(service)
    _prepare_evaluation(service)
    _prepare_tabs(service)
    _prepare_inert(service)


@pytest.fixture(scope="module")
def import_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    data_dir = tmp_path_factory.mktemp("import-browser")
    with prepared_workbench(data_dir, _prepare_all) as (url, _):
        yield url, data_dir


@pytest.fixture
def workbench(import_app: tuple[str, Path]) -> str:
    return import_app[0]


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


# -- the evaluation set: two versions side by side -----------------------------------------------------------

EVALUATED = "local.evalview"
# Held-out variants of the training texts, plus mixed sentences (half formal, half casual) that the two
# versions score differently: labelled by the half that comes first.
HELD = [{"trait": "formality", "text": f"{t} (a)", "quality": 1.0} for t in FORMAL[:8]]
HELD += [{"trait": "formality", "text": f"{t} (a)", "quality": 0.0} for t in CASUAL[:8]]
HELD += [
    {"trait": "formality", "text": f"{f} {c}", "quality": 1.0} for f, c in zip(FORMAL, CASUAL, strict=True)
]
HELD += [
    {"trait": "formality", "text": f"{c} {f}", "quality": 0.0}
    for f, c in zip(FORMAL, CASUAL[1:], strict=False)
]
HELD += [{**r, "text": r["text"].replace("day", "evening")} for r in sentiment_samples()]


def _prepare_evaluation(service: LocalService) -> None:
    """v1 trained with low effort, v2 re-optimized with high effort; both evaluated on held-out variants."""
    with service.client() as c:
        c.create_model(EVALUATED, description="evaluation view")
        c.add_traits(EVALUATED, [FORMALITY, SENTIMENT])
        formal = [{"trait": "formality", "text": t, "quality": 1.0} for t in FORMAL]
        casual = [{"trait": "formality", "text": t, "quality": 0.0} for t in CASUAL]
        c.import_samples(EVALUATED, formal + casual + sentiment_samples())
        c.wait(EVALUATED, c.train(EVALUATED, effort="low").run_id, timeout=120)
        c.wait(EVALUATED, c.train(EVALUATED, effort="high", reoptimize_params=True).run_id, timeout=180)
        c.add_evaluation_items(EVALUATED, HELD)
        for version in (1, 2):
            c.wait(EVALUATED, c.evaluate(EVALUATED, version).run_id, timeout=120)


def test_compare_two_versions_on_the_evaluation_set(workbench: str, browser: Browser) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1600})
    ui = Ui(page)
    try:
        ui.goto(f"{workbench}/versions?model={EVALUATED}")
        page.get_by_role("heading", name="Evaluation set").first.wait_for()
        ui.expect_text(f"v2 on {len(HELD)} evaluation items")
        ui.no_exception()

        # A threshold from the PR curve: precision ≥ 0.9 on formality, stored with v2.
        expect_chart = page.locator(".st-key-thr_chart .js-plotly-plot")
        expect_chart.first.wait_for()
        ui.click("Set formality's threshold on v2")
        ui.expect_text("formality on v2: threshold")
        ui.no_exception()

        ui.click("Compare on the set")
        ui.expect_text("Where v1 and v2 disagree most")
        assert page.locator("[class*='st-key-evcmp_rel_'] .js-plotly-plot").count() == 2  # one per trait
        page.locator("[role='columnheader']", has_text="significant").first.wait_for(state="attached")
        with page.expect_download() as download:
            page.get_by_role("button", name=f"Download the comparison (CSV, {len(HELD)} items)").click()
        exported = Path(download.value.path()).read_text()
        head, metric_rows, dis_rows = exported.split("\n", 1)[0], *exported.split("\n\n")[:2]
        assert head.startswith(f"# {EVALUATED}: A = v1, B = v2, paired on {len(HELD)}")
        assert "trait,metric,A,B,B − A,95% CI of B − A,p,significant,items" in metric_rows
        assert dis_rows.startswith("trait,label,A,B,B − A,text,item_id")
        assert len(dis_rows.strip().splitlines()) == len(HELD) + 1  # header + every item
        ui.no_exception()
        ui.shot("evaluation_compare")
    finally:
        page.close()


# -- the Samples page keeps the tab the analyst is on --------------------------------------------------------

CONTESTED = "local.tabs-contested"
TABS_TRAINED = "local.tabs-trained"
CONTESTED_TEXT = "The parcel came late but the seller answered at once."


def _prepare_tabs(service: LocalService) -> None:
    """Two trained models (v1): one holds a text two annotators put on opposite poles."""
    demo = [
        {**r, "trait": "sentiment"}
        for r in read_demo_model("product_reviews").samples
        if r["trait"] == "Sentiment"
    ]
    with service.client() as c:
        for handle in (CONTESTED, TABS_TRAINED):
            c.create_model(handle, description="Product reviews")
            c.add_traits(handle, [SENTIMENT])
        c.import_samples(CONTESTED, demo[:40])
        c.add_samples(
            CONTESTED,
            [
                {"trait": "sentiment", "text": CONTESTED_TEXT, "quality": q, "annotator": who}
                for q, who in ((1.0, "rater-a"), (0.0, "rater-b"))
            ],
        )
        c.import_samples(TABS_TRAINED, demo)
        for handle in (CONTESTED, TABS_TRAINED):
            c.wait(handle, c.train(handle, effort="low").run_id, timeout=300)


def _selected(page: Page, name: str) -> None:
    expect(page.get_by_role("tab", name=name, exact=True)).to_have_attribute("aria-selected", "true")


def test_settling_a_text_stays_on_the_disagreements_tab(
    workbench: str, browser: Browser, person: random.Random
) -> None:
    """Settling is a sample edit: the analyst reopens the model, then settles; that run drops the reopen's
    message above the tabs."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    ui = Ui(page)
    try:
        ui.goto(f"{workbench}/samples?model={CONTESTED}")
        ui.click("Edit the data (v1 keeps serving)")
        ui.expect_text("Draft reopened from v1")
        ui.tab("Disagreements")
        ui.settle()
        ui.expect_text(CONTESTED_TEXT)
        pause(page, person.uniform(400, 1500))  # reading both votes
        ui.click("Settle: positive")
        ui.expect_text("Settled as “positive”")
        _selected(page, "Disagreements")
        ui.expect_text(CONTESTED_TEXT)  # the settled text, on the tab the analyst was on
        ui.no_exception()
        ui.screen("samples_tabs_settled")
    finally:
        page.close()


def test_a_file_picked_after_reopening_keeps_the_import_tab_and_its_mapping(
    workbench: str, browser: Browser, person: random.Random, tmp_path: Path
) -> None:
    """Reopening shows a message above the tabs for one run; the next run (the file picked) drops it."""
    path = tmp_path / "more_reviews.txt"
    rows = [("r1", "Great value, works as described.", 3.5), ("r2", "Broke after a day.", -3.2)]
    rows += [(f"r{i}", f"Review number {i}: fine for the price.", 1.0) for i in range(3, 12)]
    path.write_text("".join(f"{i}\t{t}\t{q}\n" for i, t, q in rows), encoding="utf-8")
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    ui = Ui(page)
    try:
        ui.goto(f"{workbench}/samples?model={TABS_TRAINED}")
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


# -- what colleagues typed stays text ------------------------------------------------------------------------

INERT = "local.inert"
EVIL = "evil.example"
LINK = f"[open the updated guidelines](http://{EVIL}/guide)"
PIXEL = f"![x](http://{EVIL}/pixel.png)"
COMMENT = f"{LINK} {PIXEL} or www.{EVIL}"
INERT_TEXT = f"Great parcel {PIXEL} see http://{EVIL}/t"
GUIDE = f"Positive: glad. {LINK} {PIXEL}"
INERT_TRAIT = {"name": "Sentiment", "positive_label": "good", "negative_label": "bad", "description": GUIDE}
# A model whose trait name and pole labels are Markdown and an e-mail address: the Label page's metric,
# buttons and key help show them as typed.
NAMED = "local.inert_names"
TRAP = "127.0.0.1:9"
TRAIT_NAME = f"[x](http://{TRAP}/x) ![i](http://{TRAP}/i.png) **b**"
POSITIVE = "ann@example.com"
NEGATIVE = f"![n](http://{TRAP}/n.png)"


def _prepare_inert(service: LocalService) -> None:
    """A draft whose one text two raters put on opposite poles, a comment on it, and a pool to label."""
    with service.client() as c:
        c.create_model(INERT, description="Inert text")
        c.add_traits(INERT, [INERT_TRAIT])
        c.add_samples(
            INERT,
            [
                {"trait": "sentiment", "text": INERT_TEXT, "quality": q, "annotator": who}
                for q, who in ((1.0, f"rater@{EVIL}"), (0.0, "rater-b"))
            ],
        )
        c.add_comment(INERT, "sentiment", INERT_TEXT, COMMENT)
        c.mark_unsure(INERT, "sentiment", INERT_TEXT)
        c.add_pool_texts(INERT, [f"Pool text {i}: fine {PIXEL}" for i in range(3)])
        c.create_model(NAMED, description="Markdown names")
        named = {"name": TRAIT_NAME, "positive_label": POSITIVE, "negative_label": NEGATIVE}
        c.add_traits(NAMED, [named])
        c.add_pool_texts(NAMED, ["A plain text to label", "Another plain text"])


def _shows(page: Page, text: str) -> None:
    """`text` is on the page as typed (the invisible word joiners that break autolinks aside)."""
    page.wait_for_function(
        "(t) => document.body.innerText.replaceAll('\\u2060', '').includes(t)", arg=text, timeout=60_000
    )


def _nothing_live(page: Page) -> None:
    assert page.locator(f"a[href*='{EVIL}']").count() == 0
    assert page.locator(f"img[src*='{EVIL}']").count() == 0


def test_comments_texts_and_names_are_text_on_the_disagreements_tab(workbench: str, browser: Browser) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    fetched: list[str] = []
    page.on("request", lambda r: fetched.append(r.url) if EVIL in r.url else None)
    ui = Ui(page)
    try:
        ui.goto(f"{workbench}/samples?model={INERT}")
        ui.tab("Disagreements")
        ui.settle()
        _shows(page, COMMENT)  # the comment as typed, brackets and all
        _shows(page, f"rater@{EVIL}: 1.00")
        _shows(page, INERT_TEXT)
        _nothing_live(page)
        assert fetched == []  # no image was asked for
        ui.no_exception()
        ui.screen("inert_text_disagreements")
    finally:
        page.close()


def test_guidelines_are_text_on_the_label_page(workbench: str, browser: Browser) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    fetched: list[str] = []
    page.on("request", lambda r: fetched.append(r.url) if EVIL in r.url else None)
    ui = Ui(page)
    try:
        ui.goto(f"{workbench}/label?model={INERT}")
        _shows(page, GUIDE)
        _nothing_live(page)
        assert fetched == []
        ui.no_exception()
        ui.screen("inert_text_label")
    finally:
        page.close()


def test_trait_names_and_pole_labels_are_text_on_the_label_page(workbench: str, browser: Browser) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    fetched: list[str] = []
    page.on("request", lambda r: fetched.append(r.url) if TRAP in r.url else None)
    ui = Ui(page)
    try:
        ui.goto(f"{workbench}/label?model={NAMED}")
        _shows(page, f"for {TRAIT_NAME}")  # the metric's label, brackets and stars as typed
        _shows(page, f"1 · {NEGATIVE}")  # the buttons
        _shows(page, f"2 · {POSITIVE}")
        assert page.locator(f"a[href*='{TRAP}'], a[href^='mailto:']").count() == 0
        assert page.locator(f"img[src*='{TRAP}']").count() == 0
        assert fetched == []  # no image was asked for
        ui.no_exception()
        ui.screen("inert_text_trait_names")
    finally:
        page.close()
