"""Importing a file of labelled texts: its columns picked and its labels mapped to quality
(`app.sample_mapping`), previewed with counts per pole and the rows refused (`labelled_file`, shared by the
Samples page's Import tab and the Versions page's evaluation set), then stored in batches.

Nothing is stored before the Import click; every row not stored is listed with its file line and the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, cast

import pandas as pd
import streamlit as st

from app.sample_io import unknown_trait_hint
from app.sample_mapping import (
    ID_NAMES,
    RULES,
    LabelScale,
    Mapped,
    Mapping,
    Rule,
    guess_column,
    guess_mapping,
    guess_raters,
    guess_scale,
    map_rows,
)
from app.table_upload import table_upload
from app.widgets import guard
from core.client import Client, Trait
from core.tables import Refusal, Table

NONE = "(none)"
ONE_LABEL, SEVERAL = "one label column", "several raters (a column each)"
BY_COLUMN_NAME = "(its column's name)"
RULE_NAMES = {
    "as_is": "as is (already 0–1)",
    "scale": "from its scale (low end → 0, high end → 1)",
    "threshold": "threshold (two poles)",
    "quantiles": "top / bottom quantiles",
}
PREVIEW_ROWS = 10


def refusals_frame(refusals: list[Refusal], extra: list[dict[str, Any]] | None = None) -> pd.DataFrame:
    """Refused rows as a table, a reason beside each line, in file order."""
    rows = [{"line": r.line, "reason": r.reason} for r in refusals] + (extra or [])
    return pd.DataFrame(rows, columns=["line", "reason"]).sort_values("line", kind="stable")


def trait_lookup(traits: list[Trait]) -> dict[str, str]:
    """A trait's key or name (lowercased) -> its key: how a file may name a model's trait."""
    return {**{t.name.strip().lower(): t.key for t in traits}, **{t.key.lower(): t.key for t in traits}}


SCALES = "import_scales"  # session_state: handle -> the LabelScale of the last import into that model


def remember_scale(handle: str, mapping: Mapping) -> None:
    """The scale an import into `handle` used, proposed again for its next file (`_scale_default`)."""
    if mapping.rule == "scale":
        st.session_state.setdefault(SCALES, {})[handle] = LabelScale("scale", mapping.low, mapping.high)


def _scale_default(guessed: LabelScale, handle: str | None) -> tuple[LabelScale, bool]:
    """The scale to propose: the last import's into this model when this file's labels fit in it (a held-out
    file whose ratings span -2..2 would otherwise map to other qualities than the samples' -3..3), else what
    this file's own numbers say. True when it is the remembered one."""
    last = st.session_state.get(SCALES, {}).get(handle) if handle else None
    if last is not None and guessed.rule == "scale" and last.low <= guessed.low and guessed.high <= last.high:
        return last, last != guessed
    return guessed, False


def _pick_mapping(table: Table, traits: list[Trait], prefix: str, handle: str | None = None) -> Mapping:
    """The column pickers and the label rule, their defaults read from the data (`guess_mapping`)."""
    columns = table.columns
    guess = guess_mapping(table)
    trait_keys = [t.key for t in traits]
    raters_found = guess_raters(table)
    several = False
    if raters_found:  # a file with several raters' labels (issue 34.6): one vote each, or one label column
        named = ", ".join(c for c, _ in raters_found)
        several = (
            st.radio(
                "Labels",
                [ONE_LABEL, SEVERAL],
                key=f"{prefix}_raters_mode",
                horizontal=True,
                help=f"This file has a series of rating columns ({named}). Several raters: each rating "
                "is stored as its rater's vote (the model trains on each text's mean, and the Traits page "
                "measures how far the raters agree).",
            )
            == SEVERAL
        )
    c1, c2, c3 = st.columns(3)
    text = c1.selectbox("Text column", columns, index=columns.index(guess.text), key=f"{prefix}_text_col")
    raters: tuple[tuple[str, str | None], ...] = ()
    if several:
        raters = _pick_raters(table, raters_found, prefix, c2)
        if not raters:
            st.warning("Pick the raters' label columns (one per rater).", icon=":material/warning:")
        label = raters[0][0] if raters else guess.label
    else:
        label = c2.selectbox(
            "Label column", columns, index=columns.index(guess.label), key=f"{prefix}_label_col"
        )
    trait_choices = [f"column: {c}" for c in columns] + [f"trait: {k}" for k in trait_keys]
    default = (
        f"column: {guess.trait_column}"
        if guess.trait_column
        else f"trait: {trait_keys[0]}"
        if trait_keys
        else None
    )
    trait_pick = c3.selectbox(
        "Trait",
        trait_choices,
        index=trait_choices.index(default) if default in trait_choices else 0,
        key=f"{prefix}_trait",
        help="A column naming each row's trait (key or name), or one of the model's traits for every row.",
    )
    # The rule's widgets are keyed by the label column(s): others get the defaults their own data says.
    scale, remembered = _scale_default(guess_scale(table, *([c for c, _ in raters] or [label])), handle)
    label = "+".join(c for c, _ in raters) or label
    r1, r2, r3 = st.columns(3)
    rule = r1.radio(
        "Label → quality",
        RULES,
        index=RULES.index(scale.rule),
        format_func=RULE_NAMES.__getitem__,
        key=f"{prefix}_rule_{label}",
    )
    low, high, threshold, share = scale.low, scale.high, scale.middle, 0.25
    if rule == "scale":
        s1, s2 = r2.columns(2)
        # Keyed by the proposal too: another file with a column of the same name gets its own defaults.
        at = f"{label}_{scale.low:g}_{scale.high:g}"
        low = s1.number_input("Scale from", value=scale.low, key=f"{prefix}_low_{at}")
        high = s2.number_input("to", value=scale.high, key=f"{prefix}_high_{at}")
        r2.caption(
            f"Its middle, {(low + high) / 2:g}, becomes quality 0.5 (between the poles)."
            + (
                " The scale of the last import into this model: a rating keeps its quality."
                if remembered
                else ""
            )
        )
    elif rule == "threshold":
        threshold = r2.number_input(
            "Positive at or above", value=scale.middle, key=f"{prefix}_threshold_{label}_{scale.middle:g}",
            help="The scale's middle by default.",
        )  # fmt: skip
    elif rule == "quantiles":
        percent = r2.slider(
            "Top and bottom share (%)", 5, 50, 25, 5, key=f"{prefix}_share", help="25 = quartiles"
        )
        share = percent / 100
    higher = r3.radio(
        "A higher label is", ["the positive pole", "the negative pole"], key=f"{prefix}_direction"
    )
    url_choices = [NONE, *columns]
    source = r3.selectbox(
        "Source URL column",
        url_choices,
        index=url_choices.index(guess.source_url) if guess.source_url else 0,
        key=f"{prefix}_source_col",
    )
    kind, _, name = trait_pick.partition(": ")
    return Mapping(
        text=text,
        label=label,
        trait_column=name if kind == "column" else None,
        trait=name if kind == "trait" else None,
        rule=cast(Rule, rule),
        low=float(low),
        high=float(high),
        threshold=float(threshold),
        share=share,
        higher_is_positive=higher == "the positive pole",
        source_url=None if source == NONE else source,
        raters=raters,
    )


def _pick_raters(
    table: Table, found: list[tuple[str, str | None]], prefix: str, where: Any
) -> tuple[tuple[str, str | None], ...]:
    """The raters' label columns, and beside each the column of its rater ids (or none: the label column's
    name is then the rater)."""
    columns = table.columns
    labels = where.multiselect(
        "Label columns (one per rater)",
        columns,
        default=[c for c, _ in found],
        key=f"{prefix}_rater_labels",
    )
    ids = dict(found)
    chosen: list[tuple[str, str | None]] = []
    with st.expander("Rater id column beside each label column", expanded=False):
        pairs = st.columns(min(max(len(labels), 1), 5))
        for i, label in enumerate(labels):
            options = [BY_COLUMN_NAME, *columns]
            default = ids.get(label)
            pick = pairs[i % len(pairs)].selectbox(
                f"Rater of {label}",
                options,
                index=options.index(default) if default in options else 0,
                key=f"{prefix}_rater_of_{label}",
            )
            chosen.append((label, None if pick == BY_COLUMN_NAME else pick))
    return tuple(chosen)


@dataclass
class LabelledFile:
    """A file read and mapped: what would be stored, the file line of each, and every row refused."""

    mapped: Mapped
    refused: list[Refusal]
    mapping: Mapping


def _pick_source_id(table: Table, mapping: Mapping, prefix: str) -> Mapping:
    """The id column, kept as each sample's `source_id` (proposed when a column is named like an id)."""
    columns = [c for c in table.columns if c not in (mapping.text, mapping.label)]
    choices = [NONE, *columns]
    proposed = guess_column(columns, *ID_NAMES)
    pick = st.selectbox(
        "Id column",
        choices,
        index=choices.index(proposed) if proposed else 0,
        key=f"{prefix}_source_id_{proposed}",
        help="A column of the rows' own ids, kept as each sample's `source_id`: the export writes it, so "
        "exported samples join back to this file.",
    )
    return replace(mapping, source_id=None if pick == NONE else pick)


def labelled_file(
    uploader_key: str,
    prefix: str,
    traits: list[Trait],
    what: str = "samples",
    handle: str | None = None,
    source_ids: bool = False,
) -> LabelledFile | None:
    """Uploader, column mapping, preview, counts per pole and the refused rows: the part of an import that
    stores nothing. The Samples import and the evaluation set's both use it; `source_ids`: offer an id
    column (samples keep it). None until a file maps."""
    read = table_upload(f"{what.capitalize()} file", uploader_key)
    if read is None:
        return None
    table = read[1]
    if not table.rows:
        reason = table.problems[0].reason if table.problems else "no rows"
        st.warning(f"Nothing to import: {reason}.", icon=":material/warning:")
        if len(table.problems) > 1:
            st.dataframe(refusals_frame(table.problems), hide_index=True, width="stretch")
        return None
    mapping = _pick_mapping(table, traits, prefix, handle)
    if source_ids:
        mapping = _pick_source_id(table, mapping, prefix)
    try:
        mapped = map_rows(table, mapping, trait_lookup(traits))
    except ValueError as exc:
        st.error(str(exc))
        return None
    refused = table.problems + mapped.refused
    left = f", {mapped.left_out} left out between the quantiles" if mapped.left_out else ""
    if mapping.raters:
        _votes_preview(mapped, len(refused), left)
    else:
        st.write(f"{len(mapped.samples)} row(s) read, {len(refused)} unreadable{left}.")
    if mapped.samples and not mapping.raters:
        preview = pd.DataFrame(mapped.samples[:PREVIEW_ROWS])
        preview.insert(0, "line", mapped.lines[:PREVIEW_ROWS])
        st.markdown(f"**Preview** (the first {min(PREVIEW_ROWS, len(mapped.samples))} {what})")
        st.dataframe(preview, hide_index=True, width="stretch")
    if mapped.samples:
        counted = "Votes" if mapping.raters else what.capitalize()
        st.markdown(f"**{counted} per pole** (quality 0.5 and above is the positive pole)")
        st.dataframe(pd.DataFrame(mapped.counts()), hide_index=True)
    if refused:
        st.markdown("**Rows that will not be imported**")
        st.dataframe(refusals_frame(refused), hide_index=True, width="stretch")
    return LabelledFile(mapped, refused, mapping)


RATINGS = "imported_ratings"  # session_state: handle -> {(trait key, text): "the file's label (column)"}


def imported_rating(handle: str, trait: str, text: str) -> str | None:
    """The label a sample had in the file it was imported from in this session, e.g. "-2.7 (score)": the
    Flags tab shows it beside the quality it was mapped to. The service stores the quality only."""
    rating: str | None = st.session_state.get(RATINGS, {}).get(handle, {}).get((trait, text.strip()))
    return rating


def _remember_ratings(handle: str, mapped: Mapped, column: str) -> None:
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


def _votes_preview(mapped: Mapped, unreadable: int, left: str) -> None:
    """Several raters: texts, votes per text and raters, before anything is stored."""
    v = mapped.votes()
    low, median, high = v["votes_per_text"]
    st.write(
        f"{v['votes']:,} votes on {v['texts']:,} texts from {v['raters']:,} raters "
        f"(votes per text: {low}–{high}, median {median}); {unreadable} unreadable{left}."
    )
    if not mapped.samples:
        return
    st.markdown(f"**Preview** (the first {PREVIEW_ROWS} texts and their votes)")
    st.dataframe(pd.DataFrame(mapped.texts_with_votes(PREVIEW_ROWS)), hide_index=True, width="stretch")
    st.markdown(f"**Raters** ({v['raters']:,}, most votes first)")
    raters = pd.DataFrame(v["by_rater"][:PREVIEW_ROWS], columns=["rater", "votes"])
    st.dataframe(raters, hide_index=True)


def sample_import_section(client: Client, handle: str, traits: list[Trait], editable: bool) -> None:
    """The whole Import tab."""
    st.caption(
        "A file of labelled texts (CSV, TSV, TXT, JSON or JSONL), in any columns: pick the text, the label "
        "and the trait below and how a label becomes quality (1 = positive pole, 0 = negative), and an id "
        "column to keep. Nothing is stored before **Import**; identical samples already stored are skipped."
    )
    read = labelled_file("samples_upload", "import", traits, handle=handle, source_ids=True)
    if read is None:
        return
    if not st.button(
        "Import", type="primary", disabled=not (editable and read.mapped.samples), key="samples_import"
    ):
        return
    _store(client, handle, traits, read.mapped, read.refused)
    _remember_ratings(handle, read.mapped, read.mapping.label)
    remember_scale(handle, read.mapping)


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
        if note := held_out_note(report.in_evaluation_set):
            st.warning(note, icon=":material/warning:")


def held_out_note(n: int) -> str | None:
    """Stored samples whose texts are in the evaluation set, in plain words (None when there are none)."""
    if not n:
        return None
    if n == 1:
        return "1 of these texts is in the evaluation set: it will not count as held out."
    return f"{n:,} of these texts are in the evaluation set: they will not count as held out."
