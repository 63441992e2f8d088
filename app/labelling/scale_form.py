"""The Traits page's Scale tab: how people label a trait, by its two poles or on a scale of 3-7 points with a
word for each (docs/api.md, "Rating scales"). The Label page then shows keys 1..N with those words."""

from __future__ import annotations

import streamlit as st

from app.ui.inert import escape_md
from app.ui.widgets import guard
from core.client import Client, Trait, TraitScale
from core.contract import MAX_LABEL_CHARS, MAX_SCALE_POINTS, MIN_SCALE_POINTS

TWO_POLES = "Two poles (keys 1 and 2)"


def scale_kind(trait: Trait) -> str:
    """How a trait is labelled, in the Traits table's words."""
    return "two poles" if trait.scale is None else f"{trait.scale.points}-point scale"


def default_names(trait: Trait, points: int) -> list[str]:
    """The words a scale of `points` starts from: the trait's own where it has a scale of that size, else its
    poles' labels at the ends and the numbers between (what the service gives unnamed points)."""
    if trait.scale is not None and trait.scale.points == points and len(trait.scale.names) == points:
        return list(trait.scale.names)
    return [trait.negative_label, *map(str, range(2, points)), trait.positive_label]


def scale_section(client: Client, handle: str, traits: list[Trait]) -> None:
    """Choose a trait's way of labelling and save it (an untrained or reopened model, as every trait edit)."""
    names = {t.key: t for t in traits}
    key = st.selectbox("Trait", list(names), key="scale_trait", format_func=lambda k: names[k].name)
    trait = names[key]
    options = [TWO_POLES, *(f"{n}-point scale" for n in range(MIN_SCALE_POINTS, MAX_SCALE_POINTS + 1))]
    now = 0 if trait.scale is None else trait.scale.points - MIN_SCALE_POINTS + 1
    choice = st.selectbox("People label it with", options, index=now, key=f"scale_kind_{key}")
    points = None if choice == TWO_POLES else int(choice.split("-")[0])
    words: list[str] = []
    unsure = False
    if points is not None:
        st.caption(
            f"Keys 1..{points:d}, lowest first; point k is stored as quality (k-1)/{points - 1:d}, and every "
            "label keeps its point."
        )
        columns = st.columns(points)
        for k, (column, word) in enumerate(zip(columns, default_names(trait, points), strict=True), start=1):
            words.append(
                column.text_input(
                    f"Point {k:d}", value=word, max_chars=MAX_LABEL_CHARS, key=f"scale_{key}_{points}_{k}"
                )
            )
        unsure = st.checkbox(
            "Offer an Unsure key (`?`: a note for reviewers, never a vote)",
            value=trait.scale.unsure if trait.scale is not None else False,
            key=f"scale_unsure_{key}",
        )
    if st.button("Save how it is labelled", key="scale_save", type="primary"):
        if points is not None and not all(w.strip() for w in words):
            st.error("Give every point a word.")
            return
        with guard("Saving the scale"):
            scale = None if points is None else TraitScale(points=points, names=words, unsure=unsure)
            client.set_scale(handle, key, scale)
            st.session_state["traits_flash"] = (
                f"{escape_md(trait.name)}: labelled with {escape_md(choice.lower())}."
            )
            st.rerun()
