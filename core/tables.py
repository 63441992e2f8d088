"""A table of texts from a file as people publish it: every import of the workbench reads its file here
(samples, evaluation sets, the pool, batch scoring), and a notebook can too (`read_file(path)`).

Formats (`FORMATS`): `.csv`, `.tsv` and `.txt` with a delimiter sniffed from the data (comma, tab, semicolon,
pipe; a `.txt` with none is one value a line), `.json` (an array of objects) and `.jsonl` / `.ndjson` (an
object a line). Not UTF-8: read as Windows-1252 (what Excel writes), and said so.

- **Lines.** Each row keeps the line of the file its record starts on (blank lines and quoted line breaks
  never shift it; a JSON array counts its items).
- **Every line accounted for.** Every record that is not a row (too many values, an unclosed quote, bad JSON,
  a JSON value that is no object) is a `Refusal` with its line and why: `len(rows) + len(problems)` is the
  number of records in the file (`Table.total`). Blank lines are not records. For every file but a JSON
  array (whose items are numbered, not lines) the lines add up (`Table.unaccounted_lines()` is 0): the
  file's lines = the header's + the rows' + the refused records' + the blank ones; a record over several
  lines (a quoted line break) counts each, and is said so with its lines (`Table.multiline()`).
- **Tab-separated files as people publish them.** A quote in a tab-separated file is CSV quoting only when
  every quoted value opens and closes as CSV says (`"…"` right between tabs, a quote inside doubled) and no
  quoted value spans lines that each read as a whole row: otherwise a quote is a character of the text (a
  text that starts with `"` would swallow the lines up to the next quote), and each line is one row.
- **Header row.** Whether the first row names the columns is read from the data unless `header=` says:
  `first_row_is_data` compares each of its cells with the cells under it (a number over numbers, a text over
  texts is data). Without a header the columns are `column 1`, `column 2`, ….
- **As spreadsheets write.** A trailing empty value (an extra delimiter) is no value; a stray quote inside a
  value reads as Excel reads it (`"x"y` is `xy`).

The records come from the standard library's csv reader, the one pandas' python engine runs, driven here
record by record: pandas' readers drop a record they cannot split without saying which (the python engine
skips a record the csv module refuses when `on_bad_lines` is a callable, and neither engine reports the line
a record starts on). `Table.frame()` is the rows as a pandas DataFrame.
"""

from __future__ import annotations

import csv
import io
import json
import math
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from core.spreadsheet import unguard_cell

if TYPE_CHECKING:
    import pandas as pd

#: The file names read, by their ending.
DELIMITED = (".csv", ".tsv", ".txt")
JSON_FORMATS = (".json", ".jsonl", ".ndjson")
FORMATS = DELIMITED + JSON_FORMATS
#: What the formats are, in a user's words.
FORMATS_TEXT = (
    ".csv, .tsv or .txt (comma, tab, semicolon or pipe between values), .json (an array of objects) or .jsonl"
)
DELIMITERS = {",": "comma", "\t": "tab", ";": "semicolon", "|": "pipe"}
#: A cell longer than this is a text, not a column name.
LONG_CELL = 40
#: The rows read to sniff the delimiter (characters) and to compare the first row with (rows).
SNIFF_CHARS = 8192
HEADER_SAMPLE = 500
#: How a delimited file's quotes read: csv.QUOTE_MINIMAL (as CSV quoting) or csv.QUOTE_NONE (as characters).
Quoting = Literal[0, 3]


class UnreadableFile(ValueError):
    """A file of a kind this module does not read (its message says which kinds it does)."""


@dataclass(frozen=True)
class Refusal:
    line: int  # the line of the file (1-based) where the row starts
    reason: str
    lines: int = 1  # the file's lines the record covers (0: a refusal of the whole file, as an empty one)


@dataclass
class Table:
    columns: list[str] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)  # the file line each row starts on
    problems: list[Refusal] = field(default_factory=list)  # records that are not a row, with why
    notes: list[str] = field(default_factory=list)  # how the file was read, for the user
    #: The first row named the columns (a JSON file's keys name them: True).
    header: bool = True
    #: What the data says of the first row (None for JSON: there is no such question).
    first_row_is_data: bool | None = None
    spans: list[int] = field(default_factory=list)  # the file lines each row covers (1 but for line breaks)
    #: The file's lines (None for a JSON array, whose rows are its items), its blank ones, the header's.
    line_count: int | None = None
    blank_lines: int = 0
    header_lines: int = 0

    @property
    def total(self) -> int:
        """The file's records (header row and blank lines not counted): each is a row or a problem."""
        return len(self.rows) + len(self.problems)

    def unaccounted_lines(self) -> int:
        """The file's lines that are neither the header's, a row's, a refused record's nor blank: 0 by
        construction (a JSON array has no lines to account for: 0)."""
        if self.line_count is None:
            return 0
        used = self.header_lines + self.blank_lines + sum(self.spans) + sum(p.lines for p in self.problems)
        return self.line_count - used

    def multiline(self) -> list[tuple[int, int]]:
        """The rows read over several lines of the file (quoted line breaks): their first and last lines."""
        return [(line, line + n - 1) for line, n in zip(self.lines, self.spans, strict=True) if n > 1]

    def frame(self) -> pd.DataFrame:
        """The rows as a DataFrame, in the file's column order."""
        import pandas as pd

        return pd.DataFrame(self.rows, columns=self.columns)

    def __repr__(self) -> str:
        # One line however long the file (the dataclass' own repr prints every row): its shape, then .frame().
        shown = ", ".join(self.columns[:8]) + (
            f", … ({len(self.columns)} in all)" if len(self.columns) > 8 else ""
        )
        refused = f", {len(self.problems):,} records refused (.problems)" if self.problems else ""
        size = f"{len(self.rows):,} rows × {len(self.columns)} columns"
        return f"Table({size}: {shown}{refused}; .frame() for a DataFrame)"

    def _repr_html_(self) -> str:
        html: str = self.frame().to_html(max_rows=10)
        return html


def format_problem(name: str) -> str | None:
    """Why a file of this name is not read, or None when it is."""
    suffix = Path(name).suffix.lower()
    if suffix in FORMATS:
        return None
    what = f"a {suffix} file" if suffix else "a file without an ending such as .csv"
    hint = " (a spreadsheet: save it as CSV first)" if suffix in (".xls", ".xlsx", ".ods", ".numbers") else ""
    return f"{Path(name).name} is {what}, which cannot be read{hint}: upload {FORMATS_TEXT}."


def read_file(path: str | Path, *, header: bool | None = None) -> Table:
    """`read_table` of a file on disk."""
    path = Path(path)
    return read_table(path.name, path.read_bytes(), header=header)


def read_table(name: str, data: bytes, *, header: bool | None = None) -> Table:
    """The rows of a file named `name` (its ending says the format) holding `data`.

    `header`: whether the first row of a delimited file names the columns; None reads it from the data.
    Raises `UnreadableFile` for a file of another kind."""
    problem = format_problem(name)
    if problem is not None:
        raise UnreadableFile(problem)
    text, note = _decode(data)
    suffix = Path(name).suffix.lower()
    table = _read_json(text) if suffix in JSON_FORMATS else _read_delimited(text, suffix, header)
    if note:
        table.notes.insert(0, note)
    return table


def _decode(data: bytes) -> tuple[str, str | None]:
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError:
        note = "Not UTF-8: read as Windows-1252 (what Excel writes); save it as UTF-8 if letters look wrong."
        return data.removeprefix(b"\xef\xbb\xbf").decode("cp1252", errors="replace"), note


def _physical_lines(text: str) -> list[str]:
    """The file's lines as the csv reader counts them (a line ends at \\n, \\r or \\r\\n)."""
    return io.StringIO(text, newline="").readlines()


# -- delimited text ------------------------------------------------------------------------------------------


def _sniff(text: str, suffix: str) -> str:
    """The delimiter, or "" for one value a line (a `.txt` in which none is found).

    The first delimiter that splits (nearly) every sampled line into the same number of values wins, the
    file's own (`.csv` comma, `.tsv` tab) first, then tab before comma: texts hold commas, rarely tabs. A
    tab-separated file whose last column lists ratings as "[-1, 0, 2]" splits evenly on commas too, and
    the csv module's sniffer, which prefers the comma, read it as ten columns of cut-up values."""
    sample, cut = text[:SNIFF_CHARS], len(text) > SNIFF_CHARS
    own = {".csv": ",", ".tsv": "\t"}.get(suffix)
    for delimiter in dict.fromkeys([*([own] if own else []), "\t", *DELIMITERS]):
        if _splits_evenly(sample, delimiter, cut):
            return delimiter
    try:
        return csv.Sniffer().sniff(sample, delimiters="".join(DELIMITERS)).delimiter
    except csv.Error:
        return own or ""


def _splits_evenly(sample: str, delimiter: str, cut: bool = True) -> bool:
    """Whether at least 95 % of the sample's records (its last left out when the sample is `cut` short of
    the file; at least two) have the same number of values, two or more. Tabs are counted with quotes as
    CSV quoting and without (`_quoting`: a published tab-separated file's quotes are mostly characters)."""
    quotings: tuple[Quoting, ...] = (
        (csv.QUOTE_MINIMAL, csv.QUOTE_NONE) if delimiter == "\t" else (csv.QUOTE_MINIMAL,)
    )
    for quoting in quotings:
        reader = csv.reader(io.StringIO(sample, newline=""), delimiter=delimiter, quoting=quoting)
        records = [r for r in reader if any(c.strip() for c in r)][: -1 if cut else None]
        if len(records) < 2:
            continue
        count, n = Counter(len(r) for r in records).most_common(1)[0]
        if count >= 2 and n >= 0.95 * len(records):
            return True
    return False


@dataclass(frozen=True)
class _Record:
    line: int  # the line it starts on
    lines: int  # the lines it covers
    cells: list[str]

    @property
    def blank(self) -> bool:
        return not any(cell.strip() for cell in self.cells)


def _quoting(text: str, delimiter: str) -> tuple[Quoting, str | None]:
    """How a delimited file's quotes read (`csv.QUOTE_MINIMAL`: as CSV quoting; `csv.QUOTE_NONE`: as
    characters), and a note for the analyst when a tab-separated file's quotes are characters.

    A comma's (or semicolon's, pipe's) file means quotes as CSV quoting. A tab-separated file as people
    publish it rarely does: a text that starts with `"` read as quoting swallows every line up to the next
    quote. So its quotes are quoting only when every quoted value is balanced (opens right after a tab or a
    line's start, closes right before one, a quote inside doubled: the csv module's strict reading) and no
    quoted value spans lines that each (blank ones aside) split into as many values as the file's records have
    (then the quotes are stray: one opens a text, another ends one some lines below)."""
    if delimiter != "\t" or '"' not in text:
        return csv.QUOTE_MINIMAL, None
    unquoted = "Quotes are read as part of the texts (not CSV quoting): "
    try:
        quoted = _read_records(text, delimiter, csv.QUOTE_MINIMAL, strict=True)
    except csv.Error as exc:
        return csv.QUOTE_NONE, unquoted + _plain_csv_error(exc) + "."
    lines = _physical_lines(text)
    widths = Counter(len(r.cells) for r in quoted if not r.blank).most_common(1)
    width = widths[0][0] if widths else 1
    for record in quoted:
        span = lines[record.line - 1 : record.line - 1 + record.lines]
        # Blank lines between rows are no evidence either way: a stray quote swallows them too.
        if record.lines > 1 and all(len(line.split("\t")) >= width for line in span if line.strip()):
            last = record.line + record.lines - 1
            why = (
                f"a quote on line {record.line} would join lines {record.line}–{last}, each a row of its own."
            )
            return csv.QUOTE_NONE, unquoted + why
    return csv.QUOTE_MINIMAL, None


def _read_records(text: str, delimiter: str, quoting: Quoting, *, strict: bool = False) -> list[_Record]:
    """Every record of the file with its lines, blank ones included; `strict` raises `csv.Error` on the
    first quote that is not CSV quoting (any other reading lists such a record in `_records`)."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, quoting=quoting, strict=strict)
    out: list[_Record] = []
    for cells in reader:
        start = out[-1].line + out[-1].lines if out else 1
        out.append(_Record(start, reader.line_num - start + 1, cells))
    return out


def _records(text: str, delimiter: str, quoting: Quoting) -> tuple[list[_Record], list[Refusal], int]:
    """Each record that is not blank, with its lines; the ones that cannot be split; the blank lines."""
    out: list[_Record] = []
    blank = 0
    if not delimiter:  # one value a line, quotes and all
        for line, raw in enumerate(_physical_lines(text), start=1):
            value = raw.rstrip("\r\n")
            if value.strip():
                out.append(_Record(line, 1, [value]))
            else:
                blank += 1
        return out, [], blank
    problems: list[Refusal] = []
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, quoting=quoting)
    while True:
        start = reader.line_num + 1  # the record about to be read starts on the next physical line
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:  # a value over the csv module's size limit
            problems.append(
                Refusal(start, f"not readable: {_plain_csv_error(exc)}", reader.line_num - start + 1)
            )
            continue
        record = _Record(start, reader.line_num - start + 1, cells)
        if record.blank:
            blank += record.lines
        else:
            out.append(record)
    # The csv reader (lenient, as Excel is) reads an unclosed quote to the end of the file as one value.
    if quoting != csv.QUOTE_NONE and out and _quote_left_open(text, out[-1].line, delimiter):
        last = out.pop()
        end = last.line + last.lines - 1
        why = (
            f'a quote (") opened here is never closed, so lines {last.line}–{end} read as one value: close it'
        )
        problems.append(Refusal(last.line, why, last.lines))
    return out, problems, blank


def _plain_csv_error(exc: csv.Error) -> str:
    """The csv module's message in an analyst's words ("'\t' expected after '\"'" means nothing to them)."""
    said = str(exc)
    if "expected after" in said:
        return (
            'a text starts with a quote (") and goes on after the next quote, which CSV would read as the '
            'end of the value (a quote inside a quoted text is written twice: "")'
        )
    if "unexpected end of data" in said:
        return 'a quote (") opened in a text is never closed'
    if "field larger than field limit" in said:
        return "a value is longer than the file reader takes (131,072 characters)"
    if "NUL" in said:
        return "the file holds NUL characters: is it a text file?"
    return said


def _quote_left_open(text: str, line: int, delimiter: str) -> bool:
    tail = "".join(_physical_lines(text)[line - 1 :])
    try:
        for _ in csv.reader(io.StringIO(tail, newline=""), delimiter=delimiter, strict=True):
            pass
    except csv.Error as exc:
        return "unexpected end of data" in str(exc)
    return False


def _read_delimited(text: str, suffix: str, header: bool | None) -> Table:
    out = Table(line_count=len(_physical_lines(text)))
    if not text.strip():
        why = "the file is empty: expected one row a line, with or without a header row"
        out.problems.append(Refusal(1, why, 0))
        out.blank_lines = out.line_count or 0
        return out
    delimiter = _sniff(text, suffix)
    if delimiter == "":
        out.notes.append("No delimiter found: one value a line.")
    elif delimiter != ",":
        out.notes.append(f"Read as {DELIMITERS[delimiter]}-separated values.")
    quoting, note = _quoting(text, delimiter) if delimiter else (csv.QUOTE_NONE, None)
    if note:
        out.notes.append(note)
    records, out.problems, out.blank_lines = _records(text, delimiter, quoting)
    if not records:
        return out
    # A list of texts, one a line, starts with a text unless its first line reads as a name.
    sample = [r.cells for r in records[:HEADER_SAMPLE]]
    out.first_row_is_data = first_row_is_data(sample, tie=delimiter == "")
    out.header = not out.first_row_is_data if header is None else header
    if out.header:
        out.columns = _column_names(records[0].cells)
        out.header_lines = records[0].lines
        body = records[1:]
        beyond = "than the header has columns"
    else:
        width = len(records[0].cells)
        out.columns = [f"column {i}" for i in range(1, width + 1)]
        body = records
        beyond = "than the first row"
        if out.first_row_is_data and header is None and delimiter:  # one text a line: said already
            named = (
                f"columns are named column 1 to column {width}" if width > 1 else "column is named column 1"
            )
            out.notes.append(
                f"The first row reads as data, not column names: it is kept as a row, and the {named}."
            )
    width = len(out.columns)
    for record in body:
        cells, used = record.cells, len(record.cells)
        while used > width and not cells[used - 1].strip():
            used -= 1  # a trailing empty value (a spreadsheet's extra delimiter) is no value
        if used > width:
            out.problems.append(Refusal(record.line, f"{used - width} more value(s) {beyond}", record.lines))
            continue
        # A spreadsheet's guard against formulas, which our own CSV downloads add, comes off again.
        padded: list[str | None] = [*map(unguard_cell, cells[:width]), *[None] * (width - len(cells))]
        out.rows.append(dict(zip(out.columns, padded, strict=True)))
        out.lines.append(record.line)
        out.spans.append(record.lines)
    out.problems.sort(key=lambda p: p.line)
    if spanning := out.multiline():
        shown = ", ".join(f"{a}–{b}" for a, b in spanning[:10])
        more = f" and {len(spanning) - 10:,} more" if len(spanning) > 10 else ""
        out.notes.append(
            f"{len(spanning):,} row(s) span several lines (a quoted value holds a line break): lines "
            f"{shown}{more}."
        )
    return out


def _column_names(cells: list[str]) -> list[str]:
    """The header's names, stripped; a blank one is named by its place, and a repeated one numbered as
    pandas numbers it (the second `score` is `score.1`)."""
    names: list[str] = []
    for i, cell in enumerate(cells, start=1):
        name = cell.strip() or f"column {i}"
        base, n = name, 1
        while name in names:
            name, n = f"{base}.{n}", n + 1
        names.append(name)
    return names


def first_row_is_data(rows: Sequence[Sequence[str]], *, tie: bool = False) -> bool:
    """Whether a file's first row is a row of data rather than column names.

    Each column votes by comparing its first cell with the cells under it: under a column of numbers, a
    number is data and anything else a name; over free text, a text (long, five words or more, or ending as
    a sentence with `.` or `!`) is data and a short name over long texts a name; over a few repeated values
    (labels), one of them is data and anything else a name. A file of one row: a number or a text is data.
    More votes for data than for names make it data; a tie is `tie` (a header, unless told)."""
    if not rows:
        return tie
    first, rest = rows[0], rows[1:]
    votes = 0
    for j, raw in enumerate(first):
        cell = raw.strip()
        if cell:
            votes += _vote(cell, [r[j].strip() for r in rest if j < len(r) and r[j].strip()])
    return votes > 0 or (votes == 0 and tie)


def _vote(cell: str, under: list[str]) -> int:
    """+1: the cell reads as data; -1: as a column name; 0: cannot tell."""
    if not under:
        return 1 if number(cell) is not None or _text_like(cell) else 0
    if sum(number(v) is not None for v in under) >= 0.9 * len(under):
        return 1 if number(cell) is not None else -1
    long_texts = statistics.median(len(v) for v in under) > LONG_CELL
    if long_texts or len(set(under)) > len(under) / 2:  # free text (or ids): each value its own
        return 1 if _text_like(cell) else (-1 if long_texts else 0)
    return 1 if cell in set(under) else -1


def _text_like(cell: str) -> bool:
    return len(cell) > LONG_CELL or len(cell.split()) >= 5 or cell.endswith((".", "!"))


# -- JSON -------------------------------------------------------------------------------------------------


def _read_json(text: str) -> Table:
    out = Table()
    columns: dict[str, None] = {}
    stripped = text.strip()
    numbered: list[tuple[int, object]] = []
    out.line_count = len(_physical_lines(text))
    if not stripped:
        out.problems.append(
            Refusal(1, "the file is empty: expected an array of objects, or an object a line", 0)
        )
        out.blank_lines = out.line_count
        return out
    if stripped.startswith("["):  # a JSON array: items are numbered, not lines
        out.line_count = None  # its rows are items, not lines
        try:
            items = json.loads(stripped)
        except json.JSONDecodeError as exc:
            out.problems.append(Refusal(exc.lineno, f"invalid JSON: {exc.msg}"))
            return out
        numbered = list(enumerate(items, start=1))
        out.notes.append("A JSON array: row numbers count its items.")
    else:
        for i, raw in enumerate(_physical_lines(text), start=1):
            if not raw.strip():
                out.blank_lines += 1
                continue
            try:
                numbered.append((i, json.loads(raw)))
            except json.JSONDecodeError as exc:
                out.problems.append(Refusal(i, f"invalid JSON: {exc.msg}"))
    for line, item in numbered:
        if not isinstance(item, dict):
            out.problems.append(Refusal(line, f"not an object but {type(item).__name__}"))
            continue
        row = {str(k): v for k, v in item.items()}
        columns.update(dict.fromkeys(row))
        out.rows.append(row)
        out.lines.append(line)
        out.spans.append(1)
    out.columns = list(columns)
    out.problems.sort(key=lambda p: p.line)
    return out


# -- cells and columns ------------------------------------------------------------------------------------


def number(value: Any) -> float | None:
    """A cell as a finite number (a JSON `true` is 1), else None."""
    if isinstance(value, bool):
        return float(value)
    try:
        result = float(str(value).strip())
    except (TypeError, ValueError):
        return None
    return result if math.isfinite(result) else None


def blank(value: Any) -> bool:
    return value is None or not str(value).strip()


def _first_values(table: Table, column: str) -> list[Any]:
    """A column's first 500 values, blanks left out: what the guesses about a column read."""
    return [row.get(column) for row in table.rows[:HEADER_SAMPLE] if not blank(row.get(column))]


def numeric_share(table: Table, column: str) -> float:
    """The share of a column's first 500 values (blanks left out) that are numbers."""
    values = _first_values(table, column)
    return sum(number(v) is not None for v in values) / len(values) if values else 0.0


def mean_length(table: Table, column: str) -> float:
    values = [str(v) for v in _first_values(table, column)]
    return sum(map(len, values)) / len(values) if values else 0.0


def text_column(table: Table) -> str | None:
    """The column of texts: the one named `text`, else the one of the longest strings among those not
    mostly numbers (an id such as `213_32` is a string too, but a short one) and mostly with a letter (a
    list of ratings such as `[-1, 0, 2]` is long but no text). None without columns."""
    strings = [c for c in table.columns if numeric_share(table, c) < 0.9] or table.columns
    if not strings:
        return None
    named = next((c for c in strings if c.strip().lower() == "text"), None)
    worded = [c for c in strings if letter_share(table, c) >= 0.5] or strings
    return named or max(worded, key=lambda c: mean_length(table, c))


def letter_share(table: Table, column: str) -> float:
    """The share of a column's first 500 values (blanks left out) with a letter in them."""
    values = [str(v) for v in _first_values(table, column)]
    return sum(any(ch.isalpha() for ch in v) for v in values) / len(values) if values else 0.0


def column_texts(table: Table, column: str) -> tuple[list[tuple[int, str]], list[Refusal]]:
    """The texts of `column`, each with the index of its row; and every record not used with its line and
    why (the reader's problems, and the rows without a text), in the file's order."""
    texts: list[tuple[int, str]] = []
    refused = list(table.problems)
    for i, (row, line) in enumerate(zip(table.rows, table.lines, strict=True)):
        value = row.get(column)
        if blank(value):
            refused.append(Refusal(line, f"no text in {column}"))
        else:
            texts.append((i, str(value)))
    return texts, sorted(refused, key=lambda r: r.line)


def row_metadata(row: dict[str, Any], keep: Sequence[str]) -> dict[str, Any] | None:
    """The `keep` columns of a row as its text's metadata (docs/api.md "Text metadata"): a number, true or
    false as it is, anything else as its text, blank cells left out; None when none is left."""
    out: dict[str, Any] = {}
    for column in keep:
        value = row.get(column)
        if blank(value):
            continue
        plain = isinstance(value, bool | int) or (isinstance(value, float) and math.isfinite(value))
        out[column] = value if plain else str(value).strip()
    return out or None
