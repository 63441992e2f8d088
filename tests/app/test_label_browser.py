"""The Label page in headless Chromium: labelling with the keyboard alone (after importing a pool file), and
its shortcuts gone once the page is left (the Demo page's live box gets every key)."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import Browser, Page, expect

from tests.support.app import BROWSER, Ui, app_client, make_draft

pytestmark = BROWSER

HANDLE = "local.product-reviews"  # the demo draft loaded on first start
POOL = [
    "The strap broke after 3 weeks; the old one lasted two years.",
    "Love it!!",
    "Battery went from 100% to 40% in an hour of video.",
    "Meh, it is fine I guess.",
    "Arrived 2 days late and the box was crushed on one corner.",
    "Best purchase ever, so happy.",
    "The zip jammed on the second trip and the seller never answered my email.",
    "Fits well, washes well, and the colour has not faded at all.",
]


def _caption(page: Page) -> str:
    return page.get_by_text(re.compile(r"labelled this session")).first.inner_text()


def _text(page: Page) -> str:
    return page.locator("[data-testid='label-text']").first.inner_text()


def test_label_with_the_keyboard(app_url: str, browser: Browser, tmp_path: Path) -> None:  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 1400})
    ui = Ui(page)
    try:
        # The first visit starts the service; the draft is the last demo model it loads, after the other two
        # have trained (the page's first paint no longer takes long enough to hide that).
        ui.goto(app_url)
        # The sidebar follows a load this session saw running; one that ended before the first paint (the
        # service was started ahead of the browser) shows nothing, and the models are there already.
        sidebar = page.locator("[data-testid='stSidebar']")
        if sidebar.get_by_text("Demo models").count():
            outcome = sidebar.get_by_text(re.compile(r"Demo models ready\.|demo models did not load")).first
            outcome.wait_for(timeout=300_000)
            assert outcome.inner_text().endswith("Demo models ready."), outcome.inner_text()
        ui.goto(f"{app_url}/label?model={HANDLE}")
        page.get_by_role("heading", name="Label").first.wait_for()
        ui.no_exception()
        pool = tmp_path / "pool.txt"
        pool.write_text("\n".join(POOL) + "\n")
        page.locator("input[type='file']").first.set_input_files(str(pool))
        ui.settle()
        ui.click("Import into the pool")
        page.locator("[data-testid='label-text']").first.wait_for()
        ui.no_exception()
        ui.keys_to_the_page()

        first = _text(page)
        assert first in POOL and "0 labelled this session" in _caption(page)
        shown = page.locator("[data-testid='label-text']").first
        counter = page.get_by_text(re.compile(r"labelled this session")).first
        page.keyboard.press("2")
        ui.expect_text("Added 1 sample(s).")
        expect(counter).to_contain_text("1 labelled this session")
        expect(shown).not_to_have_text(first)
        ui.settle()

        page.keyboard.press("u")
        ui.expect_text("Undone: the label was removed.")
        expect(shown).to_have_text(first)
        expect(counter).to_contain_text("0 labelled this session")
        ui.settle()

        # A label, a skip, then `u`: the label is undone and its text comes back, not the skipped one.
        page.keyboard.press("1")
        ui.expect_text("Added 1 sample(s).")
        expect(counter).to_contain_text("1 labelled this session")
        expect(shown).not_to_have_text(first)
        ui.settle()
        skipped = _text(page)
        page.keyboard.press("0")
        expect(shown).not_to_have_text(skipped)
        ui.settle()
        page.keyboard.press("u")
        ui.expect_text("Undone: the label was removed.")
        expect(shown).to_have_text(first)
        expect(counter).to_contain_text("0 labelled this session")
        ui.settle()

        page.keyboard.press("0")
        expect(shown).not_to_have_text(first)
        ui.settle()
        second = _text(page)
        page.keyboard.press("ArrowLeft")
        expect(shown).to_have_text(first)
        ui.settle()
        page.keyboard.press("ArrowRight")
        expect(shown).to_have_text(second)
        ui.settle()

        for n, key in enumerate(("1", "2", "1", "2"), start=1):
            page.keyboard.press(key)
            expect(counter).to_contain_text(f"{n} labelled this session")
            ui.settle()
        ui.click("Update the AUC chart")  # on demand: a label never re-reads the stored samples
        ui.expect_text("Out-of-fold ROC-AUC")
        page.locator("[data-testid='stVegaLiteChart']").first.wait_for()
        ui.no_exception()
        ui.shot("label_page")
    finally:
        page.close()


TRAINED = "local.support-replies"  # the demo model loaded trained on first start
TYPED = "Would you 1 2 0 u mind? Call 0121 2u 10 times, u 2!"


def _waiting(page: Page) -> int:
    """The service's count of buffered feedback, as the buffer's list heads it (the one figure a page
    shows of it)."""
    line = page.get_by_text(re.compile(r"Buffered feedback: \d+")).first.inner_text()
    found = re.search(r"Buffered feedback: (\d+)", line)
    assert found, line
    return int(found.group(1))


def test_shortcuts_end_with_the_label_page(app_url: str, browser: Browser, tmp_path: Path) -> None:  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 1400})
    ui = Ui(page)
    try:
        ui.goto(f"{app_url}/label?model={TRAINED}")
        page.get_by_role("heading", name="Label").first.wait_for()
        pool = tmp_path / "pool_trained.txt"
        pool.write_text("\n".join(POOL) + "\n")
        page.locator("input[type='file']").first.set_input_files(str(pool))
        ui.settle()
        ui.click("Import into the pool")
        page.locator("[data-testid='label-text']").first.wait_for()
        ui.keys_to_the_page()
        page.keyboard.press("2")  # one label, sent as feedback to the trained model
        ui.settle()
        ui.expect_text("Sent as feedback")
        held = _waiting(page)
        assert "1 labelled this session" in _caption(page)

        # The same browser session: the Label page's script is gone, its listener must be too. (The Demo page
        # is headed by the model's description, so `ui.nav` cannot wait for a "Demo" heading.)
        page.locator("[data-testid='stSidebarNav']").get_by_text("Demo", exact=True).click()
        ui.settle()
        box = page.locator("textarea.live-text")
        box.click()
        box.press_sequentially(TYPED, delay=60)  # a person typing, the shortcut keys among the words
        expect(box).to_have_value(TYPED)  # no key swallowed
        ui.settle()
        ui.no_exception()

        ui.nav("Samples")  # the model as the service has it now: no feedback came from the typing
        assert _waiting(page) == held
        ui.nav("Label")
        assert "1 labelled this session" in _caption(page)
        ui.no_exception()
    finally:
        page.close()


LONE = "local.lone-queue"
MORE = [
    "The hinge squeaks a little but the lid closes firmly.",
    "Cheap plastic, cracked the first time I dropped it.",
    "Exactly as pictured and it came a day early.",
    "The manual is in a language I cannot read.",
    "Quiet, quick, and the filter is easy to clean.",
]


def test_a_lone_analysts_queue_takes_texts_added_to_the_pool(
    app_url: str, app_dir: Path, browser: Browser
) -> None:
    """Alone on a model: the queue runs out, five texts are added to the pool elsewhere (a notebook), and
    they reach the open page without a reload; the page never speaks of colleagues."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    ui = Ui(page)
    try:
        ui.goto(app_url)  # the first visit starts the embedded service
        page.get_by_role("heading", name="Models").first.wait_for(timeout=300_000)
        with app_client(app_dir) as client:
            make_draft(client, LONE)
            client.add_pool_texts(LONE, POOL[:2])
            ui.goto(f"{app_url}/label?model={LONE}")
            shown = page.locator("[data-testid='label-text']").first
            shown.wait_for()
            ui.keys_to_the_page()
            counter = page.get_by_text(re.compile(r"labelled this session")).first
            page.keyboard.press("1")
            expect(counter).to_contain_text("1 labelled this session")
            ui.settle()
            page.keyboard.press("1")  # the last one: the counter under the text goes with it
            ui.expect_text("every text in the pool is labelled")
            ui.settle()
            client.add_pool_texts(LONE, MORE)
        shown.wait_for(timeout=60_000)  # no reload: the page asked again when the pool grew
        assert _text(page) in MORE
        ui.keys_to_the_page()
        for n in range(3, 2 + len(MORE)):
            page.keyboard.press("2")
            expect(counter).to_contain_text(f"{n} labelled this session")
            ui.settle()
            assert page.get_by_text(re.compile("colleague")).count() == 0
        page.keyboard.press("2")
        ui.expect_text("every text in the pool is labelled")
        ui.shot("label_lone_queue")
    finally:
        page.close()
