"""The Samples grid's unsaved edits: kept per model until the service confirmed them, then sent as API calls.

`st.data_editor` keeps its edits in the browser and reports them as `{"edited_rows": {row: {column: value}},
"added_rows": [...], "deleted_rows": [row]}` against the frame it was drawn from. That state does not
survive a page switch (Streamlit drops a widget that is not drawn), and an editor drawn again from other data
starts empty. So the edits never live only there: every rerun folds the editor's state into `Pending` (kept in
session state, one per model), and a grid is drawn from the stored rows with the pending edits already
applied. A drawn grid is a `Grid`: its rows, and the pending edits it started from, so the editor's state is
always read against the frame it edited. `save` sends each edit and forgets it only once the service took it;
a refused edit stays pending, marked with the service's reason.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Any

from core.client import ApiError, Client

EDITABLE = ("trait", "text", "quality")  # what PATCH /samples/{id} can change
NEW_FIELDS = ("trait", "text", "quality", "source_url")  # what a new row sends
COLUMNS = ("id", "trait", "text", "quality", "provenance", "source_url")
NEW_ROW = "not saved yet"  # the provenance column of a pending new row
BLANK = "new row"  # the provenance column of an empty row to type a new sample into


def cell(v: Any) -> Any:
    """A grid cell as JSON: NaN/NaT/None/pd.NA become None, numpy scalars plain Python, text stripped of
    nothing (a sample's text is the service's to judge)."""
    if v is None or (isinstance(v, float) and math.isnan(v)) or type(v).__name__ in ("NAType", "NaTType"):
        return None
    return v.item() if hasattr(v, "item") else v


def _blank(row: dict[str, Any]) -> bool:
    """A new row with neither text nor quality is not a sample (a trait may be there by default)."""
    return cell(row.get("quality")) is None and not str(cell(row.get("text")) or "").strip()


@dataclass
class Pending:
    """A model's unsaved grid edits. `stored` keeps the stored values of every row edited or deleted, so the
    summary can say what changes even when that row is on another page."""

    stored: dict[int, dict[str, Any]] = field(default_factory=dict)  # sample id -> its stored row
    patches: dict[int, dict[str, Any]] = field(default_factory=dict)  # sample id -> changed fields
    deletes: list[int] = field(default_factory=list)
    new_rows: list[dict[str, Any]] = field(default_factory=list)  # NEW_FIELDS (+ "problem" once refused)
    problems: dict[int, str] = field(default_factory=dict)  # sample id -> why the last save refused it

    @property
    def empty(self) -> bool:
        return not (self.patches or self.deletes or self.new_rows)

    def headline(self) -> str:
        counts = ((len(self.patches), "edited"), (len(self.deletes), "deleted"), (len(self.new_rows), "new"))
        return ", ".join(f"{n} {what}" for n, what in counts if n)

    def summary(self) -> list[dict[str, Any]]:
        """One line per change, as Save will send it: what, which sample, and old → new values."""
        lines: list[dict[str, Any]] = []
        for sid, fields in self.patches.items():
            old = self.stored.get(sid, {})
            what = "; ".join(f"{k}: {_short(old.get(k))} → {_short(v)}" for k, v in fields.items())
            lines.append(_line("edit", f"#{sid}", {**old, **fields}, what, self.problems.get(sid, "")))
        for sid in self.deletes:
            lines.append(
                _line("delete", f"#{sid}", self.stored.get(sid, {}), "removed", self.problems.get(sid, ""))
            )
        for row in self.new_rows:
            what = f"quality {_short(row.get('quality'))}"
            lines.append(_line("add", "new", row, what, row.get("problem", "")))
        return lines


def _line(change: str, sample: str, row: dict[str, Any], what: str, problem: str) -> dict[str, Any]:
    return {"change": change, "sample": sample, "trait": row.get("trait"), "text": row.get("text"),
            "what": what, "problem": problem}  # fmt: skip


def _short(v: Any, width: int = 40) -> str:
    if v is None:
        return "(none)"
    if isinstance(v, float):
        return f"{v:g}"
    text = str(v)
    return text if len(text) <= width else text[: width - 1] + "…"


@dataclass
class Grid:
    """One drawing of the grid: the editor's key, the rows it was given, and the pending edits they show."""

    key: str
    context: tuple[Any, ...]  # (model, filters, page): another context is another grid
    rows: list[dict[str, Any]]  # the frame's rows: stored ones (pending edits applied), new ones, empty ones
    ids: list[int]  # the sample id of each stored row, in order
    stored: dict[int, dict[str, Any]]  # the stored values of those rows, as the service sent them
    start: Pending  # the pending edits when this grid was drawn

    @property
    def marked(self) -> bool:
        """Whether some row carries a refusal (the grid then shows a problem column)."""
        return any(r.get("problem") for r in self.rows)


def draw(
    key: str,
    context: tuple[Any, ...],
    stored_rows: list[dict[str, Any]],
    pending: Pending,
    blanks: int = 3,
    trait: str | None = None,
) -> Grid:
    """The grid of a page of stored rows (`COLUMNS` each) with `pending` applied: edited values shown,
    deleted rows left out, new rows (and refused ones, with why) at the bottom, then `blanks` empty rows
    (with `trait`) to type new samples into. Empty rows of the data, not the editor's own "add row": typing
    into a cell of a row that exists is plain editing, where a click on the editor's add-row line appends a
    row first and the keys typed meanwhile were lost (and each click left a blank row behind)."""
    rows: list[dict[str, Any]] = []
    ids: list[int] = []
    for r in stored_rows:
        sid = int(r["id"])
        if sid in pending.deletes:
            continue
        rows.append({**r, **pending.patches.get(sid, {}), "problem": pending.problems.get(sid, "")})
        ids.append(sid)
    for new in pending.new_rows:
        rows.append({"id": None, **{k: new.get(k) for k in NEW_FIELDS}, "provenance": NEW_ROW,
                     "problem": new.get("problem", "")})  # fmt: skip
    for _ in range(blanks):
        rows.append({"id": None, "trait": trait, "text": None, "quality": None, "provenance": BLANK,
                     "source_url": None, "problem": ""})  # fmt: skip
    stored = {int(r["id"]): dict(r) for r in stored_rows}
    return Grid(key, context, rows, ids, stored, copy.deepcopy(pending))


def fold(grid: Grid, state: dict[str, Any] | None) -> Pending:
    """The pending edits after the editor's `state` (relative to `grid.rows`), from the ones it started with.

    Pure: the same grid and state give the same result however often a rerun folds them."""
    state = state or {}
    edited = {int(i): e for i, e in (state.get("edited_rows") or {}).items()}
    deleted = {int(i) for i in state.get("deleted_rows") or []}
    out = copy.deepcopy(grid.start)
    for i, sid in enumerate(grid.ids):
        original = grid.stored[sid]
        if i in deleted:
            out.patches.pop(sid, None)
            if sid not in out.deletes:
                out.deletes.append(sid)
            out.stored[sid] = original
            continue
        change = {k: cell(v) for k, v in edited.get(i, {}).items() if k in (*EDITABLE, "source_url")}
        if not change:
            continue
        fields = {**out.patches.get(sid, {}), **change}
        fields = {k: v for k, v in fields.items() if v != cell(original.get(k))}  # an edit undone is none
        if fields:
            out.patches[sid] = fields
            out.stored[sid] = original
        else:
            out.patches.pop(sid, None)
    kept: list[dict[str, Any]] = []
    for i in range(len(grid.ids), len(grid.rows)):  # new rows, then the empty ones
        if i in deleted:
            continue
        row = {k: grid.rows[i].get(k) for k in NEW_FIELDS}
        if grid.rows[i].get("problem"):
            row["problem"] = grid.rows[i]["problem"]
        row.update({k: cell(v) for k, v in edited.get(i, {}).items() if k in NEW_FIELDS})
        if not _blank(row):
            kept.append(row)
    for added in state.get("added_rows") or []:
        row = {k: cell(added.get(k)) for k in NEW_FIELDS}
        if not _blank(row):
            kept.append(row)
    out.new_rows = kept
    return out


@dataclass
class SaveReport:
    edited: int = 0
    merged: int = 0  # edits that made a sample identical to a stored one (the stored one is kept)
    deleted: int = 0
    added: list[int] = field(default_factory=list)  # the new samples' ids
    refused: int = 0  # changes still pending after the save, each marked with why


def save(client: Client, handle: str, pending: Pending) -> tuple[Pending, SaveReport]:
    """Send every pending change; what the service took is dropped, what it refused stays with its reason.

    Edits and deletions go one by one (one refusal does not stop the others); new rows in one import."""
    left = Pending(stored=dict(pending.stored))
    report = SaveReport()
    for sid, fields in pending.patches.items():
        if "source_url" in fields:  # the spec's PATCH cannot change it: say so, keep the rest of the edit
            left.problems[sid] = "source_url of a stored sample cannot change (delete it and add a new row)"
            fields = {k: v for k, v in fields.items() if k != "source_url"}
            if fields:
                left.patches[sid] = fields
            continue
        try:
            kept = client.update_sample(handle, sid, **fields)
        except ApiError as exc:
            left.patches[sid] = fields
            left.problems[sid] = exc.message
            continue
        report.edited += 1
        report.merged += int(kept.id != sid)
    for sid in pending.deletes:
        try:
            client.delete_sample(handle, sid)
        except ApiError as exc:
            if exc.code != "sample_not_found":  # already gone: what the user asked for
                left.deletes.append(sid)
                left.problems[sid] = exc.message
                continue
        report.deleted += 1
    rows = [{k: v for k, v in r.items() if k in NEW_FIELDS} for r in pending.new_rows]
    if rows:
        result = client.import_samples(handle, rows, strict=False)  # refused rows stay in the grid
        report.added = list(result.ids)
        for e in result.errors:
            left.new_rows.append({**rows[e.index], "problem": e.message})
    report.refused = len(left.patches) + len(left.deletes) + len(left.new_rows)
    left.stored = {sid: row for sid, row in left.stored.items() if sid in left.patches or sid in left.deletes}
    return left, report


def save_message(report: SaveReport, left: Pending) -> tuple[str, bool]:
    """What one save did, and whether all of it went in (else the page shows a warning)."""
    added = len(report.added)
    ids = f" (#{', #'.join(map(str, report.added[:10]))}{', …' if added > 10 else ''})" if added else ""
    counts = ((report.edited, "edited"), (report.deleted, "deleted"), (added, f"added{ids}"))
    done = [f"{n} {what}" for n, what in counts if n]
    message = ("Saved: " + ", ".join(done) + ".") if done else "Nothing was saved."
    if report.merged:
        message += f" {report.merged} edit(s) made a sample identical to a stored one, which is kept once."
    if not report.refused:
        return message, True
    problems = [f"#{sid}: {why}" for sid, why in left.problems.items()] + [
        f"new row {r.get('text')!r}: {r['problem']}" for r in left.new_rows if r.get("problem")
    ]
    return (
        f"{message} {report.refused} change(s) were refused and are still unsaved, marked in the *problem* "
        "column (new rows at the grid's bottom): fix them and save again. " + "; ".join(problems),
        False,
    )
