"""The Label page's pool search: the texts containing a phrase and with a metadata value (the service's
`GET …/pool?q=&meta=`), and for a reviewer or an owner one key for all of them shown (`POST …/pool/label`,
docs/api.md "Assigned work")."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from app.shell import reads
from app.shell.backend import Backend
from app.ui.flash import say_once
from app.ui.inert import code, escape_md
from app.ui.metadata_filter import metadata_filter
from app.ui.widgets import guard
from core.client import Client, PoolPage, Trait
from core.contract import MAX_POOL_QUERY_CHARS

#: Texts a search shows (and a bulk label takes) at most: one screen to read before one key labels them all.
SHOWN = 50
FLASH = "pool_search_flash"


def _described(phrase: str, meta: dict[str, str] | None) -> str:
    """What the texts found have in common, in words ("contain 'refund' and have `region` = 'north'")."""
    parts = []
    if phrase:
        parts.append(f"contain {escape_md(repr(phrase))}")
    for key, value in (meta or {}).items():
        parts.append(f"have {code(key)} = {escape_md(repr(value))}")
    return " and ".join(parts)


def pool_search(
    backend: Backend,
    client: Client,
    handle: str,
    trait: Trait,
    pool_size: int,
    restart: Callable[[], None],
) -> None:
    """The expander: a phrase and a metadata value, the matching texts, and (reviewers, owners) a label for
    all of them shown. `restart` drops the labelling session, whose queue may hold texts labelled here."""
    keys: list[str] = []
    with guard("Reading the pool's metadata"):
        keys = reads.pool_metadata_keys(client, handle, pool_size)
    asked = st.session_state.get("pool_search") or st.session_state.get("pool_search_meta_key")
    with st.expander("Search the pool", expanded=bool(asked)):
        say_once(FLASH)
        phrase = st.text_input(
            "Texts containing",
            key="pool_search",
            max_chars=MAX_POOL_QUERY_CHARS,
            help="Letter case aside; the first matching texts of the pool, oldest first.",
        ).strip()
        pair = metadata_filter(keys, "pool_search")
        meta = dict([pair]) if pair and pair[1] else None
        if not phrase and not meta:
            return
        found: PoolPage | None = None
        with guard("Searching the pool"):
            found = client.list_pool_page(handle, limit=SHOWN, search=phrase or None, meta=meta)
        if found is None:
            return
        if not found.items:
            st.info("No text of the pool matches that.")
            return
        more = f" (the first {len(found.items):,})" if found.total > len(found.items) else ""
        st.caption(f"{found.total:,} texts {_described(phrase, meta)}{more}.")
        frame = pd.DataFrame([{"id": t.id, "text": t.text} for t in found.items])
        st.dataframe(frame, hide_index=True, width="stretch", key="pool_search_table")
        if not backend.may("review"):
            st.caption("Reviewers and owners may label all the texts shown at once.")
            return
        ids = [t.id for t in found.items]
        c1, c2, _ = st.columns([1, 1, 2])
        for column, label, quality in ((c1, trait.negative_label, 0.0), (c2, trait.positive_label, 1.0)):
            if column.button(f"All shown: {escape_md(label)}", key=f"pool_search_all_{int(quality)}"):
                with guard("Labelling the texts shown"):
                    out = client.label_pool_texts(handle, ids, trait.key, quality)
                    skipped = f"; {len(out.skipped):,} skipped (voted on enough)" if out.skipped else ""
                    st.session_state[FLASH] = (
                        f"{len(out.labelled):,} texts labelled {escape_md(label)}{skipped}."
                    )
                    restart()
                    st.rerun()
