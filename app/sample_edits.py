"""The Samples grid's edits as API calls: PATCH edited stored rows, DELETE removed ones, add new rows.

`st.data_editor` reports its changes as `{"edited_rows": {row: {column: value}}, "added_rows": [...],
"deleted_rows": [row]}` against the frame it was given; the frame holds the page's stored samples first, then
rows refused by the last save (kept so they can be fixed). Each refused edit is reported against its row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from core.client import ApiError, Client

EDITABLE = ("trait", "text", "quality")  # what PATCH /samples/{id} can change


@dataclass
class GridChanges:
    patches: dict[int, dict[str, Any]] = field(default_factory=dict)  # sample id -> changed fields
    deletes: list[int] = field(default_factory=list)
    new_rows: list[dict[str, Any]] = field(default_factory=list)  # trait, text, quality, source_url
    problems: list[dict[str, Any]] = field(default_factory=list)  # edits refused before any call

    @property
    def empty(self) -> bool:
        return not (self.patches or self.deletes or self.new_rows or self.problems)


def _value(v: Any) -> Any:
    """A cell as JSON: NaN/NaT/None become None, numpy scalars plain Python."""
    if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA:
        return None
    return v.item() if hasattr(v, "item") else v


def grid_changes(frame: pd.DataFrame, stored_count: int, state: dict[str, Any] | None) -> GridChanges:
    """What the editor's `state` asks of the service, given the `frame` it edited."""
    state = state or {}
    edited = {int(i): e for i, e in (state.get("edited_rows") or {}).items()}
    deleted = {int(i) for i in state.get("deleted_rows") or []}
    out = GridChanges()
    for i in range(len(frame)):
        row = frame.iloc[i]
        if i < stored_count:
            sid = int(row["id"])
            if i in deleted:
                out.deletes.append(sid)
                continue
            change = edited.get(i, {})
            fields = {
                k: _value(v) for k, v in change.items() if k in EDITABLE and _value(v) != _value(row[k])
            }
            if "source_url" in change and _value(change["source_url"]) != _value(row["source_url"]):
                out.problems.append(
                    {
                        "id": sid,
                        "text": str(row["text"]),
                        "problem": "source_url of a stored sample cannot change",
                    }
                )
            if fields:
                out.patches[sid] = fields
        elif i not in deleted:  # a refused row kept from the last save, perhaps fixed since
            merged = {k: _value(row.get(k)) for k in ("trait", "text", "quality", "source_url")}
            merged.update({k: _value(v) for k, v in edited.get(i, {}).items() if k in merged})
            out.new_rows.append(merged)
    for added in state.get("added_rows") or []:
        new = {k: _value(added.get(k)) for k in ("trait", "text", "quality", "source_url")}
        if any(v not in (None, "") for v in new.values()):  # an untouched blank row is not a sample
            out.new_rows.append(new)
    return out


@dataclass
class SaveReport:
    edited: int = 0
    merged: int = 0  # edits that made a sample identical to a stored one (the stored one is kept)
    deleted: int = 0
    problems: list[dict[str, Any]] = field(default_factory=list)  # {"id", "text", "problem"} per refused edit


def apply_edits(client: Client, handle: str, changes: GridChanges, texts: dict[int, str]) -> SaveReport:
    """PATCH and DELETE stored samples one by one, so one refused edit does not stop the others."""
    report = SaveReport(problems=list(changes.problems))
    for sid, fields in changes.patches.items():
        try:
            kept = client.update_sample(handle, sid, **fields)
        except ApiError as exc:
            report.problems.append({"id": sid, "text": texts.get(sid, ""), "problem": exc.message})
            continue
        report.edited += 1
        report.merged += int(kept.id != sid)
    for sid in changes.deletes:
        try:
            client.delete_sample(handle, sid)
        except ApiError as exc:
            report.problems.append({"id": sid, "text": texts.get(sid, ""), "problem": exc.message})
            continue
        report.deleted += 1
    return report


def save_message(report: SaveReport, added: int, refused: list[dict[str, Any]]) -> tuple[str, bool]:
    """What one save did, and whether all of it went in (else the page shows a warning)."""
    counts = ((report.edited, "edited"), (report.deleted, "deleted"), (added, "added"))
    done = [f"{n} {what}" for n, what in counts if n]
    message = ("Saved: " + ", ".join(done) + ".") if done else "Nothing was saved."
    if report.merged:
        message += f" {report.merged} edit(s) made a sample identical to a stored one, which is kept once."
    problems = [f"#{p['id']}: {p['problem']}" for p in report.problems] + [r["problem"] for r in refused]
    if not problems:
        return message, True
    return (
        f"{message} {len(problems)} row(s) were refused and stay in the grid, marked in the *problem* column "
        "(new rows at its bottom): fix them and save again. " + "; ".join(problems),
        False,
    )
