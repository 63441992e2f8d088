"""From any CSV/JSONL file of labelled texts to samples: the analyst picks the columns and how a label maps to
quality. Plain Python (no Streamlit), so the Import tab and the tests run the same rules.

`read_table` reads the file as it is, keeping each row's line in the file (the line its record starts on, so
blank lines and quoted line breaks never shift it). `map_rows` turns rows into samples with a `Mapping`:

- `as_is`: the label is already a quality in [0, 1];
- `threshold`: a label at or above `threshold` is the positive pole (1), below it the negative (0);
- `quantiles`: the top `share` of labels is positive, the bottom `share` negative, the middle is left out
  (per trait, so each trait's own spread decides; `share` 0.25 = quartiles).

`higher_is_positive=False` turns the scale round (for a label where a high value is the negative pole).
Rows that cannot be used become `Refusal`s with the reason; rows the quantile rule leaves out are counted.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

DELIMITERS = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}
RULES = ("as_is", "threshold", "quantiles")
Rule = Literal["as_is", "threshold", "quantiles"]


@dataclass(frozen=True)
class Refusal:
    line: int  # the line of the file (1-based) where the row starts
    reason: str


@dataclass
class Table:
    columns: list[str] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)  # the file line each row starts on
    problems: list[Refusal] = field(default_factory=list)  # lines that are not a row at all
    notes: list[str] = field(default_factory=list)  # how the file was read, for the user


@dataclass(frozen=True)
class Mapping:
    text: str  # the column holding the text
    label: str  # the column holding the label
    trait_column: str | None = None  # a column naming each row's trait (key or name) …
    trait: str | None = None  # … or one trait for every row
    rule: Rule = "as_is"
    threshold: float = 0.5
    share: float = 0.25  # quantiles: the top and bottom share kept
    higher_is_positive: bool = True
    source_url: str | None = None  # an optional column of source links


@dataclass
class Mapped:
    samples: list[dict[str, Any]] = field(
        default_factory=list
    )  # {"trait", "text", "quality"[, "source_url"]}
    lines: list[int] = field(default_factory=list)  # the file line of each sample
    refused: list[Refusal] = field(default_factory=list)
    left_out: int = 0  # rows in the middle band of the quantile rule

    def counts(self) -> list[dict[str, Any]]:
        """Per trait: how many samples fall on each pole (and between, for qualities strictly inside 0-1)."""
        tally: dict[str, Counter[str]] = {}
        for s in self.samples:
            q = s["quality"]
            where = "positive" if q >= 1.0 else "negative" if q <= 0.0 else "between"
            tally.setdefault(s["trait"], Counter())[where] += 1
        return [
            {"trait": t, "negative": c["negative"], "between": c["between"], "positive": c["positive"]}
            for t, c in tally.items()
        ]


def read_table(name: str, data: bytes) -> Table:
    """The rows of a `.csv` (header row; delimiter sniffed), `.jsonl`/`.ndjson` or `.json` (an array) file."""
    text = data.decode("utf-8-sig", errors="replace")
    if name.lower().endswith((".jsonl", ".ndjson", ".json")):
        return _read_json(text)
    return _read_csv(text)


def _read_csv(text: str) -> Table:
    out = Table()
    if not text.strip():
        out.problems.append(Refusal(1, "the file is empty: expected a header row, then one row a line"))
        return out
    try:  # a semicolon- or tab-separated export read as commas would make each whole row one column
        delimiter = csv.Sniffer().sniff(text[:8192], delimiters="".join(DELIMITERS)).delimiter
    except csv.Error:
        delimiter = ","
    if delimiter != ",":
        out.notes.append(f"Read as {DELIMITERS[delimiter]}-separated values.")
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header: list[str] | None = None
    while True:
        start = reader.line_num + 1  # the record about to be read starts on the next physical line
        try:
            record = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            out.problems.append(Refusal(start, f"not readable as CSV: {exc}"))
            continue
        if not record or not any(cell.strip() for cell in record):
            continue  # a blank line: no row, and no shift of the lines after it
        if header is None:
            header = [h.strip() for h in record]
            out.columns = [h for h in header if h]
            continue
        if len(record) > len(header):
            extra = len(record) - len(header)
            out.problems.append(Refusal(start, f"{extra} more value(s) than the header has columns"))
            continue
        out.rows.append({h: v for h, v in zip(header, record, strict=False) if h})
        out.lines.append(start)
    return out


def _read_json(text: str) -> Table:
    out = Table()
    columns: dict[str, None] = {}
    stripped = text.strip()
    if stripped.startswith("["):  # a JSON array: items are numbered, not lines
        try:
            items = json.loads(stripped)
        except json.JSONDecodeError as exc:
            out.problems.append(Refusal(exc.lineno, f"invalid JSON: {exc.msg}"))
            return out
        numbered = list(enumerate(items, start=1))
        out.notes.append("A JSON array: row numbers count its items.")
    else:
        numbered = []
        for i, raw in enumerate(text.splitlines(), start=1):
            if not raw.strip():
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
    out.columns = list(columns)
    return out


def guess_column(columns: list[str], *names: str) -> str | None:
    """The first column whose name is one of `names` (case-insensitive), for the pickers' defaults."""
    lowered = {c.strip().lower(): c for c in columns}
    return next((lowered[n] for n in names if n in lowered), None)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    try:
        number = float(str(value).strip())
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _blank(value: Any) -> bool:
    return value is None or not str(value).strip()


def map_rows(table: Table, mapping: Mapping) -> Mapped:
    """Samples from `table`'s rows under `mapping`; every row not used is refused (with why) or left out."""
    out = Mapped()
    kept: list[tuple[int, str, str, float, Any]] = []  # (line, trait, text, label value, source url)
    for row, line in zip(table.rows, table.lines, strict=True):
        trait = row.get(mapping.trait_column) if mapping.trait_column else mapping.trait
        text, label = row.get(mapping.text), row.get(mapping.label)
        missing = [
            name for name, value in (("text", text), ("label", label), ("trait", trait)) if _blank(value)
        ]
        if missing:
            out.refused.append(Refusal(line, f"no {', '.join(missing)}"))
            continue
        value = _number(label)
        if value is None:
            out.refused.append(Refusal(line, f"label {str(label)!r} is not a number"))
            continue
        url = row.get(mapping.source_url) if mapping.source_url else None
        kept.append((line, str(trait).strip(), str(text), value, url))
    qualities = _qualities(kept, mapping, out)
    for (line, trait, text, _, url), quality in zip(kept, qualities, strict=True):
        if quality is None:
            continue
        sample: dict[str, Any] = {"trait": trait, "text": text, "quality": quality}
        if not _blank(url):
            sample["source_url"] = str(url).strip()
        out.samples.append(sample)
        out.lines.append(line)
    return out


def _qualities(
    kept: list[tuple[int, str, str, float, Any]], mapping: Mapping, out: Mapped
) -> list[float | None]:
    sign = 1.0 if mapping.higher_is_positive else -1.0
    if mapping.rule == "as_is":
        result: list[float | None] = []
        for line, _, _, value, _ in kept:
            if not 0.0 <= value <= 1.0:
                out.refused.append(
                    Refusal(line, f"label {value:g} is outside 0–1: map it with a threshold or quantiles")
                )
                result.append(None)
            else:
                result.append(value if mapping.higher_is_positive else 1.0 - value)
        return result
    if mapping.rule == "threshold":
        return [1.0 if sign * value >= sign * mapping.threshold else 0.0 for *_, value, _ in kept]
    if mapping.rule != "quantiles":
        raise ValueError(f"unknown rule {mapping.rule!r}: one of {', '.join(RULES)}")
    if not 0.0 < mapping.share <= 0.5:
        raise ValueError("the quantile share is above 0 and at most 0.5 (top and bottom halves)")
    result = [None] * len(kept)
    by_trait: dict[str, list[int]] = {}
    for i, (_, trait, *_rest) in enumerate(kept):
        by_trait.setdefault(trait, []).append(i)
    for rows in by_trait.values():
        values = np.asarray([sign * kept[i][3] for i in rows])
        low, high = np.quantile(values, [mapping.share, 1.0 - mapping.share])
        for i, v in zip(rows, values, strict=True):
            # A label on both cut points (heavy ties) is ambiguous: left out rather than put on one pole.
            positive, negative = v >= high, v <= low
            if positive != negative:
                result[i] = 1.0 if positive else 0.0
            else:
                out.left_out += 1
    return result


SAMPLE_FILE = Mapping(text="text", label="quality", trait_column="trait", source_url="source_url")


def read_samples(name: str, data: bytes) -> tuple[Mapped, list[Refusal]]:
    """A file already in sample columns (`trait,text,quality[,source_url]`), as the evaluation set takes it:
    the samples, and every line not used (a missing column is one refusal naming the expected header)."""
    table = read_table(name, data)
    missing = [c for c in ("trait", "text", "quality") if table.rows and c not in table.columns]
    if missing:
        header = f"expected trait,text,quality[,source_url] (no {', '.join(missing)} column)"
        return Mapped(), [*table.problems, Refusal(1, header)]
    mapped = map_rows(table, SAMPLE_FILE)
    return mapped, sorted(table.problems + mapped.refused, key=lambda r: r.line)
