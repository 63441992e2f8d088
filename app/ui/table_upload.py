"""The one uploader of every file the workbench reads (samples, evaluation sets, the pool, batch scoring):
the file read as a table by `core.tables`, the same way everywhere.

It takes a file of any name, so one it cannot read is refused on the page, saying why and what it reads (an
uploader's own type filter only says so in a tooltip). When the file has a first row that could name the
columns, it asks whether it does, proposing what the data says; then it says how the file was read and how
many rows it holds.
"""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.uploaded_file_manager import UploadedFile

from app.ui.inert import escape_md
from core.tables import FORMATS_TEXT, Table, format_problem, read_table, text_column

FIRST_ROW = ("column names", "data (no header row)")


def table_upload(label: str, key: str) -> tuple[UploadedFile, Table] | None:
    """The uploader (keyed `key`) and the file read, or None before a file it can read."""
    upload = st.file_uploader(label, key=key, help=f"{FORMATS_TEXT.capitalize()}.")
    if upload is None:
        return None
    problem = format_problem(upload.name)
    if problem is not None:
        st.error(problem, icon=":material/block:")
        return None
    data = upload.getvalue()
    table = read_table(upload.name, data)
    if table.first_row_is_data is not None:
        pick = st.radio(
            "First row",
            FIRST_ROW,
            index=int(table.first_row_is_data),
            horizontal=True,
            # Keyed by the file: another file gets the proposal its own data makes.
            key=f"{key}_first_row_{upload.name}_{upload.size}",
            help="Whether the file's first row names its columns. Proposed from the data: a number or a "
            "long text where a column name would be is a row of data; the columns are then named column 1, "
            "column 2, ….",
        )
        if (pick == FIRST_ROW[0]) != table.header:
            table = read_table(upload.name, data, header=pick == FIRST_ROW[0])
    for note in table.notes:
        st.info(note, icon=":material/info:")
    after = " after its header row" if table.header and table.first_row_is_data is not None else ""
    st.caption(f"{table.total:,} row(s) in {escape_md(upload.name)}{after}.")
    if (lines := lines_sentence(table)) is not None:
        st.caption(lines)
    return upload, table


def lines_sentence(table: Table) -> str | None:
    """Where each line of the file went, "5,190 lines in the file: 1 header, 5,186 rows, 1 refused (listed
    below), 2 blank.", records over several lines counted with their lines; the parts add up to the file's
    lines (`Table.unaccounted_lines`). None for a JSON array (its rows are items) or a file of no lines."""
    if not table.line_count:
        return None

    def part(records: int, lines: int, what: str) -> str:
        if not records:
            return ""
        return f"{records:,} {what}" + (f" on {lines:,} lines" if lines != records else "")

    refused = [p for p in table.problems if p.lines]
    parts = [
        "1 header" + (f" on {table.header_lines} lines" if table.header_lines > 1 else "")
        if table.header_lines
        else "",
        part(len(table.rows), sum(table.spans), "row" if len(table.rows) == 1 else "rows"),
        part(len(refused), sum(p.lines for p in refused), "refused"),
        f"{table.blank_lines:,} blank" if table.blank_lines else "",
    ]
    lines = f"{table.line_count:,} line{'' if table.line_count == 1 else 's'}"
    return f"{lines} in the file: {', '.join(p for p in parts if p)}."


def pick_text_column(table: Table, key: str) -> str | None:
    """The column of texts, the one `core.tables.text_column` proposes unless another is picked; None for a
    table without columns."""
    proposed = text_column(table)
    if proposed is None or len(table.columns) == 1:
        return proposed
    index = table.columns.index(proposed)
    return str(st.selectbox("Text column", table.columns, index=index, key=f"{key}_{proposed}"))


def nothing_read(table: Table) -> str:
    """Why a file gave no rows, and what to upload instead."""
    if table.problems and not table.problems[0].reason.startswith("the file is empty"):
        first = table.problems[0]
        return f"No row could be read: line {first.line}: {first.reason}."
    if table.columns:
        return "The file has a header but no rows: add one text a line under it."
    return "The file is empty: upload a file of texts, with a `text` column or the texts in one column."
