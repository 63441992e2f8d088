"""A metadata filter beside a pool search (the Team page's assignment form, the Label page's search): a key
the pool's texts have, and the value it must have, compared as text (docs/api.md "Text metadata")."""

from __future__ import annotations

import streamlit as st

from core.contract import MAX_METADATA_FILTER_VALUE_CHARS

ANY = ""  # the key option meaning "no metadata condition"


def metadata_filter(keys: list[str], prefix: str) -> tuple[str, str] | None:
    """The key picked (from `keys`) and the value typed, stripped; None without a key or without any key to
    pick (a pool with no metadata shows nothing). Widget keys start with `prefix`."""
    if not keys:
        return None
    c1, c2 = st.columns(2)
    key = c1.selectbox(
        "With metadata",
        [ANY, *keys],
        key=f"{prefix}_meta_key",
        format_func=lambda k: k or "(any)",
        help="A column kept beside the pool's texts",
    )
    value = c2.text_input(
        "Equal to",
        key=f"{prefix}_meta_value",
        max_chars=MAX_METADATA_FILTER_VALUE_CHARS,
        help="Compared as text: 7 finds the number 7",
    )
    return (key, value.strip()) if key else None
