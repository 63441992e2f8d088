"""Labels are proposals until accepted (docs/api.md "Review"): on a team's model an annotator's votes and
feedback labels train only once a reviewer, or the owner's agreement rule, accepts them; a rejected one
never trains and stays visible to its author with the reviewer's comment."""

from __future__ import annotations

from typing import Any

from service.store.api_keys import create_key
from service.store.db import transaction
from tests.support.service import Svc, check, error_code, make_model, train_ready, wait_settled
from tests.support.service import auth as bearer


def person(svc: Svc, name: str, role: str) -> dict[str, str]:
    with transaction(svc.ctx.sessions) as s:
        return bearer(create_key(s, ["acme"], "authoring", name, role))


def vote(text: str, quality: float) -> dict[str, Any]:
    return {"trait": "formality", "text": text, "quality": quality}


def queue(svc: Svc, handle: str, key: dict[str, str], status: str = "pending") -> dict[str, Any]:
    page: dict[str, Any] = check(
        svc.client.get(f"/v1/models/{handle}/review", params={"status": status}, headers=key), 200
    )
    return page


def refs(page: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"kind": i["kind"], "id": i["id"]} for i in page["items"]]


def test_an_annotators_votes_wait_for_a_reviewer_and_a_rejection_says_why(svc: Svc) -> None:
    c, owner, h = svc.client, svc.author, "acme.rev"
    make_model(c, owner, h)
    ann, rita = person(svc, "ann", "annotator"), person(svc, "rita", "reviewer")
    assert check(c.get(f"/v1/models/{h}", headers=owner), 200)["review"] is True  # a team's default
    mine = [vote("Yours faithfully, the secretary.", 1.0), vote("lol whatever dude", 1.0)]
    check(c.post(f"/v1/models/{h}/samples", json={"samples": mine}, headers=ann), 201)
    pending = queue(svc, h, owner)
    assert [(i["annotator"], i["status"], i["text"]) for i in pending["items"]] == [
        ("ann", "pending", "Yours faithfully, the secretary."),
        ("ann", "pending", "lol whatever dude"),
    ]
    # The annotator cannot accept her own labels; another namespace cannot see them.
    body = {"decision": "accept", "items": refs(pending)}
    assert error_code(c.post(f"/v1/models/{h}/review", json=body, headers=ann), 403) == "forbidden"
    assert error_code(c.get(f"/v1/models/{h}/review", headers=svc.other), 404) == "model_not_found"
    assert (
        error_code(c.post(f"/v1/models/{h}/review", json=body, headers=svc.other), 404) == "model_not_found"
    )
    assert len(queue(svc, h, owner)["items"]) == 2

    # Trained now, the pending votes are left out.
    model = train_ready(c, owner, h)
    version = check(c.get(f"/v1/models/{h}/versions/v1", headers=owner), 200)
    assert version["sample_count"] == model["sample_count"] - 2

    accepted, rejected = refs(pending)
    check(
        c.post(f"/v1/models/{h}/review", json={"decision": "accept", "items": [accepted]}, headers=rita), 200
    )
    out = check(
        c.post(
            f"/v1/models/{h}/review",
            json={"decision": "reject", "items": [rejected], "comment": "casual, not formal"},
            headers=rita,
        ),
        200,
    )
    assert out["reviewed"] == 1 and out["items"][0]["status"] == "rejected"
    seen = queue(svc, h, ann, "rejected")
    assert [(i["text"], i["reviewed_by"], i["comment"]) for i in seen["items"]] == [
        ("lol whatever dude", "rita", "casual, not formal")
    ]
    assert seen["people"] == [
        {"annotator": "ann", "accepted": 1, "rejected": 1, "pending": 0, "acceptance_rate": 0.5}
    ]
    assert queue(svc, h, owner)["items"] == []
    events = check(c.get("/v1/namespaces/acme/audit", headers=owner), 200)["items"]
    reviewed = [e for e in events if e["kind"] == "labels_reviewed"]
    assert [(e["actor"], e["detail"]["decision"], e["detail"]["annotators"]) for e in reviewed] == [
        ("rita", "reject", ["ann"]),
        ("rita", "accept", ["ann"]),
    ]
    # A label named that is not this model's decides nothing.
    resp = c.post(
        f"/v1/models/{h}/review",
        json={"decision": "accept", "items": [{"kind": "sample", "id": 999999}]},
        headers=rita,
    )
    assert error_code(resp, 404) == "label_not_found"


def test_feedback_labels_train_once_accepted(svc: Svc) -> None:
    c, owner, h = svc.client, svc.author, "acme.revfb"
    make_model(c, owner, h, auto_retrain=True)  # the owner chose automatic retraining
    train_ready(c, owner, h)
    ann, rita = person(svc, "ann", "annotator"), person(svc, "rita", "reviewer")
    for i in range(3):  # a full buffer (3 in the tests), all pending: no retraining
        body = {
            "content": f"We hereby acknowledge item {i}.",
            "feedback": [{"trait": "formality", "quality": 1.0}],
        }
        check(c.post(f"/v1/models/{h}/score", json=body, headers=ann), 200)
    model = wait_settled(c, h, owner)
    assert model["version_no"] == 1 and model["buffered_feedback"] == 3
    pending = queue(svc, h, rita)
    assert [i["kind"] for i in pending["items"]] == ["feedback"] * 3
    check(
        c.post(f"/v1/models/{h}/review", json={"decision": "accept", "items": refs(pending)}, headers=rita),
        200,
    )
    model = wait_settled(c, h, owner)  # accepting filled the buffer: the retraining took them in
    assert model["version_no"] == 2 and model["buffered_feedback"] == 0


def test_the_agreement_rule_accepts_agreeing_votes_only(svc: Svc) -> None:
    c, owner, h = svc.client, svc.author, "acme.agree"
    make_model(c, owner, h)
    check(c.patch(f"/v1/models/{h}", json={"accept_rule": "agreement"}, headers=owner), 200)
    ann, bob = person(svc, "ann", "annotator"), person(svc, "bob", "annotator")
    both = "We would be grateful for your prompt reply."
    split = "see ya round"
    check(
        c.post(f"/v1/models/{h}/samples", json={"samples": [vote(both, 1.0), vote(split, 0.0)]}, headers=ann),
        201,
    )
    assert len(queue(svc, h, owner)["items"]) == 2  # one vote each: nothing agreed yet
    check(
        c.post(f"/v1/models/{h}/samples", json={"samples": [vote(both, 0.9), vote(split, 1.0)]}, headers=bob),
        201,
    )
    accepted = [i for i in queue(svc, h, owner, "accepted")["items"] if i["reviewed_by"] == "agreement"]
    assert sorted((i["annotator"], i["text"]) for i in accepted) == [("ann", both), ("bob", both)]
    assert sorted((i["annotator"], i["text"]) for i in queue(svc, h, owner)["items"]) == [
        ("ann", split),
        ("bob", split),
    ]


def test_rejected_votes_leave_the_agreement_and_pending_ones_count(svc: Svc) -> None:
    """A pending vote is a real vote (the agreement rule reads them); a rejected one never counts: not in
    the agreement's figures, its disagreements, nor the Team progress's agreement with colleagues."""
    c, owner, h = svc.client, svc.author, "acme.agreerej"
    make_model(c, owner, h)
    ann, rita = person(svc, "ann", "annotator"), person(svc, "rita", "reviewer")
    texts = [f"Reply number {i} to the customer, as drafted." for i in range(4)]
    for key, qualities in ((rita, (1, 1, 0, 0)), (ann, (1, 0, 0, 1))):
        rows = [vote(t, q) for t, q in zip(texts, qualities, strict=True)]
        check(c.post(f"/v1/models/{h}/samples", json={"samples": rows}, headers=key), 201)

    def figures() -> tuple[dict[str, Any], dict[str, Any]]:
        agreement = check(c.get(f"/v1/models/{h}/agreement", headers=owner), 200)["traits"]["formality"]
        people = check(c.get(f"/v1/models/{h}/team", headers=owner), 200)["people"]
        return agreement, next(p for p in people if p["annotator"] == "ann" and p["trait"] == "formality")

    agreement, progress = figures()  # ann's four votes, pending, count
    assert agreement["texts_with_votes"] == 4
    assert {a["annotator"]: a["votes"] for a in agreement["annotators"]}["ann"] == 4
    assert (progress["compared_others"], progress["agreement_others"]) == (4, 0.5)

    split = [i for i in queue(svc, h, rita)["items"] if i["text"] in (texts[1], texts[3])]
    check(c.post(f"/v1/models/{h}/review", json={"decision": "reject", "items": refs({"items": split})},
                 headers=rita), 200)  # fmt: skip
    agreement, progress = figures()
    assert agreement["texts_with_votes"] == 2
    assert {a["annotator"]: a["votes"] for a in agreement["annotators"]}["ann"] == 2
    assert [
        p["same_pole"] / p["texts"] for p in agreement["pairwise"] if {p["a"], p["b"]} == {"ann", "rita"}
    ] == [1.0]
    assert not [v for t in agreement["disagreed"] for v in t["votes"] if v["annotator"] == "ann"
                and t["text"] in (texts[1], texts[3])]  # fmt: skip
    assert (progress["compared_others"], progress["agreement_others"]) == (2, 1.0)
    assert progress["labels"] == 4  # her work, rejected or not


def test_one_persons_model_is_not_reviewed(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "lab.alone")
    assert check(c.get("/v1/models/lab.alone", headers=h), 200)["review"] is False
    assert queue(svc, "lab.alone", h)["items"] == []


def test_an_owner_removes_every_label_of_one_person_and_undoes_it(svc: Svc) -> None:
    c, owner, h = svc.client, svc.author, "acme.remove"
    make_model(c, owner, h)
    ann, bob = person(svc, "ann", "annotator"), person(svc, "bob", "annotator")
    flood = [vote(f"flood {i}", 1.0) for i in range(30)]
    check(c.post(f"/v1/models/{h}/samples", json={"samples": flood}, headers=ann), 201)
    check(c.post(f"/v1/models/{h}/unsure", json={"trait": "formality", "text": "flood 1"}, headers=ann), 201)
    check(c.post(f"/v1/models/{h}/samples", json={"samples": [vote("bob's own", 0.0)]}, headers=bob), 201)
    before = check(c.get(f"/v1/models/{h}", headers=owner), 200)["sample_count"]
    listed = check(c.get(f"/v1/models/{h}/samples", params={"limit": 500}, headers=owner), 200)["items"]
    ids = {s["text"]: s["id"] for s in listed if s["annotator"] == "ann"}
    # Not an annotator's, nor another namespace's, call.
    assert (
        error_code(c.delete(f"/v1/models/{h}/labels", params={"annotator": "ann"}, headers=bob), 403)
        == "forbidden"
    )
    resp = c.delete(f"/v1/models/{h}/labels", params={"annotator": "ann"}, headers=svc.other)
    assert error_code(resp, 404) == "model_not_found"

    out = check(c.delete(f"/v1/models/{h}/labels", params={"annotator": "ann"}, headers=owner), 200)
    assert out["removed"] == {"samples": 30, "feedback": 0, "unsure": 1} and out["undo"]
    assert check(c.get(f"/v1/models/{h}", headers=owner), 200)["sample_count"] == before - 30
    samples = check(c.get(f"/v1/models/{h}/samples", params={"limit": 500}, headers=owner), 200)["items"]
    assert "ann" not in {s["annotator"] for s in samples} and "bob" in {s["annotator"] for s in samples}
    events = check(c.get("/v1/namespaces/acme/audit", headers=owner), 200)["items"]
    assert (events[0]["kind"], events[0]["detail"]["annotator"], events[0]["detail"]["samples"]) == (
        "labels_removed",
        "ann",
        30,
    )

    assert error_code(c.post(f"/v1/models/{h}/labels/restore", json={"undo": out["undo"]}, headers=ann), 403)
    back = check(c.post(f"/v1/models/{h}/labels/restore", json={"undo": out["undo"]}, headers=owner), 200)
    assert back["restored"] == {"samples": 30, "feedback": 0, "unsure": 1}
    assert check(c.get(f"/v1/models/{h}", headers=owner), 200)["sample_count"] == before
    assert len(queue(svc, h, owner)["items"]) == 31  # pending as they were: ann's 30, bob's 1
    samples = check(c.get(f"/v1/models/{h}/samples", params={"limit": 500}, headers=owner), 200)["items"]
    assert {s["text"]: s["id"] for s in samples if s["annotator"] == "ann"} == ids  # each label its own id
    again = c.post(f"/v1/models/{h}/labels/restore", json={"undo": out["undo"]}, headers=owner)
    assert error_code(again, 404) == "removal_not_found"


def test_a_reviewer_settles_a_text_of_a_trained_model_and_the_next_training_takes_it(svc: Svc) -> None:
    c, owner, h = svc.client, svc.author, "acme.settle"
    make_model(c, owner, h)
    train_ready(c, owner, h)
    ann, rita = person(svc, "ann", "annotator"), person(svc, "rita", "reviewer")
    text = "Kindly advise at your earliest convenience, mate."
    body = {"trait": "formality", "text": text, "quality": 1.0}
    assert error_code(c.post(f"/v1/models/{h}/settle", json=body, headers=ann), 403) == "forbidden"
    out = check(c.post(f"/v1/models/{h}/settle", json=body, headers=rita), 200)  # ready: no reopen needed
    assert out["settled_by"] == "rita" and out["trait"] == "formality"
    assert (
        check(c.post(f"/v1/models/{h}/settle", json=body, headers=rita), 200)["id"] == out["id"]
    )  # a repeat
    other = c.post(f"/v1/models/{h}/settle", json={**body, "quality": 0.0}, headers=owner)
    assert error_code(other, 409) == "already_settled" and "by rita" in other.json()["error"]["message"]
    model = check(c.get(f"/v1/models/{h}", headers=owner), 200)
    assert model["state"] == "ready"
    check(
        c.post(f"/v1/models/{h}/train", json={"effort": "low", "reoptimize_params": True}, headers=owner), 202
    )
    assert wait_settled(c, h, owner)["version_no"] == 2
    v2 = check(c.get(f"/v1/models/{h}/versions/v2", headers=owner), 200)
    assert v2["sample_count"] == model["sample_count"]  # the settling vote among them
