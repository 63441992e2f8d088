"""Sample files out (CSV, JSONL) and the grid's refused rows; files in are read by `core.tables`."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from typing import Any

from core.spreadsheet import guarded_rows

EXPORT_COLUMNS = (
    "id",
    "trait",
    "text",
    "quality",
    "provenance",
    "source_url",
    "source_id",
    "created_at",
    "metadata",  # the extra columns kept beside the text: an object (JSON text in a CSV cell)
)


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
    """The samples as a spreadsheet's CSV: a text a formula would start with is guarded
    (core/spreadsheet.py)."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=EXPORT_COLUMNS, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(guarded_rows({k: _cell(s.get(k)) for k in EXPORT_COLUMNS} for s in samples))
    return buf.getvalue()


def _cell(value: object) -> object:
    """A CSV cell: an object (a text's metadata) as its JSON, anything else as it is."""
    return json.dumps(value, ensure_ascii=False) if isinstance(value, dict) else value


def to_jsonl(samples: Iterable[dict[str, Any]]) -> str:
    return "".join(
        json.dumps({k: s.get(k) for k in EXPORT_COLUMNS}, ensure_ascii=False) + "\n" for s in samples
    )
