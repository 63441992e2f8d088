"""A label is named by one id for its life, and the order its votes were given decides which count
(core/engine/votes.py): a settle decides its text's pole whether the votes before it were buffered or
samples, before and after the training that folds the buffer in."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from service.store.api_keys import create_key
from service.store.db import transaction
from service.store.schema import PoolText
from tests.support.service import Svc, auth, check, error_code, make_model, train_ready

TEXT = "The minutes of the meeting are hereby approved as circulated."
OTHERS = [f"pool text number {i} about {w}" for i, w in enumerate(["rivers", "bread", "stars", "tiles"])]


def _key(svc: Svc, name: str, role: str) -> dict[str, str]:
    with transaction(svc.ctx.sessions) as s:
        return auth(create_key(s, ["acme"], "authoring", name, role=role))


def _pool_ids(svc: Svc) -> dict[str, int]:
    with transaction(svc.ctx.reads) as s:
        return dict(s.execute(select(PoolText.text, PoolText.id)).tuples().all())


def _label(svc: Svc, h: str, pool_id: int, quality: float, key: dict[str, str]) -> dict[str, Any]:
    body = {"trait": "formality", "quality": quality}
    out: dict[str, Any] = check(
        svc.client.post(f"/v1/models/{h}/pool/{pool_id}/label", json=body, headers=key), 201
    )
    return out


def _agreed(svc: Svc, h: str, key: dict[str, str]) -> dict[str, Any]:
    body = check(svc.client.get(f"/v1/models/{h}/agreement", headers=key), 200)
    return {x["text"]: x for x in body["traits"]["formality"]["disagreed"]}


def test_a_settle_decides_its_text_after_the_buffered_votes_before_it_are_folded_in(svc: Svc) -> None:
    """The owner votes 0.0, two annotators 1.0 and 0.0 (all buffered: the model is trained), the owner
    settles 1.0: the text is settled at 1.0 before the training and after it (the buffer folded in)."""
    c, h, owner = svc.client, "acme.order", svc.author
    make_model(c, owner, h, review=False, auto_retrain=False, votes_wanted=3)
    train_ready(c, owner, h)
    check(c.post(f"/v1/models/{h}/pool", json={"texts": [TEXT, *OTHERS]}, headers=owner), 201)
    ann, bob = _key(svc, "ann", "annotator"), _key(svc, "bob", "annotator")
    pid = _pool_ids(svc)[TEXT]
    assert _label(svc, h, pid, 0.0, owner)["stored_as"] == "feedback"
    _label(svc, h, pid, 1.0, ann)
    _label(svc, h, pid, 0.0, bob)
    settle = {"trait": "formality", "text": TEXT, "quality": 1.0}
    check(c.post(f"/v1/models/{h}/settle", json=settle, headers=owner), 200)
    before = _agreed(svc, h, owner)
    assert TEXT not in before or (before[TEXT]["adjudicated"] and before[TEXT]["quality"] == 1.0)
    check(c.post(f"/v1/models/{h}/reopen", headers=owner), 200)  # a reopened draft trains the buffer in
    version = train_ready(c, owner, h)
    after = _agreed(svc, h, owner)
    assert TEXT not in after or (after[TEXT]["adjudicated"] and after[TEXT]["quality"] == 1.0)
    # Settled at 1.0: not a contested text of the version that took the votes in.
    got = check(c.get(f"/v1/models/{h}/versions/v{version['version_no']}", headers=owner), 200)
    assert got["metrics"]["traits"]["formality"].get("contested", 0) == 0


def _ids(svc: Svc, h: str, key: dict[str, str], route: str) -> set[int]:
    items = check(svc.client.get(f"/v1/models/{h}/{route}?limit=500", headers=key), 200)["items"]
    return {x["id"] for x in items}


def test_a_label_keeps_its_id_through_the_training_that_folds_it_in_and_no_id_is_given_twice(
    svc: Svc,
) -> None:
    """Buffered labels become samples under the ids they answered with (the votes export, My labels and the
    review list name them so before and after), and labels given later take new ids. The export's
    `version_no` names the version that took a label in: none for a label pending review when a version
    trained, the next one once it is accepted."""
    c, h, owner = svc.client, "acme.ids", svc.author
    make_model(c, owner, h, review=True, auto_retrain=False, votes_wanted=2)
    check(c.post(f"/v1/models/{h}/pool", json={"texts": [TEXT, *OTHERS]}, headers=owner), 201)
    ann = _key(svc, "ann", "annotator")
    ids = _pool_ids(svc)
    pending = _label(svc, h, ids[OTHERS[0]], 1.0, ann)
    assert pending["stored_as"] == "sample"
    train_ready(c, owner, h)
    labels = [_label(svc, h, ids[t], q, ann) for t, q in ((TEXT, 1.0), (OTHERS[1], 0.0))]
    assert {x["stored_as"] for x in labels} == {"feedback"}
    given = {x["id"] for x in labels}
    assert given <= _ids(svc, h, ann, "my-labels") and given <= _ids(svc, h, owner, "votes")
    assert given <= _ids(svc, h, owner, "review")
    items = [{"kind": "feedback", "id": i} for i in sorted(given)]
    check(c.post(f"/v1/models/{h}/review", json={"decision": "accept", "items": items}, headers=owner), 200)

    def version_nos() -> dict[int, int | None]:
        got = check(c.get(f"/v1/models/{h}/votes?limit=500", headers=owner), 200)["items"]
        return {x["id"]: x["version_no"] for x in got}

    assert version_nos()[pending["id"]] is None  # pending when v1 trained: v1 never took it in
    check(
        c.post(
            f"/v1/models/{h}/review",
            json={"decision": "accept", "items": [{"kind": "sample", "id": pending["id"]}]},
            headers=owner,
        ),
        200,
    )
    check(c.post(f"/v1/models/{h}/reopen", headers=owner), 200)
    v2 = train_ready(c, owner, h)["version_no"]
    assert v2 == 2
    folded = check(c.get(f"/v1/models/{h}/votes?limit=500", headers=owner), 200)["items"]
    assert {x["id"]: x["kind"] for x in folded if x["id"] in given} == {i: "sample" for i in given}
    assert given <= _ids(svc, h, ann, "my-labels")
    assert version_nos()[pending["id"]] == 2 and {version_nos()[i] for i in given} == {2}
    later = _label(svc, h, ids[OTHERS[2]], 1.0, ann)
    before = {x["id"] for x in folded}
    assert later["id"] not in before and later["id"] > max(given)
    # The audit log names a reviewed label by that one id.
    events = check(c.get("/v1/namespaces/acme/audit", headers=owner), 200)["items"]
    reviewed = [e["detail"] for e in events if e["kind"] == "labels_reviewed"]
    assert any(set(d["feedback"]) == given for d in reviewed)
    assert any(d["samples"] == [pending["id"]] for d in reviewed)
    # A folded label is reviewed again by the same id, named as the buffered label it was.
    again = [{"kind": "feedback", "id": i} for i in sorted(given)]
    check(c.post(f"/v1/models/{h}/review", json={"decision": "reject", "items": again}, headers=owner), 200)


def test_a_text_s_history_names_every_vote_and_settle_by_its_one_id(svc: Svc) -> None:
    """`GET …/labels/{id}/history` lists the votes of that label's text, buffered ones and a settle, who and
    when, by the same ids before and after the training that folds them in; an annotator who did not vote
    on it reads no settle of it; an id of no label is 404."""
    c, h, owner = svc.client, "acme.history", svc.author
    make_model(c, owner, h, review=False, auto_retrain=False, votes_wanted=2)
    train_ready(c, owner, h)
    check(c.post(f"/v1/models/{h}/pool", json={"texts": [TEXT, *OTHERS]}, headers=owner), 201)
    ann, bob, cat = (_key(svc, n, "annotator") for n in ("ann", "bob", "cat"))
    pid = _pool_ids(svc)[TEXT]
    first = _label(svc, h, pid, 1.0, ann)["id"]
    _label(svc, h, pid, 0.0, bob)
    check(
        c.post(
            f"/v1/models/{h}/settle", json={"trait": "formality", "text": TEXT, "quality": 1.0}, headers=owner
        ),
        200,
    )

    def history(key: dict[str, str]) -> list[tuple[str | None, float | None, bool]]:
        body = check(c.get(f"/v1/models/{h}/labels/{first}/history", headers=key), 200)
        assert body["text"] == TEXT and body["trait"] == "formality"
        return [(x["annotator"], x["quality"], x["adjudicated"]) for x in body["items"]]

    me = check(c.get("/v1/keys/current", headers=owner), 200)["name"]
    want = [("ann", 1.0, False), ("bob", 0.0, False), (me, 1.0, True)]
    assert history(owner) == want
    # ann's vote waits in the buffer: no sample of hers yet, so no settle of the text (gold secrecy's rule).
    assert history(ann) == want[:2]
    ids = [
        x["id"] for x in check(c.get(f"/v1/models/{h}/labels/{first}/history", headers=owner), 200)["items"]
    ]
    check(c.post(f"/v1/models/{h}/reopen", headers=owner), 200)
    train_ready(c, owner, h)
    after = check(c.get(f"/v1/models/{h}/labels/{first}/history", headers=owner), 200)["items"]
    assert [x["id"] for x in after] == ids and {x["kind"] for x in after} == {"sample"}
    assert history(ann) == want  # her vote is a sample now: she reads the settle of a text she voted on
    assert history(cat) == [
        ("ann", 1.0, False),
        ("bob", 0.0, False),
    ]  # no settle of a text cat never voted on
    assert error_code(c.get(f"/v1/models/{h}/labels/999999/history", headers=owner), 404) == "label_not_found"
