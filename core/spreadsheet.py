"""Cells bound for a spreadsheet, guarded against formula injection, and read back exactly.

A spreadsheet runs a cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return as a formula
(`=HYPERLINK(…)`, `=cmd|…`): a text someone labelled or typed could run on a colleague's machine when an
export is opened. OWASP's guard prefixes such a cell with `'`, which the spreadsheet shows as text and
hides. So the files meant for spreadsheets, the workbench's CSV download buttons, guard their cells; the
client's and the notebook's exports (`Client.export_samples`, `Client.export_votes`) stay exact, for
machines and re-import. A guarded file imported again reads as exported: `core.tables` takes one guard
quote off, which `guard_cell` puts on every cell that would otherwise lose one (`'=x` is exported `''=x`), so
export then import returns every text as it was. A plain number (`-0.5`, `+3`, `1e-3`) is left alone: it
is a value, not a formula, and stays a number in the sheet.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

#: A cell a spreadsheet runs: it starts with one of these (after any guard quotes already there).
FORMULA_START = re.compile(r"'*[=+\-@\t\r]")
GUARDED = re.compile(r"'+[=+\-@\t\r]")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def guard_cell(cell: object) -> object:
    """`cell` as a spreadsheet shows it without running it: a text a formula would start with gets `'`."""
    if isinstance(cell, str) and FORMULA_START.match(cell) and not _NUMBER.fullmatch(cell):
        return "'" + cell
    return cell


def unguard_cell(cell: str) -> str:
    """`cell` as it was before `guard_cell`: one guard quote taken off a guarded cell, anything else kept."""
    return cell[1:] if GUARDED.match(cell) else cell


def guarded_rows(rows: Iterable[Mapping[str, object]]) -> Iterable[dict[str, object]]:
    """Each row with every cell guarded, for a `csv.DictWriter` writing a spreadsheet's file."""
    return ({k: guard_cell(v) for k, v in row.items()} for row in rows)
