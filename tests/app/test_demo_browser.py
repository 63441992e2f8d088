"""The Demo page in headless Chromium: leaving it after typing draws the next page, never a blank one.

Clicking another page in the sidebar takes the focus out of the Demo box, which sends a text it had not sent
yet: a rerun of the Demo page's fragment that reaches the server just after the page switch. Streamlit ran it
after the new page, as a run of the page left, and the browser cleared the main area ("Couldn't find
fragment with id …"; app/ui/rerun_requests.py). The test types as a presenter does, pauses around the box's
300 ms, and leaves for each page of the sidebar in turn, 20 rounds; each page must draw and stay drawn. The
same late request, reaching the server before the new page's run started, ran the page left again in its
place: a click on Label drew the Demo page.

And on a projector's screen: typing with pauses keeps every character, the bars and the share link follow the
whole text, and the bars stay on one screen (a desktop's, wider and taller, is a picture when asked for: what
the page keeps of the text does not hang on the screen's size).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from urllib.parse import quote, quote_plus

import pytest
from playwright.sync_api import Browser, Page, expect

from core.demo import read_demo_model
from core.local import LocalService
from harness.streamlit import prepared_workbench
from tests.support.app import BROWSER, PAGE_BOUND_MS, SCREENS, SHOOTING, Ui, painted, pause, where_drawn

pytestmark = BROWSER

DEMO_MODEL = "local.demo-replies"
# Every page of the sidebar, as a presenter moves between them (the Demo page's own heading is the model's).
PAGES = ("Settings", "Models", "Score", "Versions", "Traits", "Samples", "Label", "Training")
ROUNDS = 2 * len(PAGES)  # every move from the Demo page to each page, twice
# How long a page may take to draw on a loaded machine: the faults this catches never draw (a blank page, the
# page left drawn again), they last until the next action.
DRAWN_MS = PAGE_BOUND_MS


def _prepare(service: LocalService) -> None:
    """A model of the demo's support replies with two versions: v1 tagged `demo`, v2 active."""
    demo = read_demo_model("support_replies")
    with service.client() as c:
        c.create_model(DEMO_MODEL, description=demo.description)
        c.add_traits(DEMO_MODEL, demo.traits)
        c.import_samples(DEMO_MODEL, demo.samples)
        c.wait(DEMO_MODEL, c.train(DEMO_MODEL, effort="low").run_id, timeout=300)
        c.tag_version(DEMO_MODEL, "demo")
        c.wait(DEMO_MODEL, c.train(DEMO_MODEL, effort="low", reoptimize_params=True).run_id, timeout=300)


@pytest.fixture(scope="module")
def demo_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with prepared_workbench(tmp_path_factory.mktemp("demo-page"), _prepare) as (url, _):
        yield url


def _type(
    page: Page,
    text: str,
    rng: random.Random,
    *,
    key_ms: tuple[int, int] = (10, 40),
    pause_ms: tuple[float, float] = (100, 400),
    chance: float = 0.5,
) -> None:
    """Type as a presenter does: bursts of keys, a pause between words now and then; none after the last,
    the caller's pause is the one."""
    for i, word in enumerate(text.split(" ")):
        if i and rng.random() < chance:
            pause(page, rng.uniform(*pause_ms))
        page.keyboard.type(word + " ", delay=rng.randint(*key_ms))


def _open_sidebar(page: Page) -> None:
    expand = page.locator("[data-testid='stExpandSidebarButton']")
    if expand.count() and expand.first.is_visible():  # the Demo page starts with the sidebar collapsed
        expand.first.click()
    page.locator("[data-testid='stSidebarNav']").get_by_text("Settings", exact=True).wait_for()


def _visit(ui: Ui, title: str) -> None:
    page = ui.page
    _open_sidebar(page)
    link = page.locator("[data-testid='stSidebarNav']").get_by_text(title, exact=True)
    link.click()
    heading = page.get_by_role("heading", name=title).first
    heading.wait_for(timeout=DRAWN_MS)
    # Drawn, and still there once every run the move set off has ended: the left page's late fragment run
    # cleared the main area after the new page had drawn.
    ui.idle(timeout=DRAWN_MS)
    expect(heading).to_be_visible()


def test_every_page_draws_after_typing_in_the_demo_box(
    demo_app: str, browser: Browser, person: random.Random
) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    ui = Ui(page)
    try:
        ui.goto(f"{demo_app}/demo?model={DEMO_MODEL}")
        for n in range(ROUNDS):
            # Back to the Demo page, type with pauses, wait as a presenter does, then leave: the sidebar is
            # open first, so the click on the next page is what takes the focus out of the box.
            _open_sidebar(page)
            if n:
                page.locator("[data-testid='stSidebarNav']").get_by_text("Demo", exact=True).click()
                _open_sidebar(page)
            box = page.locator("textarea.live-text")
            box.wait_for(timeout=DRAWN_MS)
            box.click()
            box.press("Control+a")
            _type(page, f"Thank you, round {n}.", person)
            pause(page, person.uniform(0, 600))  # before or after the box sends (300 ms): the blur sends
            _visit(ui, PAGES[n % len(PAGES)])  # every page of the sidebar, in turn
        ui.no_exception()
    finally:
        page.close()


def test_demo_keeps_typed_text(demo_app: str, browser: Browser, person: random.Random) -> None:
    """A shared link's text is in the box; typing over it with natural pauses keeps every character; the bars
    and the share link follow the whole text; the bars stay on one screen while typing (the presenter's
    sidebar starts collapsed), on the smaller screen, where they come closest to its bottom; an example
    replaces the whole text, and the link follows it."""
    rng = person
    screen = SCREENS[0]
    page = browser.new_page(viewport=screen)
    ui = Ui(page)
    try:
        shared = "Dear colleague, kindly review the attached report."
        ui.goto(f"{demo_app}/demo?model={DEMO_MODEL}&text={quote(shared)}")
        # The examples may be drawn again (beside the old, for a moment) while the demo models finish loading.
        page.locator(".st-key-preset_0 button").first.wait_for()
        box = page.locator("textarea.live-text")
        expect(box).to_have_value(shared)
        box.click()
        box.press("Control+a")  # typed over
        said = "Dear customer, I am truly sorry about the delay and I have refunded the charge today."
        _type(page, said, rng, key_ms=(30, 90), pause_ms=(200, 1000), chance=0.8)
        typed = said + " "
        expect(box).to_have_value(typed)
        ui.settle()
        expect(box).to_have_value(typed)  # the last rerun did not replace it either
        expect(page.locator("[data-testid='stCode']")).to_contain_text(quote_plus(typed.strip()))
        bars = page.locator(".st-key-demo_chart .js-plotly-plot .bars path")
        expect(bars.first).to_be_attached()
        chart = where_drawn(page.locator(".st-key-demo_chart"))
        assert chart["y"] + chart["height"] <= screen["height"], (chart, screen)  # in view, no scrolling
        sidebar = page.locator("[data-testid='stSidebar']").bounding_box()
        assert sidebar is None or sidebar["x"] + sidebar["width"] <= 1, sidebar  # collapsed: off screen
        if SHOOTING:  # the same page on each screen, for the eye
            for size in SCREENS:
                page.set_viewport_size(size)
                painted(page)
                ui.screen(f"demo_{size['width']}x{size['height']}")
            page.set_viewport_size(screen)

        # Longer than a link holds: the box and the bars keep the whole text, only the link is cut.
        box.press("End")
        long_tail = " More." * 260
        box.press_sequentially(long_tail[:40], delay=5)
        box.evaluate("(b, t) => { b.value += t; b.dispatchEvent(new Event('input')); }", long_tail[40:])
        whole = typed + long_tail
        # The box sends what was typed after 300 ms without a key: the link's note follows the whole text.
        expect(page.get_by_text("the link holds the first 1,500 characters")).to_be_visible()
        ui.settle()
        expect(box).to_have_value(whole)

        # An example replaces the whole text, and the link follows it.
        preset = page.locator(".st-key-preset_0 button")
        opening = preset.inner_text()[:20]  # the example's first words (its label is cut at 70 characters)
        preset.click()
        ui.settle()
        expect(box).not_to_have_value(whole)
        expect(page.locator("[data-testid='stCode']")).to_contain_text(quote_plus(opening))
        ui.no_exception()
    finally:
        page.close()
