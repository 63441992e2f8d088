"""The Team page's gold section (docs/api.md, "Gold items"): each person's accuracy on texts with a known
answer, its 95 % interval, how many they answered, and who is flagged; the owner's rate and threshold,
promoting settled texts to gold, and the gold items themselves (text, known answer, origin, answers and
their accuracy) with a way to remove one: a text settled wrongly and promoted marks every careful person
wrong until it goes. Reviewers and owners only: an annotator never sees which texts are gold, so the section
is not drawn for them at all."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app.shell.backend import Backend
from app.ui.figures import share
from app.ui.flash import say_once
from app.ui.inert import escape_md
from app.ui.widgets import guard
from core.client import Model, Trait
from core.client.models import GoldAccuracy, GoldItem, GoldSet
from core.contract import MAX_GOLD_ITEMS_PER_REQUEST, MAX_GOLD_RATE, pole_of, scale_point

FLASH = "gold_flash"
#: The removal box, and the mark that its item was removed (emptied at the next run).
PICK, REMOVED = "gold_remove_item", "gold_removed"
REMOVED_FLASH = "gold_removed_flash"  # said under the removal's button
FLAG = "⚠ under the threshold"


def accuracy_frame(found: GoldAccuracy) -> pd.DataFrame:
    """One row per person who answered gold: the API's figures, the interval as one cell."""
    rows = [
        {
            "person": p.annotator,
            "gold answered": p.answered,
            "correct": p.correct,
            "accuracy": share(p.accuracy),
            f"{found.confidence:.0%} interval": f"{p.low:.0%} – {p.high:.0%}",
            "flag": FLAG if p.flagged else "",
        }
        for p in found.people
    ]
    columns = ["person", "gold answered", "correct", "accuracy", f"{found.confidence:.0%} interval", "flag"]
    return pd.DataFrame(rows, columns=columns)


#: The gold list's columns.
ITEM_COLUMNS = ["id", "text", "answer", "answers", "correct", "accuracy", "origin", "trait"]


def known_answer(trait: Trait | None, quality: float) -> str:
    """A gold item's known answer in the trait's words: its point on a scale, else its pole, with the
    quality ("polite (1.00)", "4 · rather polite (0.75)", "neither pole (0.50)")."""
    if trait is not None and trait.scale is not None:
        point = scale_point(quality, trait.scale.points)
        if point is not None:
            return f"{trait.point_name(point)} ({quality:.2f})"
    pole = pole_of(quality)
    word = {"neutral": "neither pole"}.get(pole, pole)
    if trait is not None and pole != "neutral":
        word = trait.positive_label if pole == "positive" else trait.negative_label
    return f"{word} ({quality:.2f})"


def gold_frame(found: GoldSet, traits: dict[str, Trait]) -> pd.DataFrame:
    """One row per gold item: its text, known answer, where it came from, and how people answered it (the
    accuracy: answers on the known answer's pole, blank before anyone answered)."""
    rows = [
        {
            "id": g.id,
            "trait": traits[g.trait].name if g.trait in traits else g.trait,
            "text": g.text,
            "answer": known_answer(traits.get(g.trait), g.quality),
            "origin": g.origin,
            "answers": g.answers,
            "correct": g.correct,
            "accuracy": share(g.correct / g.answers if g.answers else None),
        }
        for g in found.items
    ]
    return pd.DataFrame(rows, columns=ITEM_COLUMNS)


def item_choice(item: GoldItem) -> str:
    """A gold item as the removal box names it: its id and the start of its text."""
    short = item.text if len(item.text) <= 70 else item.text[:69] + "…"
    return f"#{item.id:d} · {short}"


def gold_quality(backend: Backend, model: Model) -> None:
    """The section, for a reviewer or an owner of the namespace."""
    if not backend.may("review"):
        return
    st.subheader("Gold items")
    say_once(FLASH)
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
        )
        flagged = [p.annotator for p in found.people if p.flagged]
        if flagged:
            st.warning(
                f"Surely under {found.gold_threshold:.0%} on gold: {escape_md(', '.join(flagged))}. Nobody "
                "is blocked; look at their labels (Review) before trusting them.",
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
    _items(backend, model)


def _items(backend: Backend, model: Model) -> None:
    """The gold items, and removing one (the reviewer role, as adding and promoting)."""
    found: GoldSet | None = None
    traits: list[Trait] = []
    with guard("Listing the gold items"):
        found = backend.client.gold(model.handle)
        # Read as the rest of the Team page reads: not through the pages' cache of the model, which this
        # page would otherwise fill with a state other pages then keep showing after a training elsewhere.
        traits = list(backend.client.list_traits(model.handle))
    if found is None or not found.items:
        return
    st.markdown(f"**The gold items** ({found.total:,})")
    st.dataframe(
        gold_frame(found, {t.key: t for t in traits}),
        hide_index=True,
        width="stretch",
        key="gold_items_table",
        column_config={
            "id": st.column_config.NumberColumn(width="small"),
            "text": st.column_config.TextColumn(width="medium"),
            "origin": st.column_config.TextColumn(
                help="imported with its answer, or promoted: a settled text, its settling vote the answer"
            ),
        },
    )
    st.caption(
        "Accuracy per item: the share of its answers on the known answer's pole. An item most people "
        'answer "wrong" may have a wrong known answer (a text settled by mistake, then promoted): remove it, '
        "and its answers stop counting in everyone's accuracy."
    )
    items = {g.id: g for g in found.items}
    if st.session_state.pop(REMOVED, False):  # the item picked is gone: nothing stays picked
        # Set, not removed: the browser keeps a widget's value unless the script sets another.
        st.session_state[PICK] = None
    with st.form("gold_remove", border=False):
        c1, c2 = st.columns([4, 1], vertical_alignment="bottom")
        chosen = c1.selectbox(
            "Gold item to remove",
            list(items),
            index=None,
            placeholder="Pick or type a gold item's text",
            format_func=lambda i: item_choice(items[i]),
            key=PICK,
        )
        pressed = c2.form_submit_button("Remove from gold", width="stretch")
    # Under the button pressed, in view.
    say_once(REMOVED_FLASH, lambda said: st.success(said, icon=":material/delete:"))
    if not pressed:
        return
    if chosen is None:
        st.warning("Pick the gold item to remove, then press again.")
        return
    with guard("Removing the gold item"):
        backend.client.delete_gold(model.handle, int(chosen))
        gone = items[int(chosen)]
        st.session_state[REMOVED_FLASH] = (
            f"Gold item #{gone.id:d} removed with its {gone.answers:,} answer(s); its text stays in the pool "
            "as an ordinary text."
        )
        st.session_state[REMOVED] = True
        st.rerun()


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
