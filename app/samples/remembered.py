"""What an import into a model remembers for the next one: the label scale it used (proposed again for the
model's next file, in any session of this workbench) and each sample's label in its file (the Flags tab
shows it beside the quality it was mapped to)."""

from __future__ import annotations

import streamlit as st

from app.samples.mapping import LabelScale, Mapped, Mapping

SCALES = "import_scales"  # session_state: handle -> the LabelScale of the last import into that model


@st.cache_resource
def _last_scales() -> dict[str, LabelScale]:
    """handle -> the LabelScale of the last import into that model through this workbench, whichever session
    made it: a reload or a new tab starts a new session, and its next file into the model (the evaluation
    set, often of the same columns) was asked the scale again."""
    return {}


def remember_scale(handle: str, mapping: Mapping) -> None:
    """The scale an import into `handle` used, proposed again for its next file (`scale_default`)."""
    if mapping.rule == "scale":
        scale = LabelScale("scale", mapping.low, mapping.high)
        st.session_state.setdefault(SCALES, {})[handle] = _last_scales()[handle] = scale


def scale_default(guessed: LabelScale, handle: str | None) -> tuple[LabelScale, bool]:
    """The scale to propose: the last import's into this model when this file's labels fit in it (a held-out
    file whose ratings span -2..2 would otherwise map to other qualities than the samples' -3..3), else what
    this file's own numbers say. True when it is the remembered one, also when this file's numbers guess the
    same: its labels may still fit several scales, and the question was answered by the last import (an
    evaluation file after the samples' was asked its scale again)."""
    last = (st.session_state.get(SCALES, {}).get(handle) or _last_scales().get(handle)) if handle else None
    if last is not None and guessed.rule == "scale" and last.low <= guessed.low and guessed.high <= last.high:
        return last, True
    return guessed, False


RATINGS = "imported_ratings"  # session_state: handle -> {(trait key, text): "the file's label (column)"}


def imported_rating(handle: str, trait: str, text: str) -> str | None:
    """The label a sample had in the file it was imported from in this session, e.g. "-2.7 (score)": the
    Flags tab shows it beside the quality it was mapped to. The service stores the quality only."""
    rating: str | None = st.session_state.get(RATINGS, {}).get(handle, {}).get((trait, text.strip()))
    return rating


def remember_ratings(handle: str, mapped: Mapped, column: str) -> None:
    known = st.session_state.setdefault(RATINGS, {}).setdefault(handle, {})
    labels: dict[tuple[str, str], list[float]] = {}
    for sample, label in zip(mapped.samples, mapped.labels, strict=True):
        labels.setdefault((sample["trait"], str(sample["text"]).strip()), []).append(label)
    for key, rated in labels.items():
        # Several raters' votes of one text: their mean, which is what the text's counted quality maps.
        many = len(rated) > 1
        known[key] = (
            f"{sum(rated) / len(rated):.3g} (mean of {len(rated)} ratings)"
            if many
            else f"{rated[0]:.3g} ({column})"
        )
