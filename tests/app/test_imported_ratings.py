"""The Flags tab's "rated …" beside a flag: the file's own label of the text, and for several
raters' votes of one text their mean rating, not whichever rater's column came last."""

from __future__ import annotations

import streamlit as st

from app.samples.mapping import Mapped
from app.samples.remembered import imported_rating, remember_ratings


def test_one_rating_keeps_its_column_and_several_raters_give_their_mean() -> None:
    st.session_state.clear()
    votes = [
        ("polite", "Could you have a look?", q, label) for q, label in ((0.75, 19), (0.25, 7), (0.5, 13))
    ]
    mapped = Mapped(
        samples=[
            *({"trait": t, "text": x, "quality": q} for t, x, q, _ in votes),
            {"trait": "polite", "text": "Fix it now. ", "quality": 0.0},
        ],
        labels=[*(float(label) for *_, label in votes), 1.0],
    )
    remember_ratings("local.requests", mapped, "Score1")
    assert imported_rating("local.requests", "polite", "Could you have a look?") == "13 (mean of 3 ratings)"
    assert imported_rating("local.requests", "polite", "Fix it now.") == "1 (Score1)"
    assert imported_rating("local.other", "polite", "Fix it now.") is None
