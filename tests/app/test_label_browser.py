"""The workbench's own service from its first start, in headless Chromium: a first visit while it loads the
demo models (a text pasted on the Score page is kept; the Demo page waits for a demo model still training),
then the Label page: labelling with the keyboard alone (after importing a pool file), its shortcuts gone once
the page is left (the Demo page's live box gets every key), a lone analyst's queue, and labels stored = key
presses while every control of the page moves.

One module, one `streamlit run` and data dir: the first-visit tests come first, so their visit is the one
that loads the demo models (each also passes run alone)."""

from __future__ import annotations

import random
import re
from pathlib import Path

from playwright.sync_api import Browser, Locator, Page, expect

from tests.support.app import BROWSER, FORMALITY, SENTIMENT, Ui, app_client, make_draft, pause

pytestmark = BROWSER

DEMO_MODEL = "local.support-replies"  # created at once on the first start, its first version trained after
PASTED = (
    "Thank you for your patience while we looked into your order. The parcel left our warehouse this "
    "morning and the tracking number is in the email we just sent."
)
WORDS = ["thanks", "again", "and", "sorry", "for", "the", "wait"]


def test_text_pasted_on_a_first_visit_is_kept(app_url: str, browser: Browser, person: random.Random) -> None:
    """A text pasted into the Score page's box as soon as a first visit shows it (its demo model most often
    still training: the Score button off, the page watching the training) stays in the box when the page
    redraws with the model's first version (a Version picker above the tabs, the 'no trained version yet'
    note gone): the whole text, with the words typed after it, is scored."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    ui = Ui(page)
    try:
        ui.goto(f"{app_url}/score?model={DEMO_MODEL}")
        box = page.locator(".st-key-score_text textarea")
        box.click()
        page.keyboard.insert_text(PASTED)  # a paste: one input event, no keys
        typed = PASTED
        for word in WORDS:
            pause(page, person.uniform(200, 900))
            page.keyboard.type(" " + word, delay=person.randint(30, 90))
            typed += " " + word
        pause(page, person.uniform(500, 2000))  # rereading it before scoring
        score = page.get_by_role("button", name="Score", exact=True)
        expect(score).to_be_enabled()  # the model's first version: the page has redrawn with it
        expect(box).to_have_value(typed)
        ui.click("Score")
        page.locator(".st-key-score_chart").wait_for()
        ui.no_exception()
        expect(page.locator("[data-testid='stAlertContentError']")).to_have_count(0)
        ui.shot("first_visit_score_1280x800")
    finally:
        page.close()


NEWS_MODEL = "local.news-style"  # trained after the support replies: queued or training on a first visit
DRAFT_MODEL = "local.product-reviews"  # the draft, created with the others before any training is awaited


def test_the_demo_page_waits_for_a_demo_model_that_is_training(app_url: str, browser: Browser) -> None:
    """The Demo page of a demo model whose first version is still on its way says so and opens when it is
    ready (it said "no trained version yet: train it" before); every demo model is there, the draft too, and
    no page names an exception's class."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    ui = Ui(page)
    try:
        ui.goto(f"{app_url}/demo?model={NEWS_MODEL}")
        expect(page.get_by_text("no trained version yet")).to_have_count(0)
        waiting = page.get_by_text("training its first version")
        if waiting.count():  # still training: the note, then the demo once the version is there
            ui.shot("first_visit_demo_training_1280x800")
        page.locator(".st-key-demo_version").wait_for(timeout=600_000)  # the demo, once v1 is there
        page.locator(".st-key-preset_0 button").wait_for(timeout=120_000)  # examples drawn, not placeholders
        ui.no_exception()
        ui.shot("first_visit_demo_ready_1280x800")
        # The draft exists (a model not there would answer "not found"): the one demo model left to train.
        ui.goto(f"{app_url}/demo?model={DRAFT_MODEL}")
        expect(page.get_by_text("no trained version yet")).to_be_visible(timeout=120_000)
        body = page.locator("body").inner_text()
        assert "Error:" not in body and "did not load" not in body, body[:2000]
    finally:
        page.close()


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


# Labels stored = key presses, each on the text shown when its key went down, while a person moves every
# control of the Label page between presses: the suggestion mode, the trait picker, the pool's expander, and
# leaving the page and coming back. Some presses come while a control's rerun is still running, as a quick
# person's do.
PRESSED = "local.presses"
PRESS_POOL = [f"Pool text {i}: the meeting moved to {i} o'clock, sorry about that." for i in range(40)]
PRESSES = 12


def _shown(page: Page) -> tuple[str, str]:
    """The trait being labelled (its key) and the text shown, as a person reads them off the page."""
    metric = page.get_by_text(re.compile(r"Left to label for \w+")).first.inner_text()
    found = re.search(r"Left to label for (\w+)", metric)
    assert found, metric
    return found.group(1).lower(), page.locator("[data-testid='label-text']").first.inner_text()


def _counter(page: Page) -> Locator:
    return page.get_by_text(re.compile(r"\d+ labelled this session")).first


def _move_a_control(ui: Ui, page: Page, person: random.Random) -> tuple[str, str | None]:
    """One control moved as a person would; returns which, and for the trait picker the trait picked."""
    picked = None
    what = person.choice(["mode", "trait", "expander", "page"])
    if what == "mode":
        page.get_by_role("combobox", name=re.compile("Suggest")).first.click()
        page.get_by_role("option", name=person.choice(["auto", "diverse", "uncertain", "typical"])).click()
    elif what == "trait":
        page.get_by_role("combobox", name=re.compile("Trait")).first.click()
        picked = person.choice(["Formality", "Sentiment"])
        page.get_by_role("option", name=picked).click()
    elif what == "expander":
        page.locator("summary").filter(has_text="Pool (").first.click()
    else:
        ui.nav("Samples")
        pause(page, person.uniform(200, 900))
        ui.nav("Label")
    return what, picked


def test_labels_equal_key_presses_while_every_control_moves(
    app_url: str, app_dir: Path, browser: Browser, person: random.Random
) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1400})
    ui = Ui(page)
    try:
        ui.goto(app_url)  # starts the workbench's service
        with app_client(app_dir) as client:
            make_draft(client, PRESSED, (FORMALITY, SENTIMENT))
            client.add_pool_texts(PRESSED, PRESS_POOL)
        ui.goto(f"{app_url}/label?model={PRESSED}")
        page.locator("[data-testid='label-text']").first.wait_for()
        ui.keys_to_the_page()
        pressed: dict[tuple[str, str], float] = {}  # (trait, text) -> quality, as the person pressed
        this_session = 0  # "labelled this session": a trait's session starts at 0
        for _ in range(PRESSES):
            trait, text = _shown(page)
            key = person.choice(["1", "2"])
            page.keyboard.press(key)
            pressed[(trait, text)] = 1.0 if key == "2" else 0.0
            this_session += 1
            expect(_counter(page)).to_contain_text(f"{this_session} labelled this session")
            pause(page, person.uniform(150, 700))
            _, picked = _move_a_control(ui, page, person)
            if picked is not None:  # the next text is the picked trait's, once its suggestions came
                ui.settle()
                expect(page.get_by_text(f"Left to label for {picked}")).to_be_visible()
                if picked.lower() != trait:
                    this_session = 0  # labels belong to a trait: another trait's session is its own
            elif person.random() < 0.5:
                ui.settle()  # else the next key may come while the control's rerun is still running
            ui.keys_to_the_page()
            expect(_counter(page)).to_contain_text(f"{this_session} labelled this session")
            page.locator("[data-testid='label-text']").first.wait_for()
        ui.settle()
        ui.no_exception()
        with app_client(app_dir) as client:
            stored = {
                (x.trait, x.text): x.quality
                for x in client.list_samples(PRESSED, page_size=500)
                if x.text in PRESS_POOL
            }
        assert stored == pressed  # every press stored once, on the text it was pressed on; nothing else
    finally:
        page.close()
