"""The Samples grid's pending edits: folded from the editor's state, kept across grids, saved to a draft."""

from __future__ import annotations

from app.samples.edits import BLANK, Pending, draw, fold, save, save_message
from core.client import Client

STORED = [
    {"id": i, "trait": "formality", "text": text, "quality": q, "provenance": "authored", "source_url": None}
    for i, text, q in ((1, "Dear Sir.", 1.0), (2, "yo dude", 0.0), (3, "Kind regards.", 1.0))
]


def test_fold_sorts_edits_deletes_and_new_rows_and_ignores_untouched_empty_rows() -> None:
    grid = draw("k1", ("h",), STORED, Pending(), blanks=2, trait="formality")
    assert [r["provenance"] for r in grid.rows[3:]] == [BLANK, BLANK]
    assert grid.rows[3]["trait"] == "formality"  # an empty row starts with the model's trait
    state = {
        "edited_rows": {
            "0": {"text": "Dear Madam."},
            "1": {"quality": 0.0},
            "3": {"text": "Yours faithfully."},
        },
        "deleted_rows": [2],
    }
    pending = fold(grid, state)
    assert pending.patches == {1: {"text": "Dear Madam."}}  # row 2's quality did not change
    assert pending.deletes == [3]
    assert pending.new_rows == [
        {"trait": "formality", "text": "Yours faithfully.", "quality": None, "source_url": None}
    ]  # the second empty row, untouched, is no sample
    assert pending.headline() == "1 edited, 1 deleted, 1 new"
    assert [line["change"] for line in pending.summary()] == ["edit", "delete", "add"]
    assert pending.summary()[0]["what"] == "text: Dear Sir. → Dear Madam."


def test_a_new_grid_shows_the_pending_edits_and_folds_against_them() -> None:
    first = draw("k1", ("h",), STORED, Pending(), blanks=1)
    pending = fold(first, {"edited_rows": {0: {"quality": 0.5}, 3: {"text": "New one", "quality": 1}}})
    # The editor was dropped (a page switch): the next grid starts from the pending edits.
    second = draw("k2", ("h",), STORED, pending, blanks=1)
    assert second.rows[0]["quality"] == 0.5
    assert second.rows[3]["text"] == "New one" and second.rows[3]["provenance"] == "not saved yet"
    assert fold(second, {}) == pending  # nothing lost, nothing doubled
    # An edit undone in the second grid is no edit; the new row fixed there replaces itself.
    again = fold(second, {"edited_rows": {0: {"quality": 1.0}, 3: {"quality": 0.0}}, "deleted_rows": [1]})
    assert again.patches == {}
    assert again.deletes == [2]
    assert [r["quality"] for r in again.new_rows] == [0.0]


def test_save_sends_each_change_and_keeps_what_the_service_refused(client: Client, draft: str) -> None:
    stored = list(client.list_samples(draft))
    first, second, third = stored[:3]
    rows = [{k: getattr(s, k) for k in ("id", "trait", "text", "quality", "provenance", "source_url")}
            for s in (first, second, third)]  # fmt: skip
    grid = draw("k", (draft,), rows, Pending(), blanks=2, trait="formality")
    state = {
        "edited_rows": {
            0: {"text": "   "},  # refused by the service: empty
            1: {"quality": 0.25},
            3: {"text": "Most respectfully yours, the committee.", "quality": 1},
            4: {"text": "no quality given"},  # refused: quality missing
        },
        "deleted_rows": [2],
    }
    pending = fold(grid, state)
    left, report = save(client, draft, pending)
    assert (report.edited, report.deleted, len(report.added), report.refused) == (1, 1, 1, 2)
    after = {s.id: s for s in client.list_samples(draft)}
    assert after[first.id].text == first.text and after[second.id].quality == 0.25 and third.id not in after
    assert after[report.added[0]].text == "Most respectfully yours, the committee."
    # What was refused is still pending, with the service's reason; what went in is not.
    assert list(left.patches) == [first.id] and "empty" in left.problems[first.id]
    assert [r["text"] for r in left.new_rows] == ["no quality given"]
    assert "quality" in left.new_rows[0]["problem"]
    assert not left.deletes
    message, ok = save_message(report, left)
    assert not ok and message.startswith(f"Saved: 1 edited, 1 deleted, 1 added (#{report.added[0]}).")
    assert "2 change(s) were refused" in message and f"#{first.id}:" in message
    # Saving again sends only what is left: nothing is added twice.
    again, report2 = save(client, draft, left)
    assert (report2.edited, report2.deleted, report2.added) == (0, 0, [])
    assert len(list(client.list_samples(draft))) == len(after)
