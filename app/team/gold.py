"""The Team page's gold section (docs/api.md, "Gold items"): each person's accuracy on texts with a known
answer, its 95 % interval, how many they answered, and who is flagged; the owner's rate and threshold, and
promoting settled texts to gold. Reviewers and owners only: an annotator never sees which texts are gold, so
the section is not drawn for them at all."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app.shell.backend import Backend
from app.ui.inert import md
from app.ui.widgets import guard
from core.client import Model
from core.client.models import GoldAccuracy
from core.contract import MAX_GOLD_ITEMS_PER_REQUEST, MAX_GOLD_RATE

FLASH = "gold_flash"
FLAG = "⚠ under the threshold"


def accuracy_frame(found: GoldAccuracy) -> pd.DataFrame:
    """One row per person who answered gold: the API's figures, the interval as one cell."""
    rows = [
        {
            "person": p.annotator,
            "gold answered": p.answered,
            "correct": p.correct,
            "accuracy": p.accuracy,
            f"{found.confidence:.0%} interval": f"{p.low:.0%} – {p.high:.0%}",
            "flag": FLAG if p.flagged else "",
        }
        for p in found.people
    ]
    columns = ["person", "gold answered", "correct", "accuracy", f"{found.confidence:.0%} interval", "flag"]
    return pd.DataFrame(rows, columns=columns)


def gold_quality(backend: Backend, model: Model) -> None:
    """The section, for a reviewer or an owner of the namespace."""
    if not backend.may("review"):
        return
    st.subheader("Gold items")
    if flash := st.session_state.pop(FLASH, None):
        st.success(flash)
    found: GoldAccuracy | None = None
    with guard("Reading the accuracy on gold"):
        found = backend.client.gold_accuracy(model.handle)
    if found is None:
        return
    rate = f"{found.gold_rate:.0%} of each person's suggestions" if found.gold_rate else "off (rate 0 %)"
    st.caption(
        f"{found.gold_items:,} gold item(s): texts whose answer is known, mixed into the queues — "
        f"{rate}. Annotators cannot tell them from other texts; their answers are never votes and "
        "never train."
    )
    if found.people:
        st.dataframe(
            accuracy_frame(found),
            hide_index=True,
            width="stretch",
            key="gold_accuracy_table",
            column_config={"accuracy": st.column_config.NumberColumn(format="percent")},
        )
        flagged = [p.annotator for p in found.people if p.flagged]
        if flagged:
            st.warning(
                f"Surely under {found.gold_threshold:.0%} on gold: {md(', '.join(flagged))}. Nobody is "
                "blocked; look at their labels (Review) before trusting them.",
                icon=":material/flag:",
            )
        st.caption(
            "Accuracy: answers on the known answer's pole. The interval is Wilson's at "
            f"{found.confidence:.0%}; a person is flagged when even its upper end is under "
            f"{found.gold_threshold:.0%}, so a few unlucky answers flag nobody."
        )
    else:
        st.caption("Nobody has answered a gold item yet: each person's accuracy shows here.")
    if backend.may("manage"):
        _settings(backend, model)
    _promote(backend, model)


def _settings(backend: Backend, model: Model) -> None:
    with st.form("gold_settings"):
        c1, c2 = st.columns(2)
        rate = c1.slider(
            "Gold in each queue",
            0,
            int(MAX_GOLD_RATE * 100),
            value=round(model.gold_rate * 100),
            format="%d%%",
            key="gold_rate",
            help="The share of each person's suggestions that are gold items (0: none).",
        )
        threshold = c2.slider(
            "Flag under",
            0,
            100,
            value=round(model.gold_threshold * 100),
            step=5,
            format="%d%%",
            key="gold_threshold",
            help="A person whose accuracy on gold is surely under it (the interval's upper end) is flagged.",
        )
        if st.form_submit_button("Save gold settings"):
            with guard("Saving the gold settings"):
                saved = backend.client.update_model(
                    model.handle, gold_rate=rate / 100, gold_threshold=threshold / 100
                )
                st.session_state[FLASH] = (
                    f"Saved: gold {saved.gold_rate:.0%} of each queue, flag under {saved.gold_threshold:.0%}."
                )
                st.rerun()


def _promote(backend: Backend, model: Model) -> None:
    traits = [str(t) for t in model.traits]
    if not traits:
        return
    with st.form("gold_promote"):
        c1, c2 = st.columns(2)
        trait = c1.selectbox("Trait", traits, key="gold_promote_trait")
        count = c2.number_input(
            "Settled texts to make gold",
            min_value=1,
            max_value=MAX_GOLD_ITEMS_PER_REQUEST,
            value=20,
            key="gold_promote_count",
            help="Chosen at random among the trait's settled texts; the settling vote is the known answer.",
        )
        if st.form_submit_button("Promote settled texts to gold"):
            with guard("Promoting settled texts"):
                out = backend.client.promote_gold(model.handle, str(trait), int(count))
                st.session_state[FLASH] = (
                    f"{out.added:,} settled text(s) are gold now ({out.total:,} in all)."
                )
                st.rerun()
