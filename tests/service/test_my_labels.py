"""One's own labels (docs/api.md "One's own labels"): listed newest first, searched, paged; changed and
withdrawn while untrained, each change audited as a vote edit; a trained label refused with 409."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select

from service.store.api_keys import create_key
from service.store.db import transaction
from service.store.schema import AuditEvent
from tests.support.service import Svc, auth, check, error_code, make_model, train_ready

H = "acme.mine"


def person(svc: Svc, name: str, role: str = "annotator") -> dict[str, str]:
    with transaction(svc.ctx.sessions) as s:
        return auth(create_key(s, ["acme"], "authoring", name, role))


def mine(svc: Svc, key: dict[str, str], **params: Any) -> dict[str, Any]:
    return check(svc.client.get(f"/v1/models/{H}/my-labels", params=params, headers=key), 200)


def events(svc: Svc) -> list[tuple[str, str, dict[str, Any]]]:
    with transaction(svc.ctx.reads) as s:
        rows = s.scalars(select(AuditEvent).where(AuditEvent.handle == H).order_by(AuditEvent.id)).all()
        return [(e.kind, e.actor, e.detail) for e in rows]


def test_own_labels_listed_changed_withdrawn_until_trained(svc: Svc) -> None:
    c = svc.client
    make_model(c, svc.author, H)
    # Labels wait for no reviewer here: this test is about training, not review.
    check(c.patch(f"/v1/models/{H}", json={"review": False}, headers=svc.author), 200)
    ann, bob = person(svc, "ann"), person(svc, "bob")
    texts = ["Kindly confirm receipt.", "lol ok", "We kindly request a reply.", "Respectfully yours."]
    started = datetime.now(UTC)
    for i, text in enumerate(texts):  # one request each: newest first is the reverse
        body = {"samples": [{"trait": "formality", "text": text, "quality": float(i % 2 == 0)}]}
        check(c.post(f"/v1/models/{H}/samples", json=body, headers=ann), 201)
    body = {"samples": [{"trait": "formality", "text": "Kindly, bob.", "quality": 1.0}]}
    [bobs] = check(c.post(f"/v1/models/{H}/samples", json=body, headers=bob), 201)["ids"]

    # Newest first, paged with the cursor; only the caller's own, with the text, trait, label and time.
    first = mine(svc, ann, limit=3)
    assert first["total"] == 4 and first["next_cursor"]
    rest = mine(svc, ann, limit=3, cursor=first["next_cursor"])
    listed = first["items"] + rest["items"]
    assert [x["text"] for x in listed] == texts[::-1] and rest["next_cursor"] is None
    assert {(x["kind"], x["trait"], x["trained"]) for x in listed} == {("sample", "formality", False)}
    assert mine(svc, bob)["total"] == 1
    # Searched by text (any case), by trait, since a time (the Label page's session count).
    assert [x["text"] for x in mine(svc, ann, q="KINDLY")["items"]] == [texts[2], texts[0]]
    assert mine(svc, ann, trait="sentiment")["total"] == 0
    assert mine(svc, ann, since=started.isoformat())["total"] == 4
    assert mine(svc, ann, since=datetime.now(UTC).isoformat())["total"] == 0
    assert mine(svc, ann, since=started.replace(tzinfo=None).isoformat())["total"] == 4  # no zone: UTC
    resp = c.get(
        f"/v1/models/{H}/my-labels", params={"q": "lol", "cursor": first["next_cursor"]}, headers=ann
    )
    assert error_code(resp, 400) == "invalid_cursor"  # a cursor belongs to its filters

    # A change and a withdrawal, each audited; a colleague's label is not in one's own list (404).
    lol, confirm = listed[2], listed[3]
    url = f"/v1/models/{H}/my-labels/sample"
    changed = check(c.patch(f"{url}/{lol['id']}", json={"quality": 1.0}, headers=ann), 200)
    assert changed["quality"] == 1.0 and changed["id"] == lol["id"]
    check(c.delete(f"{url}/{confirm['id']}", headers=ann), 200)
    assert error_code(c.patch(f"{url}/{bobs}", json={"quality": 0.0}, headers=ann), 404) == "label_not_found"
    assert error_code(c.delete(f"{url}/{bobs}", headers=ann), 404) == "label_not_found"
    logged = [(k, a, d.get("sample_id"), d.get("before"), d.get("after")) for k, a, d in events(svc)]
    assert logged[-2:] == [
        ("vote_edited", "ann", lol["id"], {"trait": "formality", "quality": 0.0},
         {"trait": "formality", "quality": 1.0}),
        ("vote_deleted", "ann", confirm["id"], None, None),
    ]  # fmt: skip
    assert mine(svc, ann)["total"] == 3

    # Trained into v1: listed as trained, and no longer changed or withdrawn (409, nothing changed).
    train_ready(c, svc.author, H)
    after = mine(svc, ann)["items"]
    assert all(x["trained"] for x in after)
    resp = c.patch(f"{url}/{lol['id']}", json={"quality": 0.0}, headers=ann)
    assert error_code(resp, 409) == "label_trained" and "v1" in resp.json()["error"]["message"]
    assert error_code(c.delete(f"{url}/{lol['id']}", headers=ann), 409) == "label_trained"
    assert mine(svc, ann)["items"] == after

    # A label of the trained model waits in the buffer: one's own to change and withdraw until it trains.
    [pool_id] = check(c.post(f"/v1/models/{H}/pool", json={"texts": ["Dear all, see below."]},
                             headers=svc.author), 201)["ids"]  # fmt: skip
    label = {"trait": "formality", "quality": 0.0}
    stored = check(c.post(f"/v1/models/{H}/pool/{pool_id}/label", json=label, headers=ann), 201)
    assert stored["stored_as"] == "feedback"
    newest = mine(svc, ann)["items"][0]
    assert (newest["kind"], newest["id"], newest["trained"]) == ("feedback", stored["id"], False)
    fb = f"/v1/models/{H}/my-labels/feedback/{stored['id']}"
    assert check(c.patch(fb, json={"quality": 1.0}, headers=ann), 200)["quality"] == 1.0
    assert error_code(c.delete(fb, headers=bob), 404) == "label_not_found"
    check(c.delete(fb, headers=ann), 200)
    assert [(k, d.get("feedback_id")) for k, _, d in events(svc)[-2:]] == [
        ("vote_edited", stored["id"]),
        ("feedback_withdrawn", stored["id"]),
    ]
    assert mine(svc, ann)["total"] == 3


def test_a_label_on_a_scale_changes_to_another_point(svc: Svc) -> None:
    """On a trait rated on a scale, one's own label changes to another point, checked as the labelling
    route checks a point (422, nothing changed), and keeps the point it lies on, as a quality alone does."""
    c, h = svc.client, "acme.minescale"
    make_model(c, svc.author, h, with_data=False)
    check(c.post(f"/v1/models/{h}/traits", json={"traits": [
        {"name": "Politeness", "positive_label": "polite", "negative_label": "rude", "scale": {"points": 5}},
        {"name": "Formality", "positive_label": "formal", "negative_label": "casual"},
    ]}, headers=svc.author), 201)  # fmt: skip
    ann = person(svc, "ann")
    ids = check(c.post(f"/v1/models/{h}/pool", json={"texts": ["Would you mind?", "Send it now."]},
                       headers=svc.author), 201)["ids"]  # fmt: skip
    given = ({"trait": "politeness", "point": 4}, {"trait": "formality", "quality": 1.0})
    for pid, label in zip(ids, given, strict=True):
        check(c.post(f"/v1/models/{h}/pool/{pid}/label", json=label, headers=ann), 201)
    formal, polite = check(c.get(f"/v1/models/{h}/my-labels", headers=ann), 200)["items"]
    assert (polite["point"], polite["quality"], formal["point"]) == (4, 0.75, None)
    url = f"/v1/models/{h}/my-labels/sample"
    for pid, body, code in [
        (polite["id"], {"point": 6}, "point_out_of_scale"),
        (polite["id"], {"point": 2, "quality": 0.5}, "point_quality_mismatch"),
        (polite["id"], {}, "validation_error"),
        (formal["id"], {"point": 2}, "not_a_scale"),
    ]:
        assert error_code(c.patch(f"{url}/{pid}", json=body, headers=ann), 422) == code, body
    changed = check(c.patch(f"{url}/{polite['id']}", json={"point": 2}, headers=ann), 200)
    assert (changed["point"], changed["quality"]) == (2, 0.25)
    stored = check(c.get(f"/v1/models/{h}/samples", headers=svc.author), 200)["items"]
    assert sorted((x["trait"], x["quality"], x["point"]) for x in stored) == [
        ("formality", 1.0, None),
        ("politeness", 0.25, 2),
    ]  # the refused changes changed nothing; the change moved the stored point too
    again = check(c.patch(f"{url}/{polite['id']}", json={"quality": 1.0}, headers=ann), 200)
    assert (again["point"], again["quality"]) == (5, 1.0)  # a quality alone, as a sample edit takes it
