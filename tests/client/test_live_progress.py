"""The client's team methods over real HTTP: progress, the vote export as CSV and JSONL, unsure marks and
comments."""

from __future__ import annotations

import csv
import io
import json

import pytest

from core.client import Client, PermissionDeniedError
from core.client.team import VOTE_COLUMNS
from tests.support.client import Service, make_draft


def test_progress_export_and_notes(client: Client, service: Service) -> None:
    handle = make_draft(client, service.handle("team"))
    mark = client.mark_unsure(handle, "formality", "  Formal, or not?  ")
    assert (mark.trait, mark.text) == ("formality", "Formal, or not?")
    note = client.add_comment(handle, "formality", "Formal, or not?", "Ask the guide.")
    assert note.body == "Ask the guide." and note.author == mark.annotator
    assert [c.id for c in client.list_comments(handle, "formality")] == [note.id]
    assert [m.id for m in client.list_unsure(handle)] == [mark.id]

    votes = list(client.votes(handle, page_size=3))  # paged, every vote
    samples = list(client.list_samples(handle))
    assert [v.id for v in votes if v.kind == "sample"] == [s.id for s in samples]
    assert votes[-1].kind == "unsure" and votes[-1].quality is None
    rows = list(csv.DictReader(io.StringIO(client.export_votes(handle, "csv"))))
    assert len(rows) == len(votes) and list(rows[0]) == list(VOTE_COLUMNS)
    assert rows[-1]["unsure"] == "True" and rows[-1]["quality"] == ""
    lines = [json.loads(x) for x in client.export_votes(handle, "jsonl").splitlines()]
    assert [x["text"] for x in lines] == [v.text for v in votes] and lines[-1]["quality"] is None

    progress = client.team_progress(handle)
    assert progress.traits["formality"].texts == len({s.text for s in samples if s.trait == "formality"})
    me = [p for p in progress.people if p.trait == "formality"]
    assert me and me[0].unsure == 1 and me[0].labels == len([s for s in samples if s.trait == "formality"])
    with service.client("scorer") as scorer, pytest.raises(PermissionDeniedError):
        scorer.team_progress(handle)
    assert client.delete_comment(handle, note.id).deleted and client.delete_unsure(handle, mark.id).deleted
