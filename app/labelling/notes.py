"""Beside the text on the Label page: the trait's guidelines (its description), the `?` key that marks a
text unsure (a note for reviewers, never a vote), and a short comment (docs/api.md, "Unsure and comments").
The page calls these; the session's queue is app/labelling/suggestion_queue.py's."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from app.labelling.session import Failure, LabelSession
from app.labelling.suggestion_queue import refill
from app.ui.inert import escape_md, guidelines_md
from core.client import Client, Trait
from core.contract import MAX_COMMENT_CHARS

UNSURE_KEY = "?"


def guidelines(trait: Trait) -> None:
    """The trait's description, where the person decides (nothing when the trait has none)."""
    if (trait.description or "").strip():
        with st.container(border=True, key="label_guidelines"):
            st.caption(f":material/menu_book: **Guidelines for {escape_md(trait.name)}**")
            st.markdown(guidelines_md(trait.description or ""))  # Markdown as written, inert


def unsure_pressed(session: LabelSession, key: str, client: Client) -> bool:
    """`?`: mark the current text unsure for this person and move on, as a skip does. False for any other
    key (the page hands it to `app.labelling.key_presses.apply_key`)."""
    if key != UNSURE_KEY:
        return False
    session.failure = None
    item = session.current
    if item is None:
        return True
    try:
        client.mark_unsure(session.handle, session.trait, item["text"])
        session.pos += 1
        session.message = "Marked unsure: reviewers see it beside the text; it is not a vote."
        refill(session, client)
    except Exception as exc:  # noqa: BLE001 - shown on the page, never a traceback
        session.failure = Failure("Marking the text unsure", exc)
    return True


def note_controls(
    client: Client, session: LabelSession, on_unsure: Callable[[], None] | None = None, *, unsure: bool = True
) -> None:
    """The `?` key's button (`unsure`: a trait rated on a scale offers it only if its owner chose so), and a
    short comment on the current text for reviewers (its author and time are stored with it). `on_unsure`:
    what the button does (the page binds it to the text drawn with it)."""
    item = session.current
    if item is None:
        return
    c1, c2, _ = st.columns([1, 2, 3])
    if unsure:
        c1.button(
            f"{UNSURE_KEY} · unsure",
            key="label_btn_unsure",
            on_click=on_unsure or (lambda: None if unsure_pressed(session, UNSURE_KEY, client) else None),
            help="Not a vote: reviewers see that you were unsure of this text.",
            width="stretch",
        )
    with (
        c2.popover("Comment on this text", icon=":material/chat:"),
        st.form("label_comment", clear_on_submit=True, border=False),
    ):
        body = st.text_area("Comment", max_chars=MAX_COMMENT_CHARS, key="label_comment_body")
        if st.form_submit_button("Save the comment") and body.strip():
            try:
                client.add_comment(session.handle, session.trait, item["text"], body)
                st.caption("Comment saved: reviewers read it beside the text.")
            except Exception as exc:  # noqa: BLE001 - shown on the page, never a traceback
                st.error(f"{escape_md(type(exc).__name__)}: {escape_md(str(exc))}")
