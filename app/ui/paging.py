"""Cursor paging for server lists: a stack of cursors in session_state and Previous / Next buttons."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from core.client import Page


def paged[PageT: Page[Any]](
    key: str, filters: tuple[Any, ...], fetch: Callable[[str | None], PageT]
) -> PageT:
    """Fetch the current page (`fetch(cursor)` -> Page) and draw the pager under it.

    The stack restarts at the first page whenever `filters` change.
    """
    state = st.session_state.setdefault(key, {"filters": filters, "stack": [None]})
    if state["filters"] != filters:
        state.update(filters=filters, stack=[None])
    page = fetch(state["stack"][-1])
    return page


def pager_buttons(key: str, page: Page[Any]) -> None:
    state = st.session_state[key]
    stack: list[str | None] = state["stack"]
    next_cursor = page.next_cursor

    def _prev() -> None:
        if len(stack) > 1:
            stack.pop()

    def _next() -> None:
        if next_cursor:
            stack.append(next_cursor)

    left, mid, right = st.columns([1, 2, 1])
    left.button("◀ Previous", key=f"{key}_prev", disabled=len(stack) <= 1, on_click=_prev)
    mid.caption(f"Page {len(stack):,}")
    right.button("Next ▶", key=f"{key}_next", disabled=not next_cursor, on_click=_next)
