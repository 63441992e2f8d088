"""The Team page's assigned work: each person's texts, target and progress (docs/api.md, "Assigned work"),
and the owner's forms to assign texts by search, metadata and count or by ids, to set a target, to move a
person's unlabelled texts to another, and to keep queues to assignments. Everyone else sees the table
alone."""

from __future__ import annotations

import re

import pandas as pd
import streamlit as st

from app.shell import reads
from app.shell.backend import Backend
from app.ui.figures import share
from app.ui.flash import say_once
from app.ui.inert import escape_md
from app.ui.metadata_filter import metadata_filter
from app.ui.widgets import guard
from core.client import Assignments, Model
from core.contract import MAX_ASSIGNED, TARGET_PERIODS

FLASH = "assignments_flash"
PERIODS = {"day": "day (UTC)", "total": "in all"}
#: The table's columns, as the API names them.
COLUMNS = {
    "annotator": "person",
    "assigned": "assigned",
    "labelled": "labelled",
    "remaining": "remaining",
    "target": "target",
    "labelled_today": "labelled today",
    "labelled_total": "labelled in all",
    "progress": "target reached",
}


def parse_ids(typed: str) -> list[int]:
    """Pool ids typed as a list ("12, 15 19"): every number, in order, once; anything else is a ValueError
    naming it, so a typo is never read as fewer ids."""
    words = [w for w in re.split(r"[\s,;]+", typed.strip()) if w]
    bad = [w for w in words if not w.isdigit()]
    if bad:
        raise ValueError(f"not a pool id: {bad[0]!r}")
    return list(dict.fromkeys(int(w) for w in words))


def work_frame(found: Assignments) -> pd.DataFrame:
    """One row per person, the API's numbers unchanged; a target in words ("40 a day", "500 in all")."""
    rows = []
    for p in found.people:
        target = ""
        if p.target is not None:
            target = f"{p.target.count:,} " + ("a day" if p.target.period == "day" else "in all")
        reached = {"target reached": share(p.progress)}
        rows.append({COLUMNS[k]: getattr(p, k) for k in COLUMNS} | {"target": target} | reached)
    return pd.DataFrame(rows, columns=list(COLUMNS.values()))


def assigned_work(backend: Backend, model: Model) -> None:
    """The section: the table for every role of the namespace, the forms for its owners."""
    client = backend.client
    found: Assignments | None = None
    with guard("Reading the assignments"):
        found = client.assignments(model.handle)
    if found is None:
        return
    st.subheader("Assigned work")
    say_once(FLASH)
    if found.people:
        st.dataframe(
            work_frame(found),
            hide_index=True,
            width="stretch",
            key="assignments_table",
        )
    else:
        st.caption("Nobody has assigned texts or a target on this model yet.")
    after = "then the shared pool" if found.shared_pool else "and nothing else (the shared pool is closed)"
    st.caption(f"Each person's queue serves their assigned texts first, {after}. Labelled: any trait.")
    if not backend.may("manage"):
        return
    _assign_form(backend, model)
    c1, c2 = st.columns(2)
    with c1:
        _target_form(backend, model)
    with c2:
        _reassign_form(backend, model, [p.annotator for p in found.people])
    shared = st.toggle(
        "Queues go on to the shared pool",
        value=found.shared_pool,
        key="assign_shared_pool",
        help="Off: a person is handed their assigned texts alone, and nothing once they are done.",
    )
    if shared != found.shared_pool:
        with guard("Saving the setting"):
            client.update_model(model.handle, shared_pool=shared)
            st.session_state[FLASH] = (
                "Queues go on to the shared pool." if shared else "Queues keep to assignments."
            )
            st.rerun()


def _assign_form(backend: Backend, model: Model) -> None:
    keys: list[str] = []
    with guard("Reading the pool's metadata"):
        size = backend.client.list_pool_page(model.handle, limit=1).total
        keys = reads.pool_metadata_keys(backend.client, model.handle, size)
    with st.form("assign_texts", clear_on_submit=True):
        person = st.text_input("Person", placeholder="name@example.com", key="assign_person")
        c1, c2, c3 = st.columns([3, 1, 3])
        search = c1.text_input("Texts containing", key="assign_search", help="Empty: any text of the pool")
        count = c2.number_input("How many", 1, MAX_ASSIGNED, 50, key="assign_count")
        typed = c3.text_input(
            "Or these pool ids",
            key="assign_ids",
            help="Numbers separated by commas or spaces; overrides the search",
        )
        pair = metadata_filter(keys, "assign")
        if st.form_submit_button("Assign", type="primary"):
            if pair is not None and not pair[1] and not typed.strip():
                st.error("Type the value the metadata must have, or pick (any).")
                return
            with guard("Assigning texts"):
                if typed.strip():
                    got = backend.client.assign(model.handle, person.strip(), ids=parse_ids(typed))
                else:
                    got = backend.client.assign(
                        model.handle,
                        person.strip(),
                        search=search.strip() or None,
                        meta=dict([pair]) if pair else None,
                        count=int(count),
                    )
                st.session_state[FLASH] = (
                    f"{got.assigned:,} texts assigned to {escape_md(got.annotator)} ({got.already:,} they "
                    f"had already); {got.total:,} in all."
                )
                st.rerun()


def _target_form(backend: Backend, model: Model) -> None:
    with st.form("assign_target", clear_on_submit=True):
        person = st.text_input("Person", key="target_person")
        count = st.number_input("Target (0: none)", 0, MAX_ASSIGNED, 40, key="target_count")
        period = st.radio(
            "Per",
            TARGET_PERIODS,
            horizontal=True,
            key="target_period",
            format_func=PERIODS.__getitem__,
        )
        if st.form_submit_button("Set target"):
            with guard("Setting the target"):
                backend.client.set_target(model.handle, person.strip(), int(count) or None, period)
                said = f"{int(count):,} per {period}" if count else "none"
                st.session_state[FLASH] = f"Target of {escape_md(person.strip())}: {said}."
                st.rerun()


def _reassign_form(backend: Backend, model: Model, people: list[str]) -> None:
    if not people:
        return
    with st.form("assign_move", clear_on_submit=True):
        source = st.selectbox("Move the unlabelled texts of", people, key="move_from")
        to = st.text_input("To", key="move_to")
        if st.form_submit_button("Move"):
            with guard("Moving the texts"):
                moved = backend.client.reassign(model.handle, source, to.strip())
                st.session_state[FLASH] = (
                    f"{moved.moved:,} texts moved from {escape_md(moved.annotator)} to {escape_md(moved.to)}."
                )
                st.rerun()
