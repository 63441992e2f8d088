"""The Label page's pool import: a file of texts into the model's unlabelled pool, resumable.

The file is read as every import reads one (`app.ui.table_upload`: any of `core.tables.FORMATS`, its first row
a header or not); the texts are the column picked (`core.tables.column_texts`). The section sends them
through `Client.import_pool` (batches that shrink on a slow service) with a progress bar. When an import
stops, the page says how many texts are stored and offers to resume from there; texts already in the pool are
never added twice.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

from app.samples.import_report import refusals_frame
from app.ui.inert import escape_md
from app.ui.table_upload import pick_text_column, table_upload
from core.client import Client, PoolImportReport
from core.tables import Refusal, column_texts, row_metadata

STATE = (
    "pool_import_stopped"  # {"handle", "digest", "total", "stored", "error"} of the last import that stopped
)
REPEATS = "pool_import_repeats"  # {"digest", "rows"}: the last import's texts that added nothing, by line


def refused_any(report: PoolImportReport, unread: int = 0) -> bool:
    """Whether an import left out texts the analyst sent (the evaluation set's, rows of the file without a
    text, or the rest of a stopped import): its outcome is a warning, never a green success."""
    return bool(report.in_evaluation_set or unread or not report.complete)


def pool_heading(total: int, held: int) -> str:
    """The pool's size on the Label page: the texts to label, and those it keeps as texts of the evaluation
    set (imported before the set had them), which are never labelled."""
    more = f"; {held:,} more in the evaluation set, never labelled" if held else ""
    return f"Pool ({total:,} text{'' if total == 1 else 's'} to label{more})"


def empty_pool_note(held: int) -> str:
    """Why there is nothing to label, when the pool holds no text to label."""
    if not held:
        return "The pool is empty: import texts to label above."
    every = "Its one text is" if held == 1 else f"All {held:,} texts of the pool are"
    return (
        f"{every} in the evaluation set, which is never labelled nor trained on: nothing is left to label. "
        "Import other texts above."
    )


def first_lines(texts: Sequence[str], duplicates: Sequence[int]) -> dict[int, int]:
    """{position: position of its first occurrence} for the `duplicates` (positions that added nothing) that
    repeat a text earlier in `texts`, compared as the service stores them (trimmed); the other duplicates were
    in the pool before the import."""
    first: dict[str, int] = {}
    for i, text in enumerate(texts):
        first.setdefault(text.strip(), i)
    return {i: first[texts[i].strip()] for i in duplicates if first[texts[i].strip()] < i}


def outcome(report: PoolImportReport, unread: int = 0, texts: Sequence[str] = ()) -> str:
    """What an import did, with exact counts, in the user's words (`unread`: the file's records that gave
    no text, listed on the page before the import; `texts`: what was sent, to tell a text repeated in the file
    from one in the pool before)."""
    not_sent = (
        f" {unread:,} row(s) of the file gave no text and were not sent (listed under the file)."
        if unread
        else ""
    )
    n = report.in_evaluation_set
    held = (
        f" {n:,} {'was' if n == 1 else 'were'} left out: {'it is' if n == 1 else 'they are'} in the "
        "evaluation set, which stays held out."
        if n
        else ""
    )
    if report.complete and n and n == report.total:
        # Nothing added and a bare count read as an import that did nothing: say what happened and why.
        which = (
            "The file's one text is in the evaluation set, so it was not"
            if n == 1
            else f"All {n:,} texts of this file are in the evaluation set, so none were"
        )
        return (
            f"{which} added to the pool: a text used to evaluate the "
            f"model must not be labelled for training.{not_sent}"
        )
    if report.complete:
        # What was added first: "imported 425" beside "25 left out" read as if the 25 were in the pool.
        repeated = len(first_lines(texts, report.duplicates)) if texts else 0
        there = report.total - report.added - n - repeated
        again = f" {repeated:,} repeated a text earlier in the file, stored once." if repeated else ""
        before = f" {there:,} {'was' if there == 1 else 'were'} in the pool already." if there > 0 else ""
        k = report.labelled
        labelled = (
            f" {k:,} of the texts added {'is a text' if k == 1 else 'are texts'} of the model's samples, "
            "labelled already: suggestions leave a text out for each trait it is labelled for."
            if k
            else ""
        )
        added = f"Added {report.added:,} of the file's {report.total:,} texts to the pool."
        return f"{added}{held}{again}{before}{labelled}{not_sent}"
    return (
        f"The import stopped: {report.stored:,} of {report.total:,} texts are stored, "
        f"{report.total - report.stored:,} are not ({report.error}). Resume to send the rest; "
        f"texts already stored are not added twice.{held}{not_sent}"
    )


def pool_import_section(client: Client, handle: str, on_change: Callable[[], None]) -> None:
    """Uploader, Import / Resume buttons and a progress bar; `on_change()` after texts were stored."""
    read = table_upload("Pool file", "pool_upload")
    if read is None:
        return
    table = read[1]
    column = pick_text_column(table, "pool_text_col")
    found, refused = column_texts(table, column) if column else ([], table.problems)
    texts = [text for _, text in found]
    keep = st.multiselect(
        "Keep these columns beside each text",
        [c for c in table.columns if c != column],
        key="pool_keep",
        help="Shown beside the text while labelling; the pool can be filtered by them.",
    )
    metadata = [row_metadata(table.rows[row], keep) for row, _ in found] if keep else None
    st.caption(f"{len(texts):,} text(s) to import" + (f" from {escape_md(column)}." if column else "."))
    if refused:
        st.markdown(f"**Rows that will not be imported** ({len(refused):,})")
        st.dataframe(refusals_frame(refused), hide_index=True, width="stretch")
    if not texts:
        return
    # The texts themselves: another column or first-row choice of the same file is another import.
    digest = hashlib.sha256("\x1e".join(texts).encode()).hexdigest()
    repeats: dict[str, Any] = st.session_state.get(REPEATS) or {}
    if repeats.get("digest") == digest and repeats["rows"]:
        st.markdown(
            f"**Texts that added nothing** ({len(repeats['rows']):,}: in the pool already, or repeated)"
        )
        st.dataframe(refusals_frame(repeats["rows"]), hide_index=True, width="stretch")
    stopped: dict[str, Any] = st.session_state.get(STATE) or {}
    resumable = bool(stopped) and stopped["handle"] == handle and stopped["digest"] == digest
    if resumable:
        st.warning(
            f"The last import of this file stopped with {stopped['stored']:,} of {stopped['total']:,} texts "
            f"stored ({escape_md(str(stopped['error']))}).",
            icon=":material/warning:",
        )
    # Two buttons side by side only when there is something to resume: alone, Import stood in the right half.
    b1, b2 = st.columns(2) if resumable else (st.container(), st.container())
    start = 0
    if resumable and b1.button(
        f"Resume from text {stopped['stored'] + 1:,}", key="pool_resume", type="primary", width="stretch"
    ):
        start = int(stopped["stored"])
    elif not b2.button(
        "Import into the pool", key="pool_import", type="secondary" if resumable else "primary"
    ):
        return
    bar = st.progress(start / len(texts), text=f"Importing {len(texts):,} texts…")

    def _progress(done: int, total: int) -> None:
        bar.progress(done / total if total else 1.0, text=f"Stored {done:,} of {total:,} texts")

    report = client.import_pool(handle, texts, start=start, progress=_progress, metadata=metadata)
    if report.complete:
        st.session_state.pop(STATE, None)
    else:
        record = {"handle": handle, "digest": digest, "total": report.total}
        st.session_state[STATE] = record | {"stored": report.stored, "error": report.error}
    lines = [table.lines[row] for row, _ in found]
    repeats_of = first_lines(texts, report.duplicates)
    already = [
        Refusal(lines[i], f"repeats line {lines[repeats_of[i]]} of the file: nothing added")
        if i in repeats_of
        else Refusal(lines[i], "in the pool already: nothing added")
        for i in report.duplicates
    ]
    st.session_state[REPEATS] = {"digest": digest, "rows": already}
    # Texts refused (the evaluation set's) or not sent are a warning: a green success said all went in.
    flash = "pool_flash_warning" if refused_any(report, len(refused)) else "pool_flash"
    st.session_state[flash] = outcome(report, len(refused), texts)
    if report.stored > start:
        on_change()
    st.rerun()
