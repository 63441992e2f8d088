"""Importing a file of labelled texts: its columns picked and its labels mapped to quality
(`app.samples.mapping`), previewed with counts per pole and the rows refused (`labelled_file`, shared by the
Samples page's Import tab and the Versions page's evaluation set), then stored in batches.

Nothing is stored before the Import click; every row not stored is listed with its file line and the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, cast

import pandas as pd
import streamlit as st

from app.samples.files import unknown_trait_hint
from app.samples.import_report import (
    contradictions,
    held_out_note,
    import_outcome,
    refusals_frame,
    trait_lookup,
    unstored_rows,
)
from app.samples.kept import Kept
from app.samples.mapping import (
    RULES,
    LabelScale,
    Mapped,
    Mapping,
    Rule,
    guess_mapping,
    guess_raters,
    guess_scale,
    id_like,
    label_span,
    map_rows,
    number_text,
    points_note,
    rules_summary,
    scale_candidates,
    scale_quality,
    scale_text,
    threshold_neutral_default,
    which_scale,
    word_labels,
)
from app.samples.remembered import remember_ratings, remember_scale, scale_default
from app.ui.flash import say_once
from app.ui.inert import escape_md
from app.ui.table_upload import table_upload
from app.ui.widgets import guard
from core.client import Client, Trait
from core.contract import NEUTRAL_QUALITY, id_column
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


OTHER_SCALE = "another: type its ends"  # the scale picker's last option: the ends typed in the boxes


def _pick_mapping(
    table: Table, traits: list[Trait], prefix: str, handle: str | None = None
) -> tuple[Mapping, Kept, str | None]:
    """The column pickers and the label rule, their defaults read from the data (`guess_mapping`), the
    analyst's own choices kept (`Kept`), and the question still open (a scale to pick), if any."""
    columns = table.columns
    guess = guess_mapping(table)
    kept = Kept(prefix, table, handle)
    trait_keys = [t.key for t in traits]
    raters_found = guess_raters(table)
    several = False
    if raters_found:  # a file with several raters' labels: one vote each, or one label column
        named = ", ".join(c for c, _ in raters_found)
        several = (
            st.radio(
                "Labels",
                [ONE_LABEL, SEVERAL],
                horizontal=True,
                help=f"This file has a series of rating columns ({escape_md(named)}). Several raters: each "
                "rating is stored as its rater's vote (the model trains on each text's mean, and the Traits "
                "page measures how far the raters agree).",
                **kept.widget("raters_mode", ONE_LABEL, [ONE_LABEL, SEVERAL]),
            )
            == SEVERAL
        )
    c1, c2, c3 = st.columns(3)
    text = c1.selectbox("Text column", columns, **kept.widget("text_col", guess.text, columns))
    raters: tuple[tuple[str, str | None], ...] = ()
    if several:
        raters = _pick_raters(table, raters_found, kept, c2)
        if not raters:
            st.warning("Pick the raters' label columns (one per rater).", icon=":material/warning:")
        label = raters[0][0] if raters else guess.label
    else:
        label = c2.selectbox("Label column", columns, **kept.widget("label_col", guess.label, columns))
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
        help="A column naming each row's trait (key or name), or one of the model's traits for every row.",
        **kept.widget("trait", default if default in trait_choices else trait_choices[0], trait_choices),
    )
    # The rule's options are kept per label column(s): another label gets the defaults its own data says.
    label_columns = [c for c, _ in raters] or [label]
    guessed = guess_scale(table, *label_columns)
    scale, remembered = scale_default(guessed, handle)
    words = () if raters else _pick_words(table, label, kept)
    label = "+".join(c for c, _ in raters) or label
    at = f"@{label}"
    asked = st.empty()  # the question about the scale, above the options it is about (filled below)
    r1, r2, r3 = st.columns(3)
    rule = r1.radio(
        "Label → quality",
        RULES,
        format_func=RULE_NAMES.__getitem__,
        **kept.widget(f"rule{at}", scale.rule, RULES),
    )
    low, high = float(kept.get(f"low{at}", scale.low)), float(kept.get(f"high{at}", scale.high))
    threshold, share = (low + high) / 2, 0.25
    neutral_at = False
    question = None
    settled = True
    if rule == "scale":
        span = label_span(table, *label_columns)
        candidates = scale_candidates(guessed, span)
        short = len(candidates) > 1  # the labels do not reach both ends: the scale is a guess
        if scale not in candidates:  # the last import's scale, proposed for this file too
            candidates = sorted([*candidates, scale], key=lambda c: c.high - c.low)
        low, high, settled = _pick_scale(kept, at, r2, scale, candidates, remembered)
        if short and span is not None:
            question = _scale_question(span, guessed, candidates)
        target = next((t for t in traits if trait_pick == f"trait: {t.key}"), None)
        points = target.scale.points if target is not None and target.scale is not None else None
        if (fits := points_note(points, low, high)) is not None:
            r2.caption(fits)
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
            "Positive at or above", help="The scale's middle by default.",
            **kept.widget(f"threshold{at}", threshold),
        )  # fmt: skip
        neutral_at = r2.checkbox(
            f"exactly {number_text(threshold)} → {NEUTRAL_QUALITY:g} (neutral)",
            help="A label exactly at the threshold counts toward neither pole. On for a symmetric scale, "
            "whose middle (0 on −4..+4) a rater gave for neither.",
            **kept.widget(f"threshold_neutral{at}", threshold_neutral_default(guessed)),
        )
    elif rule == "quantiles":
        percent = r2.slider(
            "Top and bottom share (%)", 5, 50, step=5, help="25 = quartiles", **kept.widget("share", 25)
        )
        share = percent / 100
    directions = ["the positive pole", "the negative pole"]
    higher = r3.radio("A higher label is", directions, **kept.widget("direction", directions[0], directions))
    url_choices = [NONE, *columns]
    source = r3.selectbox(
        "Source URL column", url_choices, **kept.widget("source_col", guess.source_url or NONE, url_choices)
    )
    if question:  # the whole width: a narrow column would push it below the screen
        asked.info(question, icon=":material/help:")
    kind, _, name = trait_pick.partition(": ")
    mapping = Mapping(
        text=text,
        label=label,
        trait_column=name if kind == "column" else None,
        trait=name if kind == "trait" else None,
        rule=cast(Rule, rule),
        low=float(low),
        high=float(high),
        threshold=float(threshold),
        neutral_at_threshold=bool(neutral_at),
        share=share,
        higher_is_positive=higher == "the positive pole",
        drop_neutral=bool(kept.get(_drop_neutral(label), False)),
        source_url=None if source == NONE else source,
        raters=raters,
        words=words,
    )
    return mapping, kept, None if settled else question


def _pick_words(table: Table, label: str, kept: Kept) -> tuple[tuple[str, float], ...]:
    """A label column of words (SUBJ, OBJ): a number for each, typed by the analyst (none is guessed; a row
    whose word has none is refused), then mapped by the rule like any number."""
    words = word_labels(table, label)
    if not words:
        return ()
    st.markdown(
        f"**Label words** of {escape_md(label)}: the number each stands for (1 positive, 0 negative)."
    )
    boxes = st.columns(min(len(words), 4))
    chosen = []
    for i, word in enumerate(words):
        value = boxes[i % len(boxes)].number_input(
            word,
            min_value=None,
            step=1.0,
            placeholder="its number",
            **kept.widget(f"word@{label}={word}", None),
        )
        if value is not None:
            chosen.append((word, float(value)))
    return tuple(chosen)


def _drop_neutral(label: str) -> str:
    """The kept option "leave out the neutral rows" of a label column (its checkbox is under the summary)."""
    return f"drop_neutral@{label}"


def _pick_scale(
    kept: Kept, at: str, where: Any, scale: LabelScale, candidates: list[LabelScale], remembered: bool
) -> tuple[float, float, bool]:
    """The scale's two boxes and, when the labels leave it open, the scales they may be on: picking one
    fills the boxes; typing the boxes picks the one they name (or "another"). With several scales possible
    none is picked for the analyst (it decides every quality): the last import's into the model, or one
    picked for a file of the same shape, is theirs; else False (not settled) until they pick or type one.

    The radio's options are the scales' own text ("−4..+4"), never marked by circumstance (the last
    import's): the browser sends back the text of the option it shows, and a text no longer among the
    options reaches the callback as that text, not as a scale."""
    pick, low_box, high_box = f"scale{at}", f"low{at}", f"high{at}"
    named = {scale_text(c.low, c.high): c for c in candidates}

    def ends() -> tuple[float, float]:
        return float(kept.get(low_box, scale.low)), float(kept.get(high_box, scale.high))

    def matching() -> str:
        found = which_scale(*ends(), candidates)
        return OTHER_SCALE if found is None else scale_text(candidates[found].low, candidates[found].high)

    def picked() -> None:
        if (c := named.get(kept.get(pick, OTHER_SCALE))) is not None:
            kept.put(low_box, c.low)
            kept.put(high_box, c.high)

    def typed() -> None:
        if len(candidates) > 1:
            kept.put(pick, matching())

    settled = True
    if len(candidates) > 1:
        options = [*named, OTHER_SCALE]
        chosen = remembered or kept.get(pick, None) is not None
        default = matching() if chosen else None
        shown = where.radio(
            "Scale", options, horizontal=True, **kept.widget(pick, default, options, then=picked)
        )
        settled = shown is not None
    s1, s2 = where.columns(2)
    low = s1.number_input("Scale from", **kept.widget(low_box, scale.low, then=typed))
    high = s2.number_input("to", **kept.widget(high_box, scale.high, then=typed))
    return float(low), float(high), settled


def _scale_question(span: tuple[float, float], guessed: LabelScale, candidates: list[LabelScale]) -> str:
    """Why the scale is asked: the labels fall short of its ends, so it is a guess, and it sets qualities."""
    low, high = span
    short = {(True, True): "both ends", (True, False): "its low end", (False, True): "its high end"}[
        (low > guessed.low, high < guessed.high)
    ]
    named = [scale_text(c.low, c.high) for c in candidates]
    example = high if abs(high) >= abs(low) else low
    qualities = ", ".join(
        f"{scale_quality(example, Mapping('', '', rule='scale', low=c.low, high=c.high)):.2f} on {n}"
        for c, n in zip(candidates, named, strict=True)
    )
    return (
        f"Your labels span {number_text(low)}..{number_text(high)}, short of {short} of "
        f"{scale_text(guessed.low, guessed.high)} (the smallest scale that holds them): is the file's scale "
        f"{', '.join(named[:-1])} or {named[-1]}? It decides every quality: {number_text(example)} is "
        f"{qualities}."
    )


def _pick_raters(
    table: Table, found: list[tuple[str, str | None]], kept: Kept, where: Any
) -> tuple[tuple[str, str | None], ...]:
    """The raters' label columns, and beside each the column of its rater ids (or none: the label column's
    name is then the rater)."""
    columns = table.columns
    labels = where.multiselect(
        "Label columns (one per rater)", columns, **kept.widget("rater_labels", [c for c, _ in found])
    )
    ids = dict(found)
    chosen: list[tuple[str, str | None]] = []
    with st.expander("Rater id column beside each label column", expanded=False):
        pairs = st.columns(min(max(len(labels), 1), 5))
        for i, label in enumerate(labels):
            options = [BY_COLUMN_NAME, *columns]
            default = ids.get(label)
            pick = pairs[i % len(pairs)].selectbox(
                f"Rater of {escape_md(label)}",
                options,
                **kept.widget(f"rater_of_{label}", default if default in options else options[0], options),
            )
            chosen.append((label, None if pick == BY_COLUMN_NAME else pick))
    return tuple(chosen)


@dataclass
class LabelledFile:
    """A file read and mapped: what would be stored, the file line of each, and every row that will not be
    (unreadable, refused by the mapping, or left out as the analyst asked: `mapped.dropped`)."""

    mapped: Mapped
    refused: list[Refusal]
    mapping: Mapping
    kept: Kept  # the options the analyst set for this file: proposed again for the next of its shape


def _pick_source_id(table: Table, mapping: Mapping, prefix: str) -> Mapping:
    """The id column, kept as each sample's `source_id` (proposed when a column is named like an id, else
    when its values look like ids), and the extra columns kept as each text's metadata."""
    columns = [c for c in table.columns if c not in (mapping.text, mapping.label)]
    choices = [NONE, *columns]
    proposed = id_column(columns) or id_like(table, columns)
    pick = st.selectbox(
        "Id column",
        choices,
        index=choices.index(proposed) if proposed else 0,
        key=f"{prefix}_source_id_{proposed}",
        help="A column of the rows' own ids, kept as each sample's `source_id`: the export writes it, so "
        "exported samples join back to this file.",
    )
    extra = [c for c in columns if c != pick and c not in (mapping.trait_column, mapping.source_url)]
    keep = st.multiselect(
        "Keep these columns beside each text",
        extra,
        key=f"{prefix}_keep",
        help="Shown beside the text while labelling and reviewing, and exported with the samples.",
    )
    return replace(mapping, source_id=None if pick == NONE else pick, keep=tuple(keep))


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
        st.warning(f"Nothing to import: {escape_md(reason)}.", icon=":material/warning:")
        if len(table.problems) > 1:
            st.dataframe(refusals_frame(table.problems), hide_index=True, width="stretch")
        return None
    mapping, kept, unsettled = _pick_mapping(table, traits, prefix, handle)
    if source_ids:
        mapping = _pick_source_id(table, mapping, prefix)
    try:
        mapped = map_rows(table, mapping, trait_lookup(traits))
    except ValueError as exc:
        st.error(str(exc))
        return None
    unreadable = table.problems + mapped.refused
    if unsettled:  # the data fit more than one scale: say which one the lines below assume until a pick
        st.warning(
            f"Until you pick the file's scale above, the mapping, the counts and the preview below assume "
            f"{scale_text(mapping.low, mapping.high)}, the smallest scale that holds your labels. Nothing is "
            "imported before you pick: the scale decides every quality.",
            icon=":material/help:",
        )
    if mapping.raters:
        _votes_preview(mapped, len(unreadable))
    else:
        st.write(f"{len(mapped.samples):,} row(s) read, {len(unreadable):,} unreadable{_left_out(mapped)}.")
    unit = "vote" if mapping.raters else "row"
    st.markdown(f"**Mapping:** {rules_summary(mapping, mapped, unit)}.")
    if neutral := mapped.neutral():
        st.checkbox(
            f"leave out the {neutral:,} neutral {unit}" + ("" if neutral == 1 else "s"),
            help=f"A quality of {NEUTRAL_QUALITY:g} counts toward neither pole. Left out, each is listed "
            "below with its line; kept, it is stored as it is.",
            **kept.widget(_drop_neutral(mapping.label), False),
        )
    refused = unreadable + mapped.dropped
    if mapped.samples and not mapping.raters:
        preview = pd.DataFrame(mapped.samples[:PREVIEW_ROWS])
        preview.insert(0, "line", mapped.lines[:PREVIEW_ROWS])
        st.markdown(f"**Preview** (the first {min(PREVIEW_ROWS, len(mapped.samples)):,} {escape_md(what)})")
        st.dataframe(preview, hide_index=True, width="stretch")
    if mapped.samples:
        counted = "Votes" if mapping.raters else escape_md(what.capitalize())
        st.markdown(f"**{counted} per pole** (a quality of {NEUTRAL_QUALITY:g} is neutral: neither pole)")
        st.dataframe(pd.DataFrame(mapped.counts()), hide_index=True)
    if both := contradictions(mapped):
        st.markdown(f"**Texts this file labels both ways** ({len(both):,})")
        st.caption(
            "Rows of one text with labels on both poles: stored, each row counts as a vote, and training "
            "counts the text as contested. Settle each on the **Disagreements** tab once imported, or fix "
            "the file first."
        )
        st.dataframe(pd.DataFrame(both), hide_index=True, width="stretch")
    if refused:
        st.markdown("**Rows that will not be imported**")
        st.dataframe(refusals_frame(refused), hide_index=True, width="stretch")
    if unsettled:  # said above the mapping: a guess would change every quality
        return None
    return LabelledFile(mapped, refused, mapping, kept)


def _left_out(mapped: Mapped) -> str:
    """The rows the mapping left out, for the line of counts (empty when none)."""
    left = f", {mapped.left_out:,} left out between the quantiles" if mapped.left_out else ""
    return left + (f", {len(mapped.dropped):,} neutral left out" if mapped.dropped else "")


def _votes_preview(mapped: Mapped, unreadable: int) -> None:
    """Several raters: texts, votes per text and raters, before anything is stored."""
    v = mapped.votes()
    low, median, high = v["votes_per_text"]
    st.write(
        f"{v['votes']:,} votes on {v['texts']:,} texts from {v['raters']:,} raters "
        f"(votes per text: {low:g}–{high:g}, median {median:g}); "
        f"{unreadable:,} unreadable{_left_out(mapped)}."
    )
    if not mapped.samples:
        return
    st.markdown(f"**Preview** (the first {PREVIEW_ROWS} texts and their votes)")
    st.dataframe(pd.DataFrame(mapped.texts_with_votes(PREVIEW_ROWS)), hide_index=True, width="stretch")
    st.markdown(f"**Raters** ({v['raters']:,}, most votes first)")
    raters = pd.DataFrame(v["by_rater"][:PREVIEW_ROWS], columns=["rater", "votes"])
    st.dataframe(raters, hide_index=True)


IMPORTED = "samples_imported"  # session_state: the last import's outcome, shown after the page is drawn again


@dataclass(frozen=True)
class Imported:
    """What an import stored and what it did not, to show once the page has been drawn again."""

    message: str
    ok: bool  # nothing refused (rows left out as the analyst asked are not a refusal)
    not_stored: list[Refusal]
    held_out: str | None = None  # stored texts that are in the evaluation set (`held_out_note`)


def sample_import_section(client: Client, handle: str, traits: list[Trait], editable: bool) -> None:
    """The whole Import tab."""
    st.caption(
        "A file of labelled texts (CSV, TSV, TXT, JSON or JSONL), in any columns: pick the text, the label "
        "and the trait below and how a label becomes quality (1 = positive pole, 0 = negative), and an id "
        "column to keep. Nothing is stored before **Import**; identical samples already stored are skipped."
    )
    read = labelled_file("samples_upload", "import", traits, handle=handle, source_ids=True)
    clicked = read is not None and st.button(
        "Import", type="primary", disabled=not (editable and read.mapped.samples), key="samples_import"
    )
    if read is None or not clicked:
        say_once(IMPORTED, _show)
        return
    done = _store(client, handle, traits, read.mapped, read.refused)
    if done is None:  # the service failed: its error is on the page
        return
    remember_ratings(handle, read.mapped, read.mapping.label)
    remember_scale(handle, read.mapping)
    read.kept.imported()
    st.session_state[IMPORTED] = done
    # The grid (Browse tab) and every count on the page were drawn above, before these rows were stored:
    # draw the page again so they show what the service now holds, and this outcome under the button.
    st.rerun()


def _contested_note(n: int) -> str:
    if not n:
        return ""
    return (
        f" {n:,} text(s) are labelled both ways in the file (listed above before the import): settle them "
        "on the Disagreements tab."
    )


def _show(done: Imported) -> None:
    if done.ok:
        st.success(done.message)
    else:  # anything refused is a warning, never a green success
        st.warning(done.message)
    if done.not_stored:
        st.dataframe(refusals_frame(done.not_stored), hide_index=True, width="stretch")
    if done.held_out:
        st.warning(done.held_out, icon=":material/warning:")


def _store(
    client: Client, handle: str, traits: list[Trait], mapped: Mapped, refused: list[Refusal]
) -> Imported | None:
    """Send the samples in batches with a progress bar; what was stored and every row that was not."""
    with guard("Importing samples"):
        bar = st.progress(0.0, text="Importing…")

        def _progress(done: int, total: int) -> None:
            bar.progress(done / total if total else 1.0, text=f"Imported {done} of {total} rows")

        # A file's rows are not the importer's votes: stored as the file's raters' (or nobody's).
        report = client.import_samples(
            handle, mapped.samples, progress=_progress, provenance="imported", strict=False
        )  # the page lists each refused row
        bar.progress(1.0, text="Import finished")
        keys = [t.key for t in traits]
        by_service = [
            Refusal(mapped.lines[e.index], e.message + unknown_trait_hint(e.message, keys))
            for e in report.errors
        ]
        # A row identical to a stored sample stores nothing: listed apart, "stored" is what the model gained.
        repeats, in_file = unstored_rows(mapped, report.duplicates)
        everything = refused + by_service + sorted(repeats + in_file, key=lambda r: r.line)
        rejected = [r for r in refused + by_service if r not in mapped.dropped]
        return Imported(
            import_outcome(
                len(mapped.samples) + len(refused) + mapped.left_out,
                report.stored,
                repeats,
                mapped,
                rejected,
                in_file,
            )
            + _contested_note(len(contradictions(mapped))),
            not rejected,
            everything,
            held_out_note(report.in_evaluation_set),
        )
    return None
