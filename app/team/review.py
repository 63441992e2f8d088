"""The review queue on the Team page (docs/api.md "Review"): each person's acceptance rate; for a reviewer,
the pending labels to accept or reject (one at a time or in bulk, with a comment) or correct one at a time,
with its text's history; for an annotator, their own rejected labels with the reviewer's comment. The service
decides who may: an annotator gets no buttons."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app.shell.backend import Backend
from app.ui.flash import say_once
from app.ui.inert import escape_md
from app.ui.text_history import history_expander
from app.ui.widgets import guard
from core.client import Model, ReviewItem, ReviewPage
from core.contract import MAX_REVIEW_COMMENT_CHARS, MAX_REVIEW_ITEMS, REVIEW_STATUSES

FLASH = "review_flash"
#: The review's widgets, emptied once a decision is saved (its picks and comment were for those labels).
PICK, ALL, COMMENT, DECIDED = "review_pick", "review_all", "review_comment", "review_decided"
#: The label to correct, its comment, and the label this tab corrected last (its history shown open).
FIX_PICK, FIX_COMMENT, CORRECTED = "review_fix_pick", "review_fix_comment", "review_corrected"
#: This tab's last bulk removal: {"handle", "annotator", "undo"} (its token, whose labels they were).
UNDO = "review_undo"


def people_frame(page: ReviewPage) -> pd.DataFrame:
    """One row per person: labels accepted, rejected, pending, and the share accepted of those decided."""
    rows = [
        {"person": p.annotator}
        | {status: getattr(p, status) for status in REVIEW_STATUSES}
        | {"acceptance": f"{p.acceptance_rate:.0%}" if p.acceptance_rate is not None else ""}
        for p in page.people
    ]
    return pd.DataFrame(rows, columns=["person", *REVIEW_STATUSES, "acceptance"])


def items_frame(page: ReviewPage) -> pd.DataFrame:
    rows = [
        {
            "person": i.annotator or "",
            "trait": i.trait,
            "quality": i.quality,
            "text": i.text,
            "comment": i.comment or "",
        }
        for i in page.items
    ]
    return pd.DataFrame(rows, columns=["person", "trait", "quality", "text", "comment"])


def review_queue(backend: Backend, model: Model) -> None:
    """The section, for everyone who may read the model's labels."""
    st.subheader("Review")
    if say_once(FLASH) is not None and (corrected := st.session_state.pop(CORRECTED, None)) is not None:
        history_expander(backend.client, model.handle, corrected, expanded=True)
    reviewer = backend.may("review")
    status = "pending" if reviewer else "rejected"
    page = None
    with guard("Reading the review queue"):
        page = backend.client.review_page(model.handle, status, limit=MAX_REVIEW_ITEMS)
    if page is None:
        return
    if not page.review:
        st.caption("Labels train as they are given: review is off for this model (its owner turns it on).")
    if page.people:
        st.dataframe(people_frame(page), hide_index=True, width="stretch")
    if backend.may("manage"):
        bulk_removal(backend, model, sorted({p.annotator for p in page.people}))
    if not reviewer:
        if page.items:
            st.caption("Your labels a reviewer rejected (they do not train), with the reviewer's comment.")
            st.dataframe(items_frame(page), hide_index=True, width="stretch")
        return
    if not page.items:
        st.caption("No label waits for review.")
        return
    st.caption(f"{len(page.items):d} label(s) wait for review: pick some, then accept or reject them.")
    st.dataframe(items_frame(page), hide_index=True, width="stretch")
    # A pick names its label, never a position: the queue changes under the reviewer (a decision, a
    # colleague's, new labels) and a kept position would then name another label.
    items = {f"{i.kind}:{i.id:d}": (n, i) for n, i in enumerate(page.items, start=1)}
    kept = st.session_state.get(PICK)
    if st.session_state.pop(DECIDED, False):  # a decision was made: nothing of it stays picked
        # Set, not removed: the browser keeps a widget's value unless the script sets another.
        st.session_state.update({PICK: [], ALL: False, COMMENT: "", FIX_COMMENT: ""})
        st.session_state.pop(FIX_PICK, None)
    elif isinstance(kept, list) and any(ref not in items for ref in kept):  # decided by a colleague meanwhile
        st.session_state[PICK] = [ref for ref in kept if ref in items]
    # One form: the picks, the comment and the press reach the app together. Outside a form each pick is a
    # rerun of its own, and a press made before the last one was drawn fell on a button still disabled, or
    # decided without the newest pick.
    pressed = None
    with st.form("review_decision", border=False):
        chosen = st.multiselect(
            "Labels to decide",
            list(items),
            format_func=lambda ref: (
                f"{items[ref][0]:d}. {items[ref][1].annotator or ''}: {items[ref][1].text[:60]}"
            ),
            key=PICK,
        )
        every = st.checkbox("All of them", key=ALL)
        comment = st.text_input(
            "Comment (the author reads it)", max_chars=MAX_REVIEW_COMMENT_CHARS, key=COMMENT
        )
        accept, reject = st.columns(2)
        for column, decision, label in (
            (accept, "accept", "Accept picked"),
            (reject, "reject", "Reject picked"),
        ):
            if column.form_submit_button(label, key=f"review_{decision}"):
                pressed = decision
    correction(backend, model, items)
    if pressed is None:
        return
    picked = [items[ref][1] for ref in (list(items) if every else chosen)]
    if not picked:
        st.warning("Pick the labels to decide (or tick All of them), then press again.")
        return
    with guard("Saving the review"):
        done = backend.client.review_labels(model.handle, pressed, picked, comment or None)
        st.session_state[FLASH] = f"{done.reviewed:d} label(s): {escape_md(pressed)}ed."
        st.session_state[DECIDED] = True
        st.rerun()


def correction(backend: Backend, model: Model, items: dict[str, tuple[int, ReviewItem]]) -> None:
    """A reviewer gives one label the quality it should have: it trains as corrected, and its annotator's
    quality stays in the text's history, shown below the pick."""
    with st.expander("Correct a label"):
        ref = st.selectbox(
            "Label to correct",
            list(items),
            format_func=lambda r: f"{items[r][0]:d}. {items[r][1].annotator or ''}: {items[r][1].text[:60]}",
            key=FIX_PICK,
        )
        if ref is None:
            return
        item = items[ref][1]
        who = escape_md(item.annotator or "an unnamed rater")
        st.caption(f"{who} gave {item.quality:.2f} for {escape_md(item.trait)}.")
        # Keyed by the label: another pick starts from that label's own quality.
        quality = st.slider(
            "Corrected quality (0 negative … 1 positive)",
            0.0,
            1.0,
            float(item.quality),
            0.05,
            key=f"{FIX_PICK}_{ref}",
        )
        comment = st.text_input(
            "Why (the author reads it)", max_chars=MAX_REVIEW_COMMENT_CHARS, key=FIX_COMMENT
        )
        if st.button("Save the correction", key="review_fix"):
            if quality == item.quality:
                st.warning("The label has that quality already: move the slider to the one it should have.")
            else:
                with guard("Saving the correction"):
                    note = comment or None
                    done = backend.client.correct_label(model.handle, item.id, quality, comment=note)
                    st.session_state[FLASH] = (
                        f"Corrected {who}'s label: {item.quality:.2f} → {done.quality:.2f} (what training "
                        "reads now)."
                    )
                    st.session_state[CORRECTED] = done.id
                    st.session_state[DECIDED] = True
                    st.rerun()
        history_expander(backend.client, model.handle, item.id)


def bulk_removal(backend: Backend, model: Model, people: list[str]) -> None:
    """An owner removes every label of one person on the model in one call, and can undo it on this tab."""
    undo: dict[str, str] = st.session_state.get(UNDO) or {}
    if undo.get("handle") == model.handle and st.button(
        f"Undo: bring back {escape_md(undo['annotator'])}'s labels", key="review_restore"
    ):
        with guard("Bringing the labels back"):
            back = backend.client.restore_labels(model.handle, undo["undo"])
            st.session_state.pop(UNDO, None)
            st.session_state[FLASH] = f"Brought back {sum(back.restored.values()):d} label(s)."
            st.rerun()
    if not people:
        return
    with st.expander("Remove every label of one person"):
        who = st.selectbox("Person", people, key="review_remove_who")
        st.caption(
            "Their votes, buffered feedback labels and unsure marks on this model; undo stays possible for "
            "an hour on this tab."
        )
        if st.button("Remove their labels", key="review_remove"):
            with guard("Removing the labels"):
                out = backend.client.remove_labels(model.handle, who)
                if out.undo:
                    st.session_state[UNDO] = {"handle": model.handle, "annotator": who, "undo": out.undo}
                st.session_state[FLASH] = (
                    f"Removed {sum(out.removed.values()):d} label(s) of {escape_md(who)}."
                )
                st.rerun()
