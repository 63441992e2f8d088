"""What the browser tests of a labelling team read off the workbench's pages, and the rule their people label
the support replies by (tests/support/app.py's SUPPORT_REPLIES)."""

from __future__ import annotations

import re

from playwright.sync_api import Locator, Page, expect

from tests.support.app import Ui


def polite(text: str) -> bool:
    """The pole a careful reader gives a support reply: its opening or its closing is the polite one."""
    return text.startswith(("Thank", "Sorry")) or text.endswith(("lovely day.", "help further."))


def shown_text(page: Page) -> Locator:
    """The Label page's text to label."""
    return page.locator("[data-testid='label-text']").first


def page_errors(page: Page) -> list[str]:
    return page.locator("[data-testid='stAlertContentError'], [data-testid='stException']").all_inner_texts()


def table_rows(page: Page, column: str) -> list[dict[str, str]]:
    """The rows of the first table on the page with a `column` header, as the grid's accessible mirror has
    them (a Streamlit dataframe draws on a canvas)."""
    header_cells = page.locator("[data-testid='stDataFrame'] table[role='grid'] thead th")
    header_cells.filter(has_text=re.compile(rf"^\s*{column}\s*$")).first.wait_for(state="attached")
    for table in page.locator("[data-testid='stDataFrame'] table[role='grid']").all():
        header = [c.strip() for c in table.locator("thead th").all_inner_texts()]
        if column in header:
            return [
                dict(zip(header, (c.strip() for c in row.locator("td").all_inner_texts()), strict=False))
                for row in table.locator("tbody tr").all()
            ]
    raise AssertionError(f"no table with a {column!r} column")


def open_model(ui: Ui, handle: str) -> None:
    """Pick `handle` in the sidebar, as a person does (another model was open)."""
    box = ui.page.locator("[data-testid='stSidebar']").get_by_role("combobox", name="Model")
    box.click()
    ui.page.get_by_role("option", name=handle, exact=True).click()
    ui.settle()
    expect(box).to_have_value(handle)
