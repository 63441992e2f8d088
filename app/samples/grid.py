"""The Samples page's editable grid: edits kept across reruns and page switches, shown before they are saved.

The rules (what is pending, how an editor's state folds into it, what a save sends) are `app.samples.edits`;
this draws them. A committed cell edit stays in the browser until the next rerun of anything (the grid does
not rerun the page itself, see `sample_grid`); every rerun, of any page, folds it into the model's `Pending`,
so a page switch, a pager click or another widget's rerun loses nothing, and a new grid is drawn from the
stored rows with the pending edits applied.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from app.samples.edits import COLUMNS, Grid, Pending, draw, fold, save, save_message
from app.ui.inert import escape_md
from app.ui.widgets import guard
from core.client import Client, Page, Sample

UNSAVED = "samples_unsaved"  # session_state: model handle -> Pending
GRID = "samples_grid"  # session_state: the Grid last drawn
GEN = "samples_grid_gen"  # session_state: a new editor key for each grid drawn
BLANKS = "samples_blank_rows"  # session_state: how many empty rows the grid ends with
SYNCED = "samples_synced"  # session_state: how many times the leave guard asked for the grid's edits
LEAVE_GUARD = Path(__file__).with_name("leave_guard.js").read_text()
# How often the unsaved-changes summary asks for the grid's edits. A page switch carries none of them
# (Streamlit sends only the widgets the next page keeps): a click on another page in the sidebar waits for
# them (`leave_guard.js`); the browser's own Back button or a reload still loses those of the last second.
POLL_S = 1.0


def keep_unsaved() -> None:
    """Fold the grid editor's latest state into its model's pending edits. `app/main.py` calls this on every
    run, whichever page runs: a click on another page carries the editor's last edits, and this is the last
    moment they can be read before Streamlit drops the editor (it is not drawn on that page)."""
    grid: Grid | None = st.session_state.get(GRID)
    if grid is not None and grid.key in st.session_state:
        unsaved: dict[str, Pending] = st.session_state.setdefault(UNSAVED, {})
        unsaved[grid.context[0]] = fold(grid, st.session_state[grid.key])


def pending_of(handle: str) -> Pending:
    """The model's unsaved grid edits, the editor's latest state folded in."""
    keep_unsaved()
    return st.session_state.get(UNSAVED, {}).get(handle) or Pending()


def _stored_rows(page: Page[Sample]) -> list[dict[str, Any]]:
    return [
        {
            "id": r.id,
            "trait": r.trait,
            "text": r.text,
            "quality": r.quality,
            "provenance": r.provenance,
            "source_url": r.source_url,
        }  # fmt: skip
        for r in page.items
    ]


def _current_grid(
    context: tuple[Any, ...], stored: list[dict[str, Any]], pending: Pending, trait: str | None
) -> Grid:
    """The grid drawn before when its editor still holds its state for the same rows; else a new one (with a
    new key, so the browser's editor starts from the pending edits, not from stale ones of its own)."""
    grid: Grid | None = st.session_state.get(GRID)
    if (
        grid is not None
        and grid.context == context
        and grid.key in st.session_state
        and list(grid.stored.values()) == stored
    ):
        return grid
    gen = st.session_state[GEN] = st.session_state.get(GEN, 0) + 1
    blanks = st.session_state.get(BLANKS, 3) if context[-1] else 0
    grid = draw(f"samples_editor_{gen}", context, stored, pending, blanks, trait)
    st.session_state[GRID] = grid
    return grid


def sample_grid(
    client: Client,
    handle: str,
    page: Page[Sample],
    trait_keys: list[str],
    trait_filter: str | None,
    editable: bool,
) -> None:
    """The grid of one page of samples; on a draft, its edits, what is unsaved, and Save / Discard."""
    pending = pending_of(handle) if editable else Pending()
    pager = st.session_state["samples_pager"]
    context = (handle, pager["filters"], pager["stack"][-1], editable)
    # A new row's trait: the one the list is filtered on, or the model's only trait.
    default_trait = trait_filter or (trait_keys[0] if len(trait_keys) == 1 else None)
    grid = _current_grid(context, _stored_rows(page), pending, default_trait)
    st.caption(
        "Edit text, trait and quality in place, delete rows (select them, then the bin icon or Delete), "
        "type new samples into the empty rows at the bottom; then save. Unsaved changes are kept while "
        "you move between pages; flagged samples are fixed from the Flags tab."
        if editable
        else "Samples of a trained model are frozen into its versions; reopen it above to edit them."
    )
    columns = [*COLUMNS, *(["problem"] if grid.marked else [])]
    frame = pd.DataFrame(grid.rows, columns=columns)
    st.data_editor(
        frame,
        key=grid.key,
        hide_index=True,
        width="stretch",
        placeholder="",  # an empty cell looks empty (not "None"): the empty rows are there to type into
        num_rows="delete" if editable else "fixed",  # new rows go into the empty rows at the bottom
        # A committed cell does not rerun the page: a rerun's answer reaching the grid while a person types
        # into the next cell could reset that cell's editor (a new row's quality or first word was lost).
        # The edits reach the app with the next rerun of anything: the summary below asks every second.
        on_change="ignore",
        # The reason first, so it shows beside a refused row even on a narrow screen.
        column_order=["problem", *COLUMNS] if grid.marked else None,
        disabled=["id", "provenance", "problem"] if editable else True,
        # Narrow bookkeeping columns: with the row-selection column the grid still fits 1280 px without a
        # horizontal scrollbar, and the text gets the room.
        column_config={
            "id": st.column_config.NumberColumn("id", width="small", format="%d"),
            "provenance": st.column_config.TextColumn("provenance", width="small"),
            "source_url": st.column_config.TextColumn("source_url", width="small"),
            # Not required (the empty rows have none yet): a new row without a trait, text or quality reaches
            # the service and comes back marked with its reason.
            "trait": st.column_config.SelectboxColumn("trait", options=trait_keys),
            "text": st.column_config.TextColumn("text", width="large"),
            # Shown and edited to 5 decimals: a step of 0.05 drew 0.50625 as "0.50", another quality.
            "quality": st.column_config.NumberColumn(
                "quality", min_value=0.0, max_value=1.0, step=0.00001, format="%.5g"
            ),
            "problem": st.column_config.TextColumn("problem", width="medium"),
        },
    )
    if editable:
        _unsaved(client, handle)


@st.fragment(run_every=POLL_S)
def _unsaved(client: Client, handle: str) -> None:
    """What Save will send, line by line, and the Save / Discard buttons. A fragment that reruns every
    second, so it follows the grid's edits (each rerun brings them) without redrawing the grid itself."""
    pending = pending_of(handle)
    if pending.empty:
        st.caption("No unsaved changes.")
    else:
        st.markdown(
            f"**Unsaved changes** ({escape_md(pending.headline())}): **Save changes** sends exactly these."
        )
        st.dataframe(
            pd.DataFrame(pending.summary(), columns=["change", "sample", "trait", "text", "what", "problem"]),
            hide_index=True,
            width="stretch",
        )
    b1, b2, b3, b4 = st.columns([1, 1, 1, 2])
    with b4:
        _leave_guard()
    if b1.button("Save changes", type="primary", key="samples_save", width="stretch"):
        if pending.empty:  # said at the page's top, in place of the last save's message
            st.session_state["samples_flash_info"] = (
                "Nothing to save: edit cells, delete rows or type new rows at the bottom first."
            )
            st.rerun()
        with guard("Saving the samples"):
            left, report = save(client, handle, pending)
            st.session_state[UNSAVED][handle] = left
            st.session_state.pop(GRID, None)  # drawn again from what the service now holds
            st.session_state.pop(BLANKS, None)  # with the usual few empty rows
            message, ok = save_message(report, left)
            st.session_state["samples_flash" if ok else "samples_flash_warning"] = message
            st.rerun()
    if b2.button("Discard changes", key="samples_discard", disabled=pending.empty, width="stretch"):
        st.session_state[UNSAVED].pop(handle, None)
        st.session_state.pop(GRID, None)
        st.session_state["samples_flash"] = "Unsaved changes discarded."
        st.rerun()
    if b3.button(
        "More empty rows", key="samples_more_rows", width="stretch", help="Five more rows to type into"
    ):
        st.session_state[BLANKS] = st.session_state.get(BLANKS, 3) + 5
        st.session_state.pop(GRID, None)  # drawn again, the edits so far folded in (this click brought them)
        st.rerun()


def _leave_guard() -> None:
    """A click on another page waits for the grid's edits (`leave_guard.js` says why): the script presses
    this hidden button, whose run folds the edits in (`pending_of`, above) and draws a new marker."""
    st.html("<style>.st-key-samples_sync {display: none}</style>")
    if st.button("Keep the grid's edits", key="samples_sync"):
        st.session_state[SYNCED] = st.session_state.get(SYNCED, 0) + 1
    st.html(f"<span data-samples-synced='{st.session_state.get(SYNCED, 0)}'></span>")
    st.html(f"<script>{LEAVE_GUARD}</script>", unsafe_allow_javascript=True)
