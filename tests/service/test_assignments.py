"""Assigned work: texts given to named people come first in their queue and stay theirs, the shared pool
follows only while the owner allows it, one action moves a person's open texts to another, targets show
progress; the pool's search, and a selection labelled at once by a reviewer or an owner only."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from service.store.api_keys import create_key
from service.store.campaign_schema import PoolAssignment
from service.store.db import transaction
from service.store.schema import AuditEvent, SampleRow
from tests.support.service import Svc, auth, check, error_code

H = "acme.assigned"
TRAITS = [{"name": "Formality", "positive_label": "formal", "negative_label": "casual"}]
POOL = [
    f"Reply number {i}: {'Dear Sir' if i % 3 else 'hey there'}, about the invoice {i * 7}." for i in range(24)
]


def person(svc: Svc, name: str, role: str) -> dict[str, str]:
    with transaction(svc.ctx.sessions) as s:
        return auth(create_key(s, ["acme"], "authoring", name, role=role))


def draft(svc: Svc) -> list[int]:
    c = svc.client
    check(c.post("/v1/models", json={"handle": H}, headers=svc.author), 201)
    check(c.post(f"/v1/models/{H}/traits", json={"traits": TRAITS}, headers=svc.author), 201)
    ids: list[int] = check(c.post(f"/v1/models/{H}/pool", json={"texts": POOL}, headers=svc.author), 201)[
        "ids"
    ]
    return ids


def queue(svc: Svc, key: dict[str, str], k: int = 10) -> list[int]:
    body = {"trait": "formality", "k": k, "claim": True}
    out = check(svc.client.post(f"/v1/models/{H}/pool/suggest", json=body, headers=key), 200)
    return [i["id"] for i in out["items"]]


def label(svc: Svc, key: dict[str, str], text_id: int) -> None:
    body = {"trait": "formality", "quality": 1.0}
    check(svc.client.post(f"/v1/models/{H}/pool/{text_id}/label", json=body, headers=key), 201)


def work(svc: Svc) -> dict[str, Any]:
    out = check(svc.client.get(f"/v1/models/{H}/assignments", headers=svc.author), 200)
    return {p["annotator"]: p for p in out["people"]}


def assign(svc: Svc, **body: Any) -> dict[str, Any]:
    out: dict[str, Any] = check(
        svc.client.post(f"/v1/models/{H}/assignments", json=body, headers=svc.author), 201
    )
    return out


def test_a_persons_assignment_comes_first_stays_theirs_and_counts_toward_a_target(idle_svc: Svc) -> None:
    svc = idle_svc
    ids = draft(svc)
    alice, bob = person(svc, "alice", "annotator"), person(svc, "bob", "annotator")
    given = [ids[20], ids[3], ids[11]]
    assert assign(svc, annotator="alice", ids=given) == {
        "handle": H, "annotator": "alice", "assigned": 3, "already": 0, "total": 3,
    }  # fmt: skip
    assert assign(svc, annotator="alice", ids=[ids[3]])["already"] == 1  # repeating adds nothing
    # Alice's queue serves her assignment first, in the order given; the shared pool fills the rest.
    mine = queue(svc, alice, k=5)
    assert mine[:3] == given and len(mine) == 5
    # Bob is never handed Alice's texts while she has not labelled them.
    assert not set(queue(svc, bob, k=20)) & set(given)
    target = {"count": 4, "period": "day"}
    check(svc.client.put(f"/v1/models/{H}/assignments/alice/target", json=target, headers=svc.author), 200)
    label(svc, alice, given[0])
    label(svc, alice, mine[4])  # a shared-pool text counts toward the target, not the assignment
    alice_work = work(svc)["alice"]
    assert (alice_work["assigned"], alice_work["labelled"], alice_work["remaining"]) == (3, 1, 2)
    assert alice_work["target"] == target and alice_work["labelled_today"] == 2
    assert alice_work["progress"] == 0.5
    assert queue(svc, alice, k=2) == given[1:]  # what she labelled leaves her queue


def test_without_the_shared_pool_a_queue_is_its_assignment_alone(idle_svc: Svc) -> None:
    svc = idle_svc
    ids = draft(svc)
    alice, bob = person(svc, "alice", "annotator"), person(svc, "bob", "annotator")
    assign(svc, annotator="alice", ids=ids[:2])
    check(svc.client.patch(f"/v1/models/{H}", json={"shared_pool": False}, headers=svc.author), 200)
    assert queue(svc, alice) == ids[:2]
    assert queue(svc, bob) == []
    label(svc, alice, ids[0])
    assert queue(svc, alice) == [ids[1]]
    on = check(svc.client.patch(f"/v1/models/{H}", json={"shared_pool": True}, headers=svc.author), 200)
    assert on["shared_pool"] is True
    assert len(queue(svc, bob)) == 10 and ids[1] not in queue(svc, bob)


def test_reassigning_moves_a_persons_unlabelled_texts_in_one_action(idle_svc: Svc) -> None:
    svc = idle_svc
    draft(svc)
    alice, bob = person(svc, "alice", "annotator"), person(svc, "bob", "annotator")
    # By a search: the texts greeting casually (every third), oldest first, at most five.
    got = assign(svc, annotator="alice", filter={"q": "HEY THERE"}, count=5)
    assert (got["assigned"], got["total"]) == (5, 5)
    page = check(svc.client.get(f"/v1/models/{H}/pool", params={"q": "hey there"}, headers=alice), 200)
    casual = [t["id"] for t in page["items"]]
    assert page["total"] == 8 and len(casual) == 8
    theirs = queue(svc, alice, k=5)
    assert theirs == casual[:5]
    label(svc, alice, theirs[0])
    url = f"/v1/models/{H}/assignments/alice/reassign"
    moved = check(svc.client.post(url, json={"to": "bob"}, headers=svc.author), 200)
    assert moved["moved"] == 4
    assert queue(svc, bob, k=4) == theirs[1:]  # Alice's claims on them ended with the move
    people = work(svc)
    assert (people["alice"]["assigned"], people["alice"]["remaining"]) == (1, 0)
    assert (people["bob"]["assigned"], people["bob"]["remaining"]) == (4, 4)
    gone = check(svc.client.delete(f"/v1/models/{H}/assignments/bob", headers=svc.author), 200)
    assert gone["removed"] == 4 and "bob" not in work(svc)
    assert error_code(svc.client.post(url, json={"to": "alice"}, headers=svc.author), 422) == "same_annotator"
    with transaction(svc.ctx.reads) as s:
        kinds = s.scalar(select(func.count()).where(AuditEvent.kind == "assignments_changed"))
    assert kinds == 3  # assigned, reassigned, unassigned


def test_bad_assignments_are_refused_and_store_nothing(idle_svc: Svc) -> None:
    svc = idle_svc
    ids = draft(svc)
    url = f"/v1/models/{H}/assignments"
    resp = svc.client.post(url, json={"annotator": "alice", "ids": [ids[0], 999_999]}, headers=svc.author)
    assert error_code(resp, 404) == "pool_text_not_found" and "999999" in resp.json()["error"]["message"]
    both = {"annotator": "alice", "ids": [ids[0]], "count": 3}
    assert error_code(svc.client.post(url, json=both, headers=svc.author), 422) == "ids_or_filter"
    assert (
        error_code(svc.client.post(url, json={"annotator": "alice"}, headers=svc.author), 422)
        == "ids_or_filter"
    )
    annotator = person(svc, "carol", "annotator")
    assert error_code(svc.client.post(url, json={"annotator": "x", "count": 1}, headers=annotator), 403)
    with transaction(svc.ctx.reads) as s:
        assert s.scalar(select(func.count()).select_from(PoolAssignment)) == 0


def test_a_selection_is_labelled_at_once_by_a_reviewer_never_an_annotator(idle_svc: Svc) -> None:
    svc = idle_svc
    ids = draft(svc)
    url = f"/v1/models/{H}/pool/label"
    body = {"trait": "formality", "quality": 0.0, "ids": [ids[0], ids[1], 999_999]}
    annotator = person(svc, "ann", "annotator")
    assert error_code(svc.client.post(url, json=body, headers=annotator), 403) == "forbidden"
    reviewer = person(svc, "rev", "reviewer")
    out = check(svc.client.post(url, json=body, headers=reviewer), 201)
    assert (out["labelled"], out["skipped"], out["stored_as"]) == ([ids[0], ids[1]], [999_999], "sample")
    with transaction(svc.ctx.reads) as s:
        votes = s.execute(select(SampleRow.annotator, SampleRow.quality)).tuples().all()
        events = s.scalars(select(AuditEvent).where(AuditEvent.kind == "pool_labelled")).all()
    assert sorted(votes) == [("rev", 0.0), ("rev", 0.0)]
    assert len(events) == 1 and events[0].detail["texts"] == 2
    # A labelled text has the one vote it wants: the next selection skips it rather than add a second.
    again = check(svc.client.post(url, json={**body, "ids": [ids[0], ids[2]]}, headers=svc.author), 201)
    assert (again["labelled"], again["skipped"]) == ([ids[2]], [ids[0]])


def test_the_pool_search_takes_a_phrase_not_a_pattern(idle_svc: Svc) -> None:
    svc = idle_svc
    c = svc.client
    check(c.post("/v1/models", json={"handle": H}, headers=svc.author), 201)
    texts = ["A 100% refund, please.", "A 1000 refunds.", "Under_score here.", "Underscore there."]
    check(c.post(f"/v1/models/{H}/pool", json={"texts": texts}, headers=svc.author), 201)

    def found(q: str) -> list[str]:
        return [
            t["text"]
            for t in check(c.get(f"/v1/models/{H}/pool", params={"q": q}, headers=svc.author), 200)["items"]
        ]

    assert found("100%") == ["A 100% refund, please."]
    assert found("r_c") == []  # "Underscore" matches it only as a pattern
    assert found("UNDER_") == ["Under_score here."]
    assert c.get(f"/v1/models/{H}/pool", params={"q": ""}, headers=svc.author).status_code == 422


def test_an_assignment_by_metadata_takes_the_texts_the_pool_list_finds(idle_svc: Svc) -> None:
    svc = idle_svc
    c = svc.client
    check(c.post("/v1/models", json={"handle": H}, headers=svc.author), 201)
    meta = [{"region": "north" if i % 2 else "south", "ticket": i} for i in range(len(POOL))]
    body = {"texts": POOL, "metadata": meta}
    ids = check(c.post(f"/v1/models/{H}/pool", json=body, headers=svc.author), 201)["ids"]
    north = [i for i, m in zip(ids, meta, strict=True) if m["region"] == "north"]
    got = assign(svc, annotator="alice", filter={"meta": {"region": "north"}}, count=3)
    assert (got["assigned"], got["total"]) == (3, 3)
    # The pool list and the assignment read one rule: the same texts, oldest first.
    listed = check(c.get(f"/v1/models/{H}/pool", params={"meta": "region:north"}, headers=svc.author), 200)
    assert [t["id"] for t in listed["items"]] == north
    # With the phrase too, every condition holds; a number matches as text ("9" is the ticket 9).
    both = {"q": "hey there", "meta": {"region": "north", "ticket": "9"}}
    assert assign(svc, annotator="bob", filter=both)["assigned"] == 1
    with transaction(svc.ctx.reads) as s:
        given = s.execute(select(PoolAssignment.annotator, PoolAssignment.pool_text_id)).tuples().all()
    assert sorted(given) == sorted([("alice", i) for i in north[:3]] + [("bob", ids[9])])
    assert "hey there" in POOL[9]
    # Values the pool list would refuse are refused here too, and nothing is assigned.
    url = f"/v1/models/{H}/assignments"
    too_many = {f"k{i}": "v" for i in range(21)}
    for bad, code in (
        ({"meta": ["region", "north"]}, "validation_error"),  # not an object
        ({"meta": {"ticket": 9}}, "validation_error"),  # values are text
        ({"meta": {"": "north"}}, "invalid_metadata_filter"),
        ({"meta": {" ": "north"}}, "invalid_metadata_filter"),
        ({"meta": too_many}, "invalid_metadata_filter"),
        ({"meta": {"region": "n" * 4_001}}, "invalid_metadata_filter"),
    ):
        resp = c.post(url, json={"annotator": "carol", "filter": bad}, headers=svc.author)
        assert error_code(resp, 422) == code, bad
    # The pool list's `meta=` holds to the same bounds.
    resp = c.get(f"/v1/models/{H}/pool", params={"meta": f"{'k' * 65}:v"}, headers=svc.author)
    assert error_code(resp, 422) == "invalid_metadata_filter"
    assert "carol" not in work(svc)
