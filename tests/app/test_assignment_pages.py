"""Assigned work on the pages, driven with AppTest against the real local service: the Team page's forms
assign texts by a search, metadata and a count, set a target and move a person's texts, its table is the
API's; the Label page's search (a phrase, a metadata value) shows the matching texts and a reviewer labels
them all with one key."""

from __future__ import annotations

import pandas as pd
import pytest

from app.team.assignments import parse_ids, work_frame
from core.client import Client
from core.local import LocalService
from tests.support.app import FORMALITY, named_key, new_handle, new_key_name
from tests.support.apptest import by_label, no_exception, page, run_label_page

POOL = [f"About invoice {i}, could you check it?" for i in range(3)] + [
    f"Weather note {i}." for i in range(5)
]
# Each text's desk, as an import keeps it: the metadata filters pick by it.
DESKS = [{"desk": "billing", "batch": 1}] * 3 + [{"desk": "ops", "batch": 2}] * 5


@pytest.fixture
def people(local_service: LocalService) -> dict[str, str]:
    roles = {"own": "owner", "ann": "annotator", "rev": "reviewer"}
    return {
        name: named_key(local_service.data_dir, local_service.namespace, new_key_name(f"as{name}"), role=role)
        for name, role in roles.items()
    }


def pooled(local_service: LocalService, owner: str) -> str:
    handle = new_handle(local_service, "assigned")
    with Client(local_service.url, owner) as c:
        c.create_model(handle)
        c.add_traits(handle, [FORMALITY])
        c.add_pool_texts(handle, POOL, metadata=DESKS)
    return handle


def _as(monkeypatch: pytest.MonkeyPatch, local_service: LocalService, key: str) -> None:
    monkeypatch.setenv("SCORING_API_URL", local_service.url)
    monkeypatch.setenv("SCORING_API_KEY", key)
    monkeypatch.setenv("SCORING_NAMESPACE", local_service.namespace)
    monkeypatch.setenv("SCORING_EMBEDDER", "hashing")


def test_parse_ids_reads_every_number_once_and_refuses_a_typo() -> None:
    assert parse_ids(" 12, 15 19;12 ") == [12, 15, 19]
    with pytest.raises(ValueError, match="'1x'"):
        parse_ids("3, 1x")


def test_the_team_page_assigns_by_search_sets_a_target_and_moves_the_texts(
    local_service: LocalService, people: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    handle = pooled(local_service, people["own"])
    _as(monkeypatch, local_service, people["own"])
    at = page("team", handle)
    at.run()
    no_exception(at)
    at.text_input(key="assign_person").set_value("pat@example.com")
    at.text_input(key="assign_search").set_value("INVOICE")
    at.number_input(key="assign_count").set_value(2)
    by_label(at.button, "Assign").click().run()
    no_exception(at)
    # By metadata: of the billing desk's three texts, the one nobody has (any count).
    at.text_input(key="assign_person").set_value("kim@example.com")
    assert at.selectbox(key="assign_meta_key").options == ["(any)", "batch", "desk"]
    at.selectbox(key="assign_meta_key").set_value("desk")
    at.text_input(key="assign_meta_value").set_value("billing")
    by_label(at.button, "Assign").click().run()
    no_exception(at)
    at.text_input(key="target_person").set_value("pat@example.com")
    at.number_input(key="target_count").set_value(4)
    by_label(at.button, "Set target").click().run()
    no_exception(at)
    with Client(local_service.url, people["own"]) as owner:
        found = owner.assignments(handle)
        pat = {p.annotator: p for p in found.people}["pat@example.com"]
        assert (pat.assigned, pat.remaining, pat.target.count if pat.target else None) == (2, 2, 4)
        assert {p.annotator: p.assigned for p in found.people}["kim@example.com"] == 1
        expected = work_frame(found)
        [table] = [d for d in at.dataframe if list(d.value.columns) == list(expected.columns)]
        # Compared as frames: a person without a target has NaN progress, never equal to itself in a dict.
        pd.testing.assert_frame_equal(table.value.reset_index(drop=True), expected, check_dtype=False)
        at.selectbox(key="move_from").set_value("pat@example.com")
        at.text_input(key="move_to").set_value("sam@example.com")
        by_label(at.button, "Move").click().run()
        no_exception(at)
        moved = {p.annotator: p.remaining for p in owner.assignments(handle).people}
        assert moved == {"pat@example.com": 0, "sam@example.com": 2, "kim@example.com": 1}
    _as(monkeypatch, local_service, people["ann"])  # an annotator reads the table, never the forms
    at = page("team", handle)
    at.run()
    no_exception(at)
    assert [d for d in at.dataframe if "target reached" in d.value.columns]
    assert not [b for b in at.button if b.label == "Assign"]


def test_the_label_page_finds_texts_and_a_reviewer_labels_all_shown(
    local_service: LocalService, people: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    handle = pooled(local_service, people["own"])
    _as(monkeypatch, local_service, people["rev"])
    at = page("label", handle)
    run_label_page(at)
    no_exception(at)
    at.text_input(key="pool_search").set_value("invoice").run()
    no_exception(at)
    [table] = [d for d in at.dataframe if list(d.value.columns) == ["id", "text"]]
    assert sorted(table.value["text"]) == sorted(POOL[:3])
    by_label(at.button, "All shown: formal").click().run()
    no_exception(at)
    with Client(local_service.url, people["rev"]) as rev:
        name = rev.current_key().name
        votes = [(v.text, v.quality, v.annotator) for v in rev.votes(handle) if v.kind == "sample"]
    assert sorted(votes) == sorted((t, 1.0, name) for t in POOL[:3])
    # A metadata value instead of the phrase: the ops desk's texts alone.
    at.text_input(key="pool_search").set_value("")
    at.selectbox(key="pool_search_meta_key").set_value("desk")
    at.text_input(key="pool_search_meta_value").set_value("ops").run()
    no_exception(at)
    [table] = [d for d in at.dataframe if list(d.value.columns) == ["id", "text"]]
    assert sorted(table.value["text"]) == sorted(POOL[3:])
    _as(monkeypatch, local_service, people["ann"])  # an annotator searches, but labels one text at a time
    at = page("label", handle)
    run_label_page(at)
    at.text_input(key="pool_search").set_value("invoice").run()
    no_exception(at)
    assert [d for d in at.dataframe if list(d.value.columns) == ["id", "text"]]
    assert not [b for b in at.button if b.label.startswith("All shown")]
