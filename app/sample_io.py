"""Sample files in and out: CSV or JSONL rows of `trait, text, quality[, source_url]`."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

COLUMNS = ("trait", "text", "quality", "source_url")
EXPECTED_HEADER = "trait,text,quality[,source_url]"
DELIMITERS = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}
EXPORT_COLUMNS = ("id", "trait", "text", "quality", "provenance", "source_url", "created_at")


@dataclass
class ParsedFile:
    rows: list[dict[str, Any]] = field(default_factory=list)  # ready to send
    lines: list[int] = field(default_factory=list)  # source line of each row, for error messages
    problems: list[dict[str, Any]] = field(default_factory=list)  # {"line", "message"}, never sent
    notes: list[str] = field(default_factory=list)  # how the file was read (e.g. its delimiter), for the user


def _clean(raw: dict[str, Any], line: int, out: ParsedFile) -> None:
    row = {k.strip().lower(): v for k, v in raw.items() if k is not None}
    missing = [c for c in ("trait", "text", "quality") if row.get(c) in (None, "")]
    if missing:
        out.problems.append({"line": line, "message": f"missing {', '.join(missing)}"})
        return
    try:
        quality = float(row["quality"])
    except (TypeError, ValueError):
        out.problems.append({"line": line, "message": f"quality {row['quality']!r} is not a number"})
        return
    sample: dict[str, Any] = {
        "trait": str(row["trait"]).strip(),
        "text": str(row["text"]),
        "quality": quality,
    }
    if row.get("source_url"):
        sample["source_url"] = str(row["source_url"])
    out.rows.append(sample)
    out.lines.append(line)


def parse_samples(name: str, data: bytes) -> ParsedFile:
    """Rows of a `.csv` (header row) or `.jsonl` / `.json` file; bad lines become problems, not errors."""
    text = data.decode("utf-8-sig", errors="replace")
    out = ParsedFile()
    if name.lower().endswith((".jsonl", ".ndjson", ".json")):
        stripped = text.strip()
        if stripped.startswith("["):  # a JSON array is accepted too
            try:
                items = json.loads(stripped)
            except json.JSONDecodeError as exc:
                out.problems.append({"line": exc.lineno, "message": f"invalid JSON: {exc.msg}"})
                return out
            for i, item in enumerate(items, start=1):
                if isinstance(item, dict):
                    _clean(item, i, out)
                else:
                    out.problems.append({"line": i, "message": "not an object"})
            return out
        for i, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                out.problems.append({"line": i, "message": f"invalid JSON: {exc.msg}"})
                continue
            if isinstance(item, dict):
                _clean(item, i, out)
            else:
                out.problems.append({"line": i, "message": "not an object"})
        return out
    return _parse_csv(text, out)


def _parse_csv(text: str, out: ParsedFile) -> ParsedFile:
    if not text.strip():
        out.problems.append(
            {
                "line": 1,
                "message": f"the file is empty: expected a header row `{EXPECTED_HEADER}`, "
                "then one sample a line",
            }
        )
        return out
    try:  # a semicolon- or tab-separated export read as commas would send whole rows as text
        delimiter = csv.Sniffer().sniff(text[:8192], delimiters="".join(DELIMITERS)).delimiter
    except csv.Error:
        delimiter = ","
    if delimiter != ",":
        out.notes.append(f"Read as {DELIMITERS[delimiter]}-separated values.")
    reader = csv.DictReader(io.StringIO(text), delimiter=delimiter)
    header = [h.strip().lower() for h in (reader.fieldnames or []) if h is not None]
    missing = [c for c in ("trait", "text", "quality") if c not in header]
    if missing:
        out.problems.append(
            {
                "line": 1,
                "message": f"the header is `{delimiter.join(reader.fieldnames or [])}`; expected "
                f"`{EXPECTED_HEADER}` (no {', '.join(missing)} column)",
            }
        )
        return out
    for i, raw in enumerate(reader, start=2):  # line 1 is the header
        _clean(raw, i, out)
    return out


def refused_rows(
    payload: list[dict[str, Any]], errors: Iterable[Any], first_row: int
) -> list[dict[str, Any]]:
    """The grid rows the service refused, to keep in the grid marked with why.

    `errors` are the import report's (`index` into `payload`, `message`); `first_row` is how many grid rows
    come before the saved ones, so `problem` names the row number the user saw (1-based).
    """
    return [
        {
            **payload[e.index],
            "provenance": "not saved",
            "problem": f"grid row {first_row + e.index + 1}: {e.message}",
        }
        for e in errors
    ]


def unknown_trait_hint(message: str, trait_keys: Iterable[str]) -> str:
    """For the service's "unknown trait" rejection: the model's trait keys, so the user can fix the file."""
    keys = list(trait_keys)
    if "unknown trait" in message.lower() and keys:
        return f" (this model's trait keys: {', '.join(keys)})"
    return ""


def to_csv(samples: Iterable[dict[str, Any]]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=EXPORT_COLUMNS, extrasaction="ignore")
    writer.writeheader()
    for s in samples:
        writer.writerow({k: s.get(k) for k in EXPORT_COLUMNS})
    return buf.getvalue()


def to_jsonl(samples: Iterable[dict[str, Any]]) -> str:
    return "".join(
        json.dumps({k: s.get(k) for k in EXPORT_COLUMNS}, ensure_ascii=False) + "\n" for s in samples
    )
