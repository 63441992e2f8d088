"""A text's history in plain words (docs/api/team.md, "Text history"): who voted, settled, marked it unsure
or corrected a label, and when, oldest first; shown wherever a page shows one label's card (the Team page's
review, the Samples page's disagreements). `history_lines` is plain Python, its wording tested alone."""

from __future__ import annotations

from datetime import datetime

import streamlit as st

from app.ui.inert import escape_md
from app.ui.widgets import guard
from core.client import Client
from core.client.team import Correction, TextHistory, VoteRecord


def _when(at: datetime | None) -> str:
    return at.strftime("%Y-%m-%d %H:%M UTC") if at is not None else "at an unknown time"


def _who(name: str | None) -> str:
    return name or "an unnamed rater"


def _vote(v: VoteRecord, given: float | None) -> str:
    if v.unsure:
        return f"{_who(v.annotator)} marked it unsure"
    what = "settled it at" if v.adjudicated else "gave feedback" if v.kind == "feedback" else "voted"
    return f"{_who(v.annotator)} {what} {given if given is not None else v.quality:.2f}"


def _correction(c: Correction) -> str:
    line = f"{c.corrected_by} corrected {_who(c.annotator)}'s label from {c.before:.2f} to {c.after:.2f}"
    return f"{line}: “{c.comment}”" if c.comment else line


def history_lines(history: TextHistory) -> list[str]:
    """One sentence per event, oldest first: "2026-11-28 22:40 UTC: ann voted 1.00". A vote says what its
    annotator gave (the service answers a corrected one with its corrected quality), its corrections what it
    became, so the lines read as what happened in turn."""
    given: dict[int, float] = {}
    for c in history.corrections:
        given.setdefault(c.id, c.before)
    events = [(v.created_at, _vote(v, None if v.unsure else given.get(v.id))) for v in history.items]
    events += [(c.created_at, _correction(c)) for c in history.corrections]
    # Stable: on a tie the votes come first, in the service's order; a time missing goes last.
    events.sort(key=lambda e: (e[0] is None, e[0].timestamp() if e[0] is not None else 0.0))
    return [f"{_when(at)}: {line}" for at, line in events]


def history_expander(
    client: Client, handle: str, label_id: int, *, expanded: bool = False, lazy: str | None = None
) -> None:
    """An expander "History" of the text of label `label_id`. Streamlit runs an expander's body whether or
    not it is open, so it is read on each run; `lazy` (a widget key) waits for a toggle inside first, for a
    page of many cards, which would otherwise read every card's history on every run."""
    with st.expander("History", expanded=expanded):
        if lazy is not None and not st.toggle("Show who did what, and when", key=lazy):
            return
        history = None
        with guard("Reading the text's history"):
            history = client.text_history(handle, label_id)
        if history is None:
            return
        st.caption(f"{escape_md(history.trait)}: {escape_md(history.text[:200])}")
        st.markdown("\n".join(f"- {escape_md(line)}" for line in history_lines(history)) or "Nothing yet.")
