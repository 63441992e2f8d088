"""What a new analyst met on the Label, Models, Samples and Settings pages, in headless Chromium at
1280x800, acting as a person does (what the Versions chart says it plots, and tagging a version that is not
the active one: tests/app/test_heldout_pages.py).

The models are prepared through the client before the workbench starts (no demo load): a trained one-trait
model to label, a draft whose training the service slows down (a test hook) so the Models page meets it busy,
and a draft for a rated file and its flags.
Screenshots: artifacts/screenshots/newcomer_*.png.
"""

from __future__ import annotations

import csv
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, ViewportSize, expect

from core.demo import read_demo_model
from core.local import KEY_FILE, LocalService
from harness.faults import faults_env
from harness.streamlit import prepared_workbench
from tests.support.app import BROWSER, CALL_FAILED, Ui, app_client

pytestmark = BROWSER

SCREEN: ViewportSize = {"width": 1280, "height": 800}
LABELLED = "local.replies"  # trained on the support replies' politeness labels; its pool gets news texts
SLOW = "local.slow-model"  # a draft; its training waits before saving (a fault-injection hook)
RELEASE = "release-slow-save"  # the file in the data dir that lets the slow draft's training save
FLAGS = "local.rated-reviews"  # a draft that gets a rated review file through the Import tab
POLITENESS = {"name": "Politeness", "positive_label": "polite", "negative_label": "rude"}
SENTIMENT = {"name": "Sentiment", "positive_label": "positive", "negative_label": "negative"}


def _demo(slug: str, trait: str) -> list[dict[str, Any]]:
    return [r for r in read_demo_model(slug).samples if r["trait"] == trait]


def _prepare(service: LocalService) -> None:
    with service.client() as c:
        c.create_model(LABELLED, description="Support replies: politeness")
        c.add_traits(LABELLED, [POLITENESS])
        c.import_samples(
            LABELLED, [{**r, "trait": "politeness"} for r in _demo("support_replies", "Politeness")]
        )
        c.wait(LABELLED, c.train(LABELLED, "low").run_id, timeout=300)
        c.tag_version(LABELLED, "prod")
        c.create_model(SLOW, description="A draft trained slowly")
        c.add_traits(SLOW, [SENTIMENT])
        c.import_samples(SLOW, [{**r, "trait": "sentiment"} for r in _demo("product_reviews", "Sentiment")])
        c.create_model(FLAGS, description="Reviews with their ratings")
        c.add_traits(FLAGS, [SENTIMENT])


@pytest.fixture(scope="module")
def newcomer_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    data_dir = tmp_path_factory.mktemp("newcomer-browser")
    # The slow draft's training holds before saving until the test releases it (bounded at 5 minutes); the
    # service has the hook from its start, and the preparation trains no model it applies to.
    hooks = {"slow_save": {"handle_prefix": SLOW, "seconds": 300, "release": str(data_dir / RELEASE)}}
    with prepared_workbench(data_dir, _prepare, env=faults_env(hooks)) as (url, _):
        yield url, data_dir


@pytest.fixture
def ui(browser: Browser, request: pytest.FixtureRequest) -> Iterator[Ui]:
    page = browser.new_page(viewport=SCREEN)
    person = Ui(page)
    try:
        yield person
        if request.node.stash.get(CALL_FAILED, False):  # a fixture never sees the test's exception
            person.failure(f"{request.node.name}_failure")
    finally:
        page.close()


def _choose(ui: Ui, label: str, option: str) -> None:
    """Pick an option of a select box as a person does: click, type, Enter."""
    box = ui.page.get_by_role("combobox", name=label, exact=True)
    box.click()
    ui.page.keyboard.type(option, delay=60)
    ui.page.keyboard.press("Enter")
    ui.settle()
    expect(box).to_have_value(re.compile(re.escape(option)))


def test_label_page_says_labels_retrain_and_lets_a_label_be_withdrawn(
    newcomer_app: tuple[str, Path], ui: Ui, tmp_path: Path
) -> None:
    """Before the first key the page says a label is feedback that retrains the model at N (the service's
    20); the buffer is listed, `u` and Withdraw take a label back, and what is left to label counts down."""
    url, data_dir = newcomer_app
    page = ui.page
    ui.goto(f"{url}/label?model={LABELLED}")
    note = page.get_by_text("a new label goes in as score feedback").first
    expect(note).to_contain_text("retrains it")
    expect(note).to_contain_text("That happens when 20 labels are buffered")
    pool = tmp_path / "news.txt"
    texts = [str(r["text"]) for r in read_demo_model("news_style").samples]
    pool.write_text("\n".join(dict.fromkeys(texts)) + "\n")
    total = len(dict.fromkeys(texts))
    page.locator("input[type='file']").first.set_input_files(str(pool))
    ui.settle()
    ui.click("Import into the pool")
    page.locator("[data-testid='label-text']").first.wait_for()
    left = page.locator("[data-testid='stMetric']").filter(has_text="Left to label")
    expect(left).to_contain_text(f"{total} of {total}")
    ui.screen("newcomer_label_before")

    ui.keys_to_the_page()
    page.keyboard.press("2")  # feedback to the trained model
    ui.expect_text("1 of 20 label(s) are waiting")
    expect(left).to_contain_text(f"{total - 1} of {total}")
    expander = page.get_by_text("Buffered feedback: 1 of 20 label(s) until the model retrains")
    expander.wait_for()
    page.keyboard.press("u")
    ui.expect_text("Undone: the feedback label was withdrawn before a training took it.")
    expect(left).to_contain_text(f"{total} of {total}")
    with app_client(data_dir) as c:
        assert c.get_model(LABELLED).buffered_feedback == 0

    page.keyboard.press("1")
    ui.expect_text("1 of 20 label(s) are waiting")
    page.get_by_text("Buffered feedback: 1 of 20").click()  # open the list
    page.get_by_role("button", name="Withdraw").first.click()
    ui.settle()
    ui.expect_text("0 left in the buffer")  # one press: a rerun of the page meanwhile loses none
    with app_client(data_dir) as c:
        assert c.get_model(LABELLED).buffered_feedback == 0 and list(c.list_feedback(LABELLED)) == []
    ui.no_exception()
    ui.screen("newcomer_label_withdrawn")


def test_models_table_follows_a_busy_model_and_open_goes_to_its_page(
    newcomer_app: tuple[str, Path], ui: Ui
) -> None:
    """The Browse table follows a model from busy to ready without a reload, and Open goes to the chosen
    model's page, from a table whose fragment reruns on a timer too."""
    url, data_dir = newcomer_app
    page = ui.page
    ui.goto(url)  # the workbench's embedded service runs from the first visit
    with app_client(data_dir) as c:
        c.train(SLOW, "low")  # waits before saving until released below: busy meanwhile
    ui.goto(url)
    table = page.locator("[data-testid='stDataFrame']").first
    row = table.locator("tr", has=page.get_by_text(SLOW, exact=True))
    expect(row).to_contain_text("busy")
    ui.screen("newcomer_models_busy")
    # Open while the table follows a busy model (its fragment reruns on a timer): the next page is drawn
    # (it stayed blank when the switch came from the fragment).
    _choose(ui, "Open a model", FLAGS)
    page.locator(".st-key-models_open button").click()
    ui.settle()
    page.get_by_role("heading", name="Samples").first.wait_for()
    assert "/samples" in page.url
    ui.nav("Models")
    expect(row).to_contain_text("busy")
    (data_dir / RELEASE).touch()  # the training saves now
    expect(row).to_contain_text("ready", timeout=120_000)  # no reload: the table follows the state
    _choose(ui, "Open a model", SLOW)
    page.locator(".st-key-models_open button").click()
    ui.settle()
    page.get_by_role("heading", name="Versions").first.wait_for()
    assert "/versions" in page.url
    ui.no_exception()


def test_flags_show_the_rating_fit_the_screen_and_count_a_removal(
    newcomer_app: tuple[str, Path], ui: Ui, tmp_path: Path, person: random.Random
) -> None:
    """A flag shows the file's own rating beside the quality it became, its buttons' labels fit at 1280 px,
    and the count of samples checked drops by one after a Remove."""
    url, _ = newcomer_app
    page = ui.page
    rng = person
    rows = _demo("product_reviews", "Sentiment")
    path = tmp_path / "rated.csv"
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["review", "rating"])
        for i, r in enumerate(rows):
            positive = float(r["quality"]) >= 0.5
            if i % 9 == 4:  # rated the wrong way round by mistake
                positive = not positive
            writer.writerow([r["text"], f"{rng.uniform(1.5, 3.8) * (1 if positive else -1):.1f}"])
    ui.goto(f"{url}/samples?model={FLAGS}")
    ui.tab("Import")
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(path))
    ui.settle()
    page.get_by_text("−4..+4", exact=True).click()  # ratings up to 3.8 fit −5..+5 too: the analyst picks
    ui.settle()
    expect(page.get_by_role("radio", name="−4..+4")).to_be_checked()
    ui.click("Import")
    ui.expect_text(f"Stored {len(rows)} of {len(rows)} rows.")
    ui.tab("Flags")
    ui.click("Check samples")
    summary = page.get_by_text(re.compile(r"flagged sample\(s\) among \d+ samples")).first
    expect(summary).to_contain_text(f"among {len(rows)} samples", timeout=120_000)
    first = page.locator("[class*='st-key-flag_row_']").first
    expect(first).to_contain_text("rated ")  # the file's own rating beside the quality it became
    expect(first).to_contain_text("(rating)")
    first.scroll_into_view_if_needed()
    cut = first.get_by_role("button").evaluate_all(
        "bs => bs.filter(b => [...b.querySelectorAll('p, span, div')]"
        ".some(e => e.scrollWidth > e.clientWidth + 1)).map(b => b.innerText)"
    )
    assert cut == [], f"button labels cut at 1280 px: {cut}"
    ui.screen("newcomer_flags")
    ui.press(first.get_by_role("button", name="Remove"))
    ui.settle()
    ui.expect_text("Removed sample #")
    expect(page.get_by_text(re.compile(r"among \d+ samples")).first).to_contain_text(
        f"among {len(rows) - 1} samples"
    )
    ui.no_exception()


def test_settings_shows_the_embedded_service_s_key_to_copy(newcomer_app: tuple[str, Path], ui: Ui) -> None:
    """Settings shows the embedded service's key, with a copy button, for scripts and Perspective
    clients."""
    url, data_dir = newcomer_app
    page = ui.page
    ui.goto(f"{url}/settings")
    page.get_by_text("Key for scripts and Perspective clients on this computer").click()
    key = (data_dir / KEY_FILE).read_text().strip()
    code = page.locator("[data-testid='stCode']").filter(has_text=key).first
    expect(code).to_be_visible()
    code.hover()
    expect(code.get_by_label("Copy to clipboard")).to_be_attached()  # the code box's copy button
    expect(
        page.locator("[data-testid='stCode']").filter(has_text="comments:analyze?key=").first
    ).to_be_visible()
    ui.no_exception()
    ui.screen("newcomer_settings_key")
