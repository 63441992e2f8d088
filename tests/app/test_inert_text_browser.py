"""What colleagues typed stays text, in headless Chromium at 1280x800: a comment, a labelled text, an
annotator's name and a trait's guidelines written in Markdown (a link, an image that would be fetched as a
tracking pixel, a bare address GitHub's Markdown links by itself) show as typed on the reviewer's
Disagreements tab and beside the text on the Label page, and a trait's name and pole labels written in
Markdown or as an e-mail address show as typed on the Label page's metric and buttons; no link and no
image comes of them.
Screenshots: artifacts/screenshots/inert_text_*."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page

from core.local import LocalService
from harness.streamlit import prepared_workbench
from tests.support.app import BROWSER, Ui

pytestmark = BROWSER

HANDLE = "local.inert"
EVIL = "evil.example"
LINK = f"[open the updated guidelines](http://{EVIL}/guide)"
PIXEL = f"![x](http://{EVIL}/pixel.png)"
COMMENT = f"{LINK} {PIXEL} or www.{EVIL}"
TEXT = f"Great parcel {PIXEL} see http://{EVIL}/t"
GUIDE = f"Positive: glad. {LINK} {PIXEL}"
TRAIT = {"name": "Sentiment", "positive_label": "good", "negative_label": "bad", "description": GUIDE}
# A model whose trait name and pole labels are Markdown and an e-mail address: the Label page's metric,
# buttons and key help show them as typed.
NAMED = "local.inert_names"
TRAP = "127.0.0.1:9"
TRAIT_NAME = f"[x](http://{TRAP}/x) ![i](http://{TRAP}/i.png) **b**"
POSITIVE = "ann@example.com"
NEGATIVE = f"![n](http://{TRAP}/n.png)"


def _prepare(service: LocalService) -> None:
    """A draft whose one text two raters put on opposite poles, a comment on it, and a pool to label."""
    with service.client() as c:
        c.create_model(HANDLE, description="Inert text")
        c.add_traits(HANDLE, [TRAIT])
        c.add_samples(
            HANDLE,
            [
                {"trait": "sentiment", "text": TEXT, "quality": q, "annotator": who}
                for q, who in ((1.0, f"rater@{EVIL}"), (0.0, "rater-b"))
            ],
        )
        c.add_comment(HANDLE, "sentiment", TEXT, COMMENT)
        c.mark_unsure(HANDLE, "sentiment", TEXT)
        c.add_pool_texts(HANDLE, [f"Pool text {i}: fine {PIXEL}" for i in range(3)])
        c.create_model(NAMED, description="Markdown names")
        named = {"name": TRAIT_NAME, "positive_label": POSITIVE, "negative_label": NEGATIVE}
        c.add_traits(NAMED, [named])
        c.add_pool_texts(NAMED, ["A plain text to label", "Another plain text"])


@pytest.fixture(scope="module")
def inert_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with prepared_workbench(tmp_path_factory.mktemp("inert-text"), _prepare) as (url, _):
        yield url


def _shows(page: Page, text: str) -> None:
    """`text` is on the page as typed (the invisible word joiners that break autolinks aside)."""
    page.wait_for_function(
        "(t) => document.body.innerText.replaceAll('\\u2060', '').includes(t)", arg=text, timeout=60_000
    )


def _nothing_live(page: Page) -> None:
    assert page.locator(f"a[href*='{EVIL}']").count() == 0
    assert page.locator(f"img[src*='{EVIL}']").count() == 0


def test_comments_texts_and_names_are_text_on_the_disagreements_tab(inert_app: str, browser: Browser) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    fetched: list[str] = []
    page.on("request", lambda r: fetched.append(r.url) if EVIL in r.url else None)
    ui = Ui(page)
    try:
        ui.goto(f"{inert_app}/samples?model={HANDLE}")
        ui.tab("Disagreements")
        ui.settle()
        _shows(page, COMMENT)  # the comment as typed, brackets and all
        _shows(page, f"rater@{EVIL}: 1.00")
        _shows(page, TEXT)
        _nothing_live(page)
        assert fetched == []  # no image was asked for
        ui.no_exception()
        ui.screen("inert_text_disagreements")
    finally:
        page.close()


def test_guidelines_are_text_on_the_label_page(inert_app: str, browser: Browser) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    fetched: list[str] = []
    page.on("request", lambda r: fetched.append(r.url) if EVIL in r.url else None)
    ui = Ui(page)
    try:
        ui.goto(f"{inert_app}/label?model={HANDLE}")
        _shows(page, GUIDE)
        _nothing_live(page)
        assert fetched == []
        ui.no_exception()
        ui.screen("inert_text_label")
    finally:
        page.close()


def test_trait_names_and_pole_labels_are_text_on_the_label_page(inert_app: str, browser: Browser) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    fetched: list[str] = []
    page.on("request", lambda r: fetched.append(r.url) if TRAP in r.url else None)
    ui = Ui(page)
    try:
        ui.goto(f"{inert_app}/label?model={NAMED}")
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
