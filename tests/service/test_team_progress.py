"""A labelling team's progress (`GET …/team`), the vote export (`GET …/votes`), unsure marks and comments:
known votes of three named keys give known numbers; unsure marks reach neither training nor agreement."""

from __future__ import annotations

import statistics
from datetime import UTC, datetime, time, timedelta
from typing import Any

from sqlalchemy import select, update

from core.contract import MAX_COMMENT_CHARS
from core.engine.votes import count_votes
from service.store.api_keys import create_key
from service.store.campaign_schema import UnsureMark
from service.store.db import transaction
from service.store.schema import Model, SampleRow
from service.store.votes import label_votes, samples_to_train
from tests.support.service import TRAITS, Svc, auth, check, error_code, make_model, train_ready, wait_settled

H = "acme.team"
M = f"/v1/models/{H}"


def person(svc: Svc, name: str, role: str) -> dict[str, str]:
    with transaction(svc.ctx.sessions) as s:
        return auth(create_key(s, ["acme"], "authoring", name, role=role))


def people(svc: Svc) -> dict[str, dict[str, str]]:
    return {
        "alice": person(svc, "alice", "annotator"),
        "bob": person(svc, "bob", "annotator"),
        "carol": person(svc, "carol", "reviewer"),
    }


def vote(svc: Svc, key: dict[str, str], text: str, quality: float, **extra: Any) -> int:
    row = {"trait": "formality", "text": text, "quality": quality, **extra}
    return int(check(svc.client.post(f"{M}/samples", json={"samples": [row]}, headers=key), 201)["ids"][0])


def at(svc: Svc, sample_id: int, when: datetime) -> None:
    with transaction(svc.ctx.sessions) as s:
        s.execute(update(SampleRow).where(SampleRow.id == sample_id).values(created_at=when))


def median_of_gaps(times: list[datetime]) -> float | None:
    """The rule as docs/api.md states it, computed here on its own: consecutive gaps of at most 600 s."""
    times = sorted(times)
    gaps = [(b - a).total_seconds() for a, b in zip(times, times[1:], strict=False)]
    kept = [g for g in gaps if g <= 600]
    return statistics.median(kept) if kept else None


def test_progress_per_person_counts_known_votes(svc: Svc) -> None:
    c = svc.client
    keys = people(svc)
    alice, bob, carol = keys["alice"], keys["bob"], keys["carol"]
    make_model(c, svc.author, H, with_data=False)
    check(c.post(f"{M}/traits", json={"traits": TRAITS}, headers=svc.author), 201)
    t = [f"Text number {i}." for i in range(7)]
    base = datetime.combine(datetime.now(UTC).date(), time(0, 1), tzinfo=UTC)
    yesterday = base - timedelta(days=1)
    # alice: T1..T5 and an unsure mark on T6; her decisions' times (one break of 1,910 s).
    alice_times = [base + timedelta(seconds=s) for s in (0, 30, 90, 2000, 2040)]
    for text, q, when in zip(t[1:6], [1, 1, 0, 1, 1], alice_times, strict=True):
        at(svc, vote(svc, alice, text, q), when)
    mark = check(c.post(f"{M}/unsure", json={"trait": "formality", "text": t[6]}, headers=alice), 201)
    unsure_at = base + timedelta(seconds=2100)
    with transaction(svc.ctx.sessions) as s:
        s.execute(update(UnsureMark).where(UnsureMark.id == mark["id"]).values(created_at=unsure_at))
    # bob: two labels yesterday, two today (700 s apart: a break).
    bob_times = [yesterday, yesterday + timedelta(seconds=100), base, base + timedelta(seconds=700)]
    for text, quality, when in zip([t[1], t[2], t[3], t[5]], [1.0, 0.0, 0.0, 0.5], bob_times, strict=True):
        at(svc, vote(svc, bob, text, quality), when)
    # carol: a vote on T1, then she settles T3.
    at(svc, vote(svc, carol, t[1], 0), base + timedelta(seconds=10))
    at(svc, vote(svc, carol, t[3], 0, adjudicated=True), base + timedelta(seconds=20))
    # A file's rater (imported by the owner): a vote to compare with, never a person of the table.
    vote(svc, svc.author, t[4], 1, annotator="rater-9", provenance="imported")
    check(c.post(f"{M}/comments", json={"trait": "formality", "text": t[6], "body": "?"}, headers=carol), 201)

    out = check(c.get(f"{M}/team", headers=alice), 200)
    assert out["day"] == base.date().isoformat() and out["votes_wanted"] == 1
    assert out["session_gap_seconds"] == 600
    # T1 and T2 are contested (votes on both poles), T3 settled, T4 and T5 agree (bob's 0.5 takes no side).
    assert out["traits"] == {
        "formality": {"texts": 5, "settled": 1, "wanting": 2},
        "sentiment": {"texts": 0, "settled": 0, "wanting": 0},
    }
    rows = {(p["annotator"], p["trait"]): p for p in out["people"]}
    assert sorted(rows) == [(n, k) for n in ("alice", "bob", "carol") for k in ("formality", "sentiment")]
    a, b, k = rows["alice", "formality"], rows["bob", "formality"], rows["carol", "formality"]
    assert (a["labels"], a["labels_today"], a["unsure"], a["wanting"]) == (5, 5, 1, 0)
    assert (b["labels"], b["labels_today"], b["unsure"], b["wanting"]) == (4, 2, 0, 0)
    assert (k["labels"], k["labels_today"], k["unsure"], k["wanting"]) == (2, 2, 0, 1)  # T2 is hers to vote
    assert a["median_seconds"] == median_of_gaps([*alice_times, unsure_at]) == 50
    assert b["median_seconds"] == median_of_gaps(bob_times) == 100
    assert k["median_seconds"] == 10
    # Pairs on a pole: alice T1 (bob same, carol not), T2 (bob not), T3 (bob same), T4 (rater-9 same);
    # T5 is not compared (bob's neutral vote). Carol's settling vote is not independent.
    assert (a["compared_others"], a["agreement_others"]) == (5, 3 / 5)
    assert (b["compared_others"], b["agreement_others"]) == (4, 2 / 4)
    assert (k["compared_others"], k["agreement_others"]) == (2, 0.0)
    assert (a["compared_settled"], a["agreement_settled"]) == (1, 1.0)
    assert (b["compared_settled"], b["agreement_settled"]) == (1, 1.0)
    assert (k["compared_settled"], k["agreement_settled"]) == (0, None)
    assert rows["alice", "sentiment"]["labels"] == 0 and rows["alice", "sentiment"]["median_seconds"] is None
    # Every role of the namespace reads it; so does the owner.
    for key in (bob, carol, svc.author):
        assert check(c.get(f"{M}/team", headers=key), 200)["people"] == out["people"]


def training_set(svc: Svc, handle: str) -> list[Any]:
    """What a training of the model would take in: its votes, counted as the training run counts them."""
    with transaction(svc.ctx.reads) as s:
        model = s.scalar(select(Model).where(Model.handle == handle))
        assert model is not None
        return samples_to_train(count_votes(label_votes(s, model.id)))


def test_unsure_marks_reach_neither_training_nor_agreement(svc: Svc) -> None:
    c = svc.client
    keys = people(svc)
    make_model(c, svc.author, H, review=False)  # votes train as given: no reviewer in this test
    for text in ("lol whatever dude", "Dear Sir, I am writing to formally request the quarterly report."):
        vote(svc, keys["alice"], text, 1.0)
        vote(svc, keys["bob"], text, 0.0)
    agreement = check(c.get(f"{M}/agreement", headers=svc.author), 200)
    before = training_set(svc, H)
    counts = {
        t["key"]: t["sample_count"] for t in check(c.get(f"{M}/traits", headers=svc.author), 200)["traits"]
    }
    for text in ("lol whatever dude", "A text nobody labelled.", "yo can u send me that pic"):
        for who in ("alice", "bob", "carol"):
            body = {"trait": "formality", "text": text}
            check(c.post(f"{M}/unsure", json=body, headers=keys[who]), 201)
    assert training_set(svc, H) == before
    assert check(c.get(f"{M}/agreement", headers=svc.author), 200) == agreement
    traits = check(c.get(f"{M}/traits", headers=svc.author), 200)["traits"]
    assert {t["key"]: t["sample_count"] for t in traits} == counts
    train_ready(c, svc.author, H)
    metrics = check(c.get(f"{M}/versions/v1", headers=svc.author), 200)["metrics"]["traits"]
    trained = {key: (m["texts"], m["votes"]) for key, m in metrics.items()}
    expected: dict[str, tuple[int, int]] = {}
    for sample in before:
        texts, votes = expected.get(sample.trait, (0, 0))
        expected[sample.trait] = (texts + 1, votes)
    with transaction(svc.ctx.reads) as s:
        model = s.scalar(select(Model).where(Model.handle == H))
        assert model is not None
        for counted in count_votes(label_votes(s, model.id)):
            texts, votes = expected[counted.trait]
            expected[counted.trait] = (texts, votes + len(counted.votes))
    assert trained == expected


def test_unsure_marks_are_the_caller_s_own_and_taken_back_by_rule(svc: Svc) -> None:
    c = svc.client
    keys = people(svc)
    make_model(c, svc.author, H)
    body = {"trait": "Formality", "text": "  Maybe formal?  "}  # a trait name works; text stored trimmed
    first = check(c.post(f"{M}/unsure", json=body, headers=keys["alice"]), 201)
    assert (first["trait"], first["text"], first["annotator"]) == ("formality", "Maybe formal?", "alice")
    assert check(c.post(f"{M}/unsure", json=body, headers=keys["alice"]), 201)["id"] == first["id"]
    bobs = check(c.post(f"{M}/unsure", json=body, headers=keys["bob"]), 201)
    page = check(c.get(f"{M}/unsure", params={"trait": "formality", "limit": 1}, headers=keys["carol"]), 200)
    assert [m["annotator"] for m in page["items"]] == ["alice"] and page["next_cursor"]
    rest = check(c.get(f"{M}/unsure", params={"trait": "formality", "cursor": page["next_cursor"]},
                       headers=keys["carol"]), 200)  # fmt: skip
    assert [m["annotator"] for m in rest["items"]] == ["bob"] and rest["next_cursor"] is None
    # bob (annotator) may not take alice's back; carol (reviewer) may; alice takes her own.
    assert error_code(c.delete(f"{M}/unsure/{first['id']}", headers=keys["bob"]), 403) == "forbidden"
    check(c.delete(f"{M}/unsure/{bobs['id']}", headers=keys["carol"]), 200)
    check(c.delete(f"{M}/unsure/{first['id']}", headers=keys["alice"]), 200)
    assert error_code(c.delete(f"{M}/unsure/{first['id']}", headers=keys["alice"]), 404) == "unsure_not_found"
    assert check(c.get(f"{M}/unsure", headers=svc.author), 200)["items"] == []
    bad = {"trait": "nope", "text": "x"}
    assert error_code(c.post(f"{M}/unsure", json=bad, headers=keys["alice"]), 422) == "unknown_trait"


def test_comments_have_limits_authors_and_rules(svc: Svc) -> None:
    c = svc.client
    keys = people(svc)
    make_model(c, svc.author, H)
    text = "lol whatever dude"
    longest = "x" * MAX_COMMENT_CHARS
    made = check(c.post(f"{M}/comments", json={"trait": "formality", "text": text, "body": longest},
                        headers=keys["alice"]), 201)  # fmt: skip
    assert (made["author"], made["body"], made["text"]) == ("alice", longest, text) and made["created_at"]
    for bad in (longest + "x", "   ", ""):
        body = {"trait": "formality", "text": text, "body": bad}
        assert (
            error_code(c.post(f"{M}/comments", json=body, headers=keys["alice"]), 422) == "validation_error"
        )
    body = {"trait": "formality", "text": text, "body": "Sarcasm? Casual anyway."}
    other = check(c.post(f"{M}/comments", json=body, headers=keys["bob"]), 201)
    listed = check(c.get(f"{M}/comments", headers=keys["carol"]), 200)["items"]
    assert [(x["author"], x["body"]) for x in listed] == [("alice", longest), ("bob", body["body"])]
    assert error_code(c.post(f"{M}/comments", json=body, headers=svc.scorer), 403) == "forbidden"
    assert error_code(c.post(f"{M}/comments", json=body, headers=svc.other), 404) == "model_not_found"
    assert error_code(c.get(f"{M}/comments", headers=svc.scorer), 403) == "forbidden"
    assert error_code(c.delete(f"{M}/comments/{other['id']}", headers=keys["alice"]), 403) == "forbidden"
    check(c.delete(f"{M}/comments/{other['id']}", headers=keys["bob"]), 200)
    check(c.delete(f"{M}/comments/{made['id']}", headers=keys["carol"]), 200)
    assert check(c.get(f"{M}/comments", headers=keys["carol"]), 200)["items"] == []
    # Zero-data-retention keeps no text: no note either, and turning it on purges the notes.
    check(c.post(f"{M}/comments", json=body, headers=keys["bob"]), 201)
    check(c.post(f"{M}/unsure", json={"trait": "formality", "text": text}, headers=keys["bob"]), 201)
    check(c.patch(M, json={"zero_data_retention": True}, headers=svc.author), 200)
    assert check(c.get(f"{M}/comments", headers=keys["carol"]), 200)["items"] == []
    assert check(c.get(f"{M}/unsure", headers=keys["carol"]), 200)["items"] == []
    assert error_code(c.post(f"{M}/comments", json=body, headers=keys["bob"]), 409) == "zero_data_retention"


def test_the_export_lists_every_vote_with_the_version_it_went_into(svc: Svc) -> None:
    c = svc.client
    keys = people(svc)
    make_model(c, svc.author, H)
    trained_ids = [s["id"] for s in check(c.get(f"{M}/samples", params={"limit": 500}, headers=svc.author),
                                          200)["items"]]  # fmt: skip
    train_ready(c, svc.author, H)
    check(c.post(f"{M}/reopen", headers=svc.author), 200)
    late = vote(svc, keys["alice"], "Later, formally yours.", 1.0)
    # A team's model is reviewed: accepted, the label is one the next training takes in (a pending one is
    # not, and names no version: tests/service/test_label_order.py).
    accept = {"decision": "accept", "items": [{"kind": "sample", "id": late}]}
    check(c.post(f"{M}/review", json=accept, headers=keys["carol"]), 200)
    check(c.post(f"{M}/unsure", json={"trait": "sentiment", "text": "Meh."}, headers=keys["bob"]), 201)
    check(c.post(f"{M}/train", json={"effort": "low"}, headers=svc.author), 202)
    wait_settled(c, H, svc.author)
    check(c.post(f"{M}/reopen", headers=svc.author), 200)
    newest = vote(svc, keys["bob"], "Not trained yet.", 0.0)

    whole = check(c.get(f"{M}/votes", params={"limit": 1000}, headers=keys["alice"]), 200)
    assert whole["next_cursor"] is None
    items = whole["items"]
    assert [(x["kind"], x["id"]) for x in items] == [
        *[("sample", i) for i in [*trained_ids, late, newest]],
        ("unsure", items[-1]["id"]),
    ]
    by_id = {x["id"]: x for x in items if x["kind"] == "sample"}
    assert {by_id[i]["version_no"] for i in trained_ids} == {1}
    assert by_id[late]["version_no"] == 2 and by_id[late]["annotator"] == "alice"
    assert by_id[newest]["version_no"] is None and by_id[newest]["provenance"] == "authored"
    mark = items[-1]
    assert (mark["annotator"], mark["trait"], mark["text"], mark["quality"], mark["unsure"]) == (
        "bob", "sentiment", "Meh.", None, True,
    )  # fmt: skip
    # Paged across the kinds, the same votes in the same order.
    paged: list[dict[str, Any]] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": 7, **({"cursor": cursor} if cursor else {})}
        page = check(c.get(f"{M}/votes", params=params, headers=svc.author), 200)
        paged += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert paged == items
    forged = c.get(f"{M}/votes", params={"cursor": "nope.nope"}, headers=svc.author)
    assert error_code(forged, 400) == "invalid_cursor"


def test_imported_rows_want_no_votes_whatever_votes_wanted(svc: Svc) -> None:
    """With 3 votes wanted, a file's imported training rows are no campaign's texts: `wanting` counts the
    texts the team labelled that still want votes, never the imported ones."""
    c = svc.client
    keys = people(svc)
    make_model(c, svc.author, H, with_data=False)
    check(c.post(f"{M}/traits", json={"traits": TRAITS}, headers=svc.author), 201)
    check(c.patch(M, json={"votes_wanted": 3}, headers=svc.author), 200)
    imported = [
        {"trait": "formality", "text": f"Row {i}.", "quality": float(i % 2), "provenance": "imported"}
        for i in range(30)
    ]
    check(c.post(f"{M}/samples", json={"samples": imported}, headers=svc.author), 201)
    vote(svc, keys["alice"], "Labelled by two.", 1.0)
    vote(svc, keys["bob"], "Labelled by two.", 1.0)
    vote(svc, keys["alice"], "Labelled by one.", 0.0)
    progress = check(c.get(f"{M}/team", headers=svc.author), 200)
    assert progress["traits"]["formality"]["wanting"] == 2  # the two labelled texts, not the 30 rows
    bob_row = next(p for p in progress["people"] if p["annotator"] == "bob")
    assert bob_row["wanting"] == 1  # the one text he has not voted on
