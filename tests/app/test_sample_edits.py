"""The Samples grid's edits as API calls: rows patched, deleted and added; applied to a real draft."""

from __future__ import annotations

import pandas as pd

from app.sample_edits import apply_edits, grid_changes, save_message
from core.client import Client

COLUMNS = ["id", "trait", "text", "quality", "provenance", "source_url"]


def _frame() -> pd.DataFrame:
    rows = [
        [1, "formality", "Dear Sir.", 1.0, "authored", None],
        [2, "formality", "yo dude", 0.0, "authored", None],
        [3, "formality", "Kind regards.", 1.0, "authored", None],
    ]
    frame = pd.DataFrame(rows, columns=COLUMNS)
    refused = {"trait": "formality", "text": "no quality", "quality": None, "source_url": None,
               "provenance": "not saved", "problem": "grid row 4: quality is missing"}  # fmt: skip
    frame["problem"] = ""
    return pd.concat([frame, pd.DataFrame([refused])], ignore_index=True)


def test_grid_changes_sort_edits_deletes_and_new_rows() -> None:
    state = {
        "edited_rows": {"0": {"text": "Dear Madam."}, "1": {"quality": 0.0}, "3": {"quality": 0.0}},
        "deleted_rows": [2],
        "added_rows": [{"trait": "formality", "text": "Yours faithfully.", "quality": 1.0}, {}],
    }
    changes = grid_changes(_frame(), 3, state)
    assert changes.patches == {1: {"text": "Dear Madam."}}  # row 2's quality did not change
    assert changes.deletes == [3]
    assert changes.new_rows == [
        {"trait": "formality", "text": "no quality", "quality": 0.0, "source_url": None},  # fixed, sent again
        {"trait": "formality", "text": "Yours faithfully.", "quality": 1.0, "source_url": None},
    ]  # the untouched blank row is not a sample
    assert not changes.problems


def test_edits_apply_one_by_one_and_report_each_refusal(client: Client, draft: str) -> None:
    stored = list(client.list_samples(draft))
    first, second, third = stored[:3]
    frame = pd.DataFrame(
        [[s.id, s.trait, s.text, s.quality, s.provenance, None] for s in (first, second, third)],
        columns=COLUMNS,
    )
    state = {"edited_rows": {0: {"text": "   "}, 1: {"quality": 0.25}}, "deleted_rows": [2]}
    changes = grid_changes(frame, 3, state)
    report = apply_edits(client, draft, changes, {s.id: s.text for s in stored})
    assert (report.edited, report.deleted) == (1, 1)
    assert [p["id"] for p in report.problems] == [first.id]
    assert "empty" in report.problems[0]["problem"]  # the service's own words, beside the row
    after = {s.id: s for s in client.list_samples(draft)}
    assert after[first.id].text == first.text and after[second.id].quality == 0.25 and third.id not in after
    message, ok = save_message(report, 0, [])
    assert not ok and message.startswith("Saved: 1 edited, 1 deleted. 1 row(s) were refused")
    assert f"#{first.id}:" in message
