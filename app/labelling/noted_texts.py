"""What annotators noted on a trait's texts, for reviewers: who marked a text unsure and the comments on it
(docs/api.md, "Unsure and comments"). Shown in the Samples page's Disagreements tab, beside each text and as
a list of every noted text (an unsure text need not be disagreed)."""

from __future__ import annotations

from dataclasses import dataclass, field

import streamlit as st

from app.ui.inert import escape_md, quote
from app.ui.widgets import guard
from core.client import Client, TextComment


@dataclass
class Noted:
    unsure: list[str] = field(default_factory=list)  # who marked the text unsure
    comments: list[TextComment] = field(default_factory=list)


def text_notes(client: Client, handle: str, trait: str) -> dict[str, Noted]:
    """Per text (as stored: trimmed), its unsure marks and comments on the trait; {} when unreadable."""
    notes: dict[str, Noted] = {}
    with guard("Reading unsure marks and comments"):
        for mark in client.list_unsure(handle, trait):
            notes.setdefault(mark.text, Noted()).unsure.append(mark.annotator)
        for c in client.list_comments(handle, trait):
            notes.setdefault(c.text, Noted()).comments.append(c)
    return notes


def notes_line(notes: dict[str, Noted], text: str) -> None:
    """Under a text: who was unsure of it, and its comments with author and time."""
    noted = notes.get(text.strip())
    if noted is None:
        return
    if noted.unsure:
        st.caption(f":material/help: Unsure: {escape_md(', '.join(noted.unsure))}")
    for c in noted.comments:
        when = f" · {c.created_at:%Y-%m-%d %H:%M} UTC" if c.created_at else ""
        st.caption(f":material/chat: **{escape_md(c.author)}**{when}: {escape_md(c.body)}")


def noted_texts(notes: dict[str, Noted]) -> None:
    """Every text of the trait someone marked unsure or commented on, in an expander."""
    if not notes:
        return
    unsure = sum(1 for n in notes.values() if n.unsure)
    commented = sum(1 for n in notes.values() if n.comments)
    with st.expander(f"Texts marked unsure ({unsure:,}) or commented on ({commented:,})"):
        for i, (text, _) in enumerate(sorted(notes.items(), key=lambda tn: -len(tn[1].unsure))):
            with st.container(border=True, key=f"noted_text_{i}"):
                st.markdown(quote(text))
                notes_line(notes, text)
