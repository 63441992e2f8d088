"""The Samples page's Import tab: a CSV/JSONL file of labelled texts, its columns picked and its labels mapped
to quality (`app.sample_mapping`), previewed with counts per pole, then stored in batches.

Nothing is stored before the Import click; every row not stored is listed with its file line and the reason.
"""

from __future__ import annotations

from typing import Any, cast

import pandas as pd
import streamlit as st

from app.sample_io import unknown_trait_hint
from app.sample_mapping import (
    RULES,
    Mapped,
    Mapping,
    Refusal,
    Rule,
    Table,
    guess_column,
    map_rows,
    read_table,
)
from app.widgets import guard
from core.client import Client, Trait

NONE = "(none)"
RULE_NAMES = {
    "as_is": "as is (already 0–1)",
    "threshold": "threshold",
    "quantiles": "top / bottom quantiles",
}
PREVIEW_ROWS = 10


def refusals_frame(refusals: list[Refusal], extra: list[dict[str, Any]] | None = None) -> pd.DataFrame:
    """Refused rows as a table, a reason beside each line, in file order."""
    rows = [{"line": r.line, "reason": r.reason} for r in refusals] + (extra or [])
    return pd.DataFrame(rows, columns=["line", "reason"]).sort_values("line", kind="stable")


def _pick_mapping(table: Table, traits: list[Trait]) -> Mapping:
    columns = table.columns
    trait_keys = [t.key for t in traits]
    c1, c2, c3 = st.columns(3)
    text_default = guess_column(columns, "text", "sentence", "request", "content", "body") or columns[0]
    text = c1.selectbox("Text column", columns, index=columns.index(text_default), key="import_text_col")
    label_default = guess_column(columns, "quality", "score", "rating", "label") or columns[-1]
    label = c2.selectbox("Label column", columns, index=columns.index(label_default), key="import_label_col")
    trait_col = guess_column(columns, "trait")
    trait_choices = [f"column: {c}" for c in columns] + [f"trait: {k}" for k in trait_keys]
    default = f"column: {trait_col}" if trait_col else f"trait: {trait_keys[0]}" if trait_keys else None
    trait_pick = c3.selectbox(
        "Trait",
        trait_choices,
        index=trait_choices.index(default) if default in trait_choices else 0,
        key="import_trait",
        help="A column naming each row's trait (key or name), or one of the model's traits for every row.",
    )
    r1, r2, r3 = st.columns(3)
    rule = r1.radio(
        "Label → quality", RULES, format_func=RULE_NAMES.__getitem__, key="import_rule", horizontal=False
    )
    threshold, share = 0.5, 0.25
    if rule == "threshold":
        threshold = r2.number_input("Positive at or above", value=0.5, key="import_threshold")
    elif rule == "quantiles":
        percent = r2.slider(
            "Top and bottom share (%)", 5, 50, 25, 5, key="import_share", help="25 = quartiles"
        )
        share = percent / 100
    higher = r3.radio("A higher label is", ["the positive pole", "the negative pole"], key="import_direction")
    url_default = guess_column(columns, "source_url")
    url_choices = [NONE, *columns]
    source = r3.selectbox(
        "Source URL column",
        url_choices,
        index=url_choices.index(url_default) if url_default else 0,
        key="import_source_col",
    )
    kind, _, name = trait_pick.partition(": ")
    return Mapping(
        text=text,
        label=label,
        trait_column=name if kind == "column" else None,
        trait=name if kind == "trait" else None,
        rule=cast(Rule, rule),
        threshold=float(threshold),
        share=share,
        higher_is_positive=higher == "the positive pole",
        source_url=None if source == NONE else source,
    )


def sample_import_section(client: Client, handle: str, traits: list[Trait], editable: bool) -> None:
    """The whole Import tab."""
    st.caption(
        "A CSV (with a header row) or JSONL file of labelled texts, in any columns: pick the text, the label "
        "and the trait below and how a label becomes quality (1 = positive pole, 0 = negative). Nothing is "
        "stored before **Import**; identical samples already stored are skipped."
    )
    upload = st.file_uploader("Samples file", type=["csv", "jsonl", "ndjson", "json"], key="samples_upload")
    if upload is None:
        return
    table = read_table(upload.name, upload.getvalue())
    for note in table.notes:
        st.info(note, icon=":material/info:")
    if not table.rows:
        reason = table.problems[0].reason if table.problems else "no rows"
        st.warning(f"Nothing to import: {reason}.", icon=":material/warning:")
        if len(table.problems) > 1:
            st.dataframe(refusals_frame(table.problems), hide_index=True, width="stretch")
        return
    mapping = _pick_mapping(table, traits)
    try:
        mapped = map_rows(table, mapping)
    except ValueError as exc:
        st.error(str(exc))
        return
    refused = table.problems + mapped.refused
    left = f", {mapped.left_out} left out between the quantiles" if mapped.left_out else ""
    st.write(f"{len(mapped.samples)} row(s) read, {len(refused)} unreadable{left}.")
    if mapped.samples:
        preview = pd.DataFrame(mapped.samples[:PREVIEW_ROWS])
        preview.insert(0, "line", mapped.lines[:PREVIEW_ROWS])
        st.markdown(f"**Preview** (the first {min(PREVIEW_ROWS, len(mapped.samples))} samples)")
        st.dataframe(preview, hide_index=True, width="stretch")
        st.markdown("**Samples per pole**")
        st.dataframe(pd.DataFrame(mapped.counts()), hide_index=True)
    if refused:
        st.markdown("**Rows that will not be imported**")
        st.dataframe(refusals_frame(refused), hide_index=True, width="stretch")
    if not st.button(
        "Import", type="primary", disabled=not (editable and mapped.samples), key="samples_import"
    ):
        return
    _store(client, handle, traits, mapped, refused)


def _store(client: Client, handle: str, traits: list[Trait], mapped: Mapped, refused: list[Refusal]) -> None:
    with guard("Importing samples"):
        bar = st.progress(0.0, text="Importing…")

        def _progress(done: int, total: int) -> None:
            bar.progress(done / total if total else 1.0, text=f"Imported {done} of {total} rows")

        report = client.import_samples(handle, mapped.samples, progress=_progress)
        bar.progress(1.0, text="Import finished")
        keys = [t.key for t in traits]
        by_service = [
            Refusal(mapped.lines[e.index], e.message + unknown_trait_hint(e.message, keys))
            for e in report.errors
        ]
        everything = refused + by_service
        total = len(mapped.samples) + len(refused)
        stored = f"Stored {report.stored} of {total} rows."
        if everything:  # anything refused is a warning, never a green success
            st.warning(f"{stored} {len(everything)} row(s) rejected:")
            st.dataframe(refusals_frame(everything), hide_index=True, width="stretch")
        else:
            st.success(stored)
