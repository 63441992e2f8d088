"""Driving Streamlit's canvas grid (st.data_editor) as a person does: click a cell, type, Enter or Tab.

The grid is drawn on a canvas: cells are reached by clicking (the row markers' column, then the cells) and the
arrow keys; a cell's editor is an overlay outside the canvas (`#portal`). Typing into a selected cell opens
its editor with the first key, as in a spreadsheet. The grid mirrors the rows in view as an accessible table
(`td[aria-selected]`), which is how these helpers wait for the grid to have taken a click or a key.
"""

from __future__ import annotations

import random

from playwright.sync_api import Locator, Page, expect

from tests.support.app import pause, where_drawn

MARKER = 33  # px: the row-selection column left of the first cell (a grid whose rows can be deleted)
ROW = 35  # px: the header and each row
EDITOR = "#portal textarea, #portal input"
SELECTED = "td[aria-selected='true']"


def click_row_cell(page: Page, grid: Locator, row: int | None = None) -> None:
    """Select the first cell of a row (1-based from the top of the visible rows; None: the last row shown,
    25 px up so a horizontal scrollbar below it does not matter)."""
    grid.locator("td[role='gridcell']").first.wait_for(state="attached")  # the grid has drawn its rows
    rect = where_drawn(grid)
    y = rect["y"] + rect["height"] - 25 if row is None else rect["y"] + ROW * row + ROW / 2
    page.keyboard.press("Escape")  # nothing selected: a click on the selected cell would open its editor
    page.mouse.click(rect["x"] + MARKER + 20, y)
    expect(grid.locator(SELECTED)).to_have_attribute("aria-colindex", "1")
    page.locator(EDITOR).first.wait_for(state="detached")


def to_last_row(page: Page, grid: Locator, marked: str) -> None:
    """From a selected cell down to the grid's last row (`marked`: a text that row shows), scrolling there."""
    page.keyboard.press("Control+ArrowDown")
    grid.locator("tr", has=page.locator(SELECTED)).filter(has_text=marked).wait_for(state="attached")


def row_count(grid: Locator) -> int:
    """The rows the grid holds (its accessible table's `aria-rowcount` counts the header row too)."""
    table = grid.locator("table[role='grid']").first
    table.wait_for(state="attached")
    return int(table.get_attribute("aria-rowcount") or 0) - 1


def expect_rows(grid: Locator, rows: int, timeout: float = 60_000) -> None:
    """Wait until the grid holds `rows` rows, as a person sees a deleted row go or new rows arrive."""
    table = grid.locator("table[role='grid']").first
    expect(table).to_have_attribute("aria-rowcount", str(rows + 1), timeout=timeout)


def select_row(page: Page, grid: Locator, row: int) -> None:
    """Tick a row's marker (1-based), as a person does before pressing Delete."""
    rect = where_drawn(grid)
    page.mouse.click(rect["x"] + MARKER / 2, rect["y"] + ROW * row + ROW / 2)


# Where an arrow key takes the selection: (column, row) steps in the cell ids `glide-cell-{column}-{row}`.
STEPS = {"ArrowLeft": (-1, 0), "ArrowRight": (1, 0), "ArrowUp": (0, -1), "ArrowDown": (0, 1)}
# Where committing an edit takes it: Enter down a row, Tab right a column.
COMMITS = {"Enter": (0, 1), "Tab": (1, 0)}


def selected_cell(grid: Locator) -> tuple[int, int]:
    """The (column, row) of the one selected cell. The grid's accessible table can mark a cell it no longer
    selects for a moment after a redraw, so this waits until exactly one cell is marked."""
    cells = grid.locator(SELECTED)
    expect(cells).to_have_count(1)
    _, _, column, row = (cells.first.get_attribute("id") or "").split("-")
    return int(column), int(row)


def move(page: Page, grid: Locator, key: str, times: int) -> None:
    """Arrow keys from the selected cell; after each, waits until the grid selects the cell the key leads to
    (its id, not merely another one: a cell still marked from before a redraw is not the new selection)."""
    dx, dy = STEPS[key]
    for _ in range(times):
        column, row = selected_cell(grid)
        page.keyboard.press(key)
        target = grid.locator(f"#glide-cell-{column + dx}-{row + dy}")
        expect(target).to_have_attribute("aria-selected", "true")
        expect(grid.locator(SELECTED)).to_have_count(1)


def type_like_a_person(page: Page, text: str, rng: random.Random) -> None:
    """Word by word, each key 40-120 ms apart, a pause of 0.15-0.6 s after most words."""
    words = text.split(" ")
    for i, word in enumerate(words):
        page.keyboard.type(word + (" " if i < len(words) - 1 else ""), delay=rng.randint(40, 120))
        if rng.random() < 0.7:
            pause(page, rng.uniform(150, 600))


def type_into_cell(page: Page, grid: Locator, text: str, rng: random.Random, then: str = "Enter") -> None:
    """Type into the selected cell (its first key opens the editor) and commit with `then` (Enter: down,
    Tab: right). Waits until the editor holds the whole text before committing, as a person's eyes do, and
    then until the grid has moved the selection where `then` leads (Enter on the last row stays): the next
    key must start from there, and a read of the selection before the grid moved it would be stale."""
    column, row = selected_cell(grid)
    editor = page.locator(EDITOR).first
    page.keyboard.type(text[0], delay=rng.randint(40, 120))
    editor.wait_for()
    type_like_a_person(page, text[1:], rng)
    page.wait_for_function(f"(t) => document.querySelector('{EDITOR}')?.value === t", arg=text)
    editor.press(then)
    editor.wait_for(state="detached")
    dx, dy = COMMITS[then]
    to = grid.locator(f"#glide-cell-{column + dx}-{min(row + dy, row_count(grid) - 1)}")
    expect(to).to_have_attribute("aria-selected", "true")
    expect(grid.locator(SELECTED)).to_have_count(1)


def look(page: Page, rng: random.Random) -> None:
    """A person's glance at the screen between two actions (not a wait for the app: nothing depends on it)."""
    pause(page, rng.uniform(300, 1200))
