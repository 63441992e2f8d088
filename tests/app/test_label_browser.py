"""The Label page in headless Chromium, labelling with the keyboard alone (after importing a pool file)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.app.test_browser import CHROMIUM, Ui, app_url, browser, pytestmark  # noqa: F401 - fixtures

HANDLE = "local.product-reviews"  # the demo draft loaded on first start
POOL = [
    "The strap broke after 3 weeks; the old one lasted two years.",
    "Love it!!",
    "Battery went from 100% to 40% in an hour of video.",
    "Meh, it is fine I guess.",
    "Arrived 2 days late and the box was crushed on one corner.",
    "Best purchase ever, so happy.",
]


def _caption(page: object) -> str:
    return page.get_by_text(re.compile(r"labelled this session")).first.inner_text()


def _text(page: object) -> str:
    return page.locator("[data-testid='label-text']").first.inner_text()


def test_label_with_the_keyboard(app_url: str, browser: object, tmp_path: Path) -> None:  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 1400})
    ui = Ui(page)
    try:
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
        page.evaluate("document.activeElement && document.activeElement.blur()")  # keys go to the page

        first = _text(page)
        assert first in POOL and "0 labelled this session" in _caption(page)
        page.keyboard.press("2")
        ui.settle()
        ui.expect_text("Added 1 sample(s).")
        assert "1 labelled this session" in _caption(page) and _text(page) != first

        page.keyboard.press("u")
        ui.settle()
        ui.expect_text("Undone: the label was removed.")
        assert _text(page) == first and "0 labelled this session" in _caption(page)

        page.keyboard.press("0")
        ui.settle()
        second = _text(page)
        assert second != first
        page.keyboard.press("ArrowLeft")
        ui.settle()
        assert _text(page) == first
        page.keyboard.press("ArrowRight")
        ui.settle()
        assert _text(page) == second

        for key in ("1", "2", "1", "2"):
            page.keyboard.press(key)
            ui.settle()
        assert "4 labelled this session" in _caption(page)
        ui.expect_text("Out-of-fold ROC-AUC")
        ui.no_exception()
        ui.shot("label_page")
    except BaseException:
        ui.shot("label_failure")
        raise
    finally:
        page.close()
