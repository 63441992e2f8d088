"""A team's votes are records, and gold stays secret to those who answer it (docs/api.md, "Gold items").

Written as a team acts: two annotators label a pool text, a reviewer settles it, the owner promotes it to
gold and trains; then every route is read as each of them."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from service.store.api_keys import create_key
from service.store.db import transaction
from service.store.schema import PoolText
from tests.support.service import Svc, auth, check, make_model, train_ready

# A trait's texts far from the model's samples and from one another.
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


def _votes_of(svc: Svc, h: str, key: dict[str, str], text: str) -> list[tuple[str | None, float, str]]:
    items = check(svc.client.get(f"/v1/models/{h}/votes?limit=1000", headers=key), 200)["items"]
    return sorted((x["annotator"], x["quality"], x["kind"]) for x in items if x["text"] == text)


def test_promoting_and_training_a_settled_text_keeps_every_vote_of_it(svc: Svc) -> None:
    """Two annotators' buffered votes of a text a reviewer settled and the owner promoted to gold stay in
    the votes export, in each one's own labels and in the team's counts through the training that follows
    (they are folded in as samples, not trained on); removing the gold item keeps them too, its answers'
    removal is audited by id and annotator."""
    c, h, owner = svc.client, "acme.records", svc.author
    make_model(c, owner, h, review=False, auto_retrain=False, votes_wanted=2)
    train_ready(c, owner, h)
    check(c.post(f"/v1/models/{h}/pool", json={"texts": [TEXT, *OTHERS]}, headers=owner), 201)
    ann, bob, rev = _key(svc, "ann", "annotator"), _key(svc, "bob", "annotator"), _key(svc, "rev", "reviewer")
    ids = _pool_ids(svc)
    assert _label(svc, h, ids[TEXT], 1.0, ann)["stored_as"] == "feedback"
    assert _label(svc, h, ids[TEXT], 0.0, bob)["stored_as"] == "feedback"
    settle = {"trait": "formality", "text": TEXT, "quality": 1.0}
    check(c.post(f"/v1/models/{h}/settle", json=settle, headers=rev), 200)
    promoted = check(
        c.post(f"/v1/models/{h}/gold/promote", json={"trait": "formality", "count": 5}, headers=owner), 200
    )
    assert promoted["added"] == 1
    before = _votes_of(svc, h, owner, TEXT)
    assert before == [("ann", 1.0, "feedback"), ("bob", 0.0, "feedback"), ("rev", 1.0, "sample")]
    # An annotator who did not vote on the gold text reads none of its votes, buffered or settling.
    cat = _key(svc, "cat", "annotator")
    assert _votes_of(svc, h, cat, TEXT) == []
    buffered = check(c.get(f"/v1/models/{h}/feedback", headers=cat), 200)["items"]
    assert buffered == [] and len(check(c.get(f"/v1/models/{h}/feedback", headers=owner), 200)["items"]) == 2
    people = {
        (p["annotator"], p["trait"]): p["labels"]
        for p in check(c.get(f"/v1/models/{h}/team", headers=owner), 200)["people"]
    }

    check(c.post(f"/v1/models/{h}/reopen", headers=owner), 200)
    trained = train_ready(c, owner, h)
    # The votes are still there, as samples now (a training folds the buffer in), and still each one's own.
    assert _votes_of(svc, h, owner, TEXT) == [
        ("ann", 1.0, "sample"),
        ("bob", 0.0, "sample"),
        ("rev", 1.0, "sample"),
    ]
    for key, quality in ((ann, 1.0), (bob, 0.0)):
        mine = check(c.get(f"/v1/models/{h}/my-labels", headers=key), 200)
        assert [(x["text"], x["quality"]) for x in mine["items"]] == [(TEXT, quality)]
        assert mine["total"] == 1
    after = {
        (p["annotator"], p["trait"]): p["labels"]
        for p in check(c.get(f"/v1/models/{h}/team", headers=owner), 200)["people"]
    }
    assert after == people and after[("ann", "formality")] == after[("bob", "formality")] == 1
    # A gold text's votes do not train: the version's formality counts leave the text out.
    version = check(c.get(f"/v1/models/{h}/versions/v{trained['version_no']}", headers=owner), 200)
    assert version["metrics"]["traits"]["formality"]["texts"] == 12

    # Removing the gold item keeps the votes; its answers go, each named in the audit log with its
    # annotator.
    answered = _label(svc, h, ids[TEXT], 0.0, cat)
    assert check(c.get(f"/v1/models/{h}/my-labels", headers=cat), 200)["total"] == 1
    [item] = check(c.get(f"/v1/models/{h}/gold", headers=owner), 200)["items"]
    assert item["answers"] == 1
    check(c.delete(f"/v1/models/{h}/gold/{item['id']}", headers=owner), 200)
    assert len(_votes_of(svc, h, owner, TEXT)) == 3
    events = check(c.get("/v1/namespaces/acme/audit", headers=owner), 200)["items"]
    [removed] = [
        e for e in events if e["kind"] == "gold_changed" and e["detail"].get("deleted") == item["id"]
    ]
    assert removed["detail"]["answers"] == [{"id": answered["id"], "annotator": "cat"}]
    assert removed["actor"] == check(c.get("/v1/keys/current", headers=owner), 200)["name"]


def test_gold_answers_stay_secret_from_annotators_and_no_one_is_served_a_text_they_voted_on(svc: Svc) -> None:
    """An annotator who did not vote on a gold text reads none of its votes (the settling one is the answer)
    in the samples list, the votes export or agreement's disagreed texts, nor any settling vote of a text
    they did not vote on (any settled text may be promoted later), and cannot list gold; the owner reads
    them all. Gold is served to an annotator who did not vote on it, and never to those who voted on it,
    settled it or promoted it; the settler's label of it is a vote, not an answer."""
    c, h, owner = svc.client, "acme.secret", svc.author
    make_model(c, owner, h, review=False, votes_wanted=2)
    settled = "Kindly let us know which date suits the committee best."
    check(c.post(f"/v1/models/{h}/pool", json={"texts": [TEXT, settled, *OTHERS]}, headers=owner), 201)
    ann, bob, rev = _key(svc, "ann", "annotator"), _key(svc, "bob", "annotator"), _key(svc, "rev", "reviewer")
    cat = _key(svc, "cat", "annotator")
    ids = _pool_ids(svc)
    _label(svc, h, ids[TEXT], 1.0, ann)
    _label(svc, h, ids[TEXT], 0.0, bob)
    _label(svc, h, ids[settled], 0.0, ann)
    check(
        c.post(
            f"/v1/models/{h}/settle", json={"trait": "formality", "text": TEXT, "quality": 1.0}, headers=rev
        ),
        200,
    )
    check(c.post(f"/v1/models/{h}/gold/promote", json={"trait": "formality", "count": 5}, headers=owner), 200)
    check(
        c.post(
            f"/v1/models/{h}/settle",
            json={"trait": "formality", "text": settled, "quality": 0.0},
            headers=rev,
        ),
        200,
    )
    check(c.patch(f"/v1/models/{h}", json={"gold_rate": 0.5}, headers=owner), 200)

    def samples(key: dict[str, str]) -> list[tuple[str | None, str, bool]]:
        items = check(c.get(f"/v1/models/{h}/samples?limit=500", headers=key), 200)["items"]
        return sorted(
            (x["annotator"], x["text"], x["adjudicated"]) for x in items if x["text"] in (TEXT, settled)
        )

    def disagreed(key: dict[str, str]) -> list[str]:
        body = check(c.get(f"/v1/models/{h}/agreement", headers=key), 200)
        return [x["text"] for x in body["traits"]["formality"]["disagreed"]]

    everything = sorted(
        [
            ("ann", TEXT, False),
            ("ann", settled, False),
            ("bob", TEXT, False),
            ("rev", TEXT, True),
            ("rev", settled, True),
        ]
    )
    assert samples(owner) == samples(rev) == everything
    assert TEXT in disagreed(owner)
    # cat voted on neither: no vote of the gold text, no settling vote, anywhere.
    assert samples(cat) == [("ann", settled, False)]
    assert (
        _votes_of(svc, h, cat, TEXT) == []
        and [v for v in _votes_of(svc, h, cat, settled) if v[0] == "rev"] == []
    )
    assert TEXT not in disagreed(cat)
    assert check(c.get(f"/v1/models/{h}/gold", headers=cat), 403)["error"]["code"] == "forbidden"
    # bob voted on the gold text, not on the other settled one; ann voted on both: each reads what they
    # voted on.
    assert samples(bob) == sorted(
        [("ann", TEXT, False), ("ann", settled, False), ("bob", TEXT, False), ("rev", TEXT, True)]
    )
    assert samples(ann) == everything and TEXT in disagreed(bob)

    def served(key: dict[str, str]) -> set[str]:
        seen: set[str] = set()
        for _ in range(8):  # at rate 0.5 among 4 or more texts: no gold in 8 answers once in 2^32
            body = {"trait": "formality", "k": 10, "claim": False}
            seen |= {
                x["text"]
                for x in check(c.post(f"/v1/models/{h}/pool/suggest", json=body, headers=key), 200)["items"]
            }
        return seen

    assert TEXT in served(cat)
    for key in (ann, bob, rev, owner):
        assert TEXT not in served(key)
    # The settler's label of the gold text is a vote of theirs, never an answer judged against their own.
    assert _label(svc, h, ids[TEXT], 1.0, rev)["stored_as"] == "sample"
    assert check(c.get(f"/v1/models/{h}/gold/accuracy", headers=owner), 200)["people"] == []


def test_a_settlers_own_vote_reads_trained_alike_and_their_settle_checks_only_others(svc: Svc) -> None:
    """A reviewer votes on a text, then settles it: the training reads her vote (her settle supersedes it),
    so the votes export names the version as her own labels call it trained; and her settle is no check of
    her own vote in the Team page's agreement with settled texts, only of the others'."""
    c, owner, h = svc.client, svc.author, "acme.settler"
    make_model(c, owner, h)
    rita, ann = _key(svc, "rita", "reviewer"), _key(svc, "ann", "annotator")
    vote = {"samples": [{"trait": "formality", "text": TEXT, "quality": 0.0}]}
    check(c.post(f"/v1/models/{h}/samples", json=vote, headers=rita), 201)
    theirs = {"samples": [{"trait": "formality", "text": TEXT, "quality": 0.2}]}
    check(c.post(f"/v1/models/{h}/samples", json=theirs, headers=ann), 201)
    settle = {"trait": "formality", "text": TEXT, "quality": 1.0}
    check(c.post(f"/v1/models/{h}/settle", json=settle, headers=rita), 200)
    people = check(c.get(f"/v1/models/{h}/team", headers=owner), 200)["people"]
    settled = {
        p["annotator"]: (p["compared_settled"], p["agreement_settled"])
        for p in people
        if p["trait"] == "formality"
    }
    assert settled["rita"] == (0, None) and settled["ann"] == (1, 0.0)

    train_ready(c, owner, h)
    votes = check(c.get(f"/v1/models/{h}/votes", headers=owner), 200)["items"]
    exported = {v["id"]: v["version_no"] for v in votes if v["annotator"] == "rita"}
    mine = check(c.get(f"/v1/models/{h}/my-labels", headers=rita), 200)["items"]
    assert len(mine) == 2 and {x["id"]: x["trained"] for x in mine} == {
        i: n is not None for i, n in exported.items()
    }
    assert set(exported.values()) == {1}


def test_ones_labels_read_trained_exactly_where_the_export_names_a_version(svc: Svc) -> None:
    """One rule says whether a label trained: `my-labels` calls it trained exactly where the votes export
    and its text's history name a version, through every turn a label takes after a training read it or
    not (accepted after the training started, corrected, rejected, removed and put back); a gold answer
    reads as its ordinary twin at each turn, and a vote of a text promoted to gold as one of its time."""
    c, owner, h = svc.client, svc.author, "acme.trainedrule"
    make_model(c, owner, h, review=True, auto_retrain=False)
    ann, rita = _key(svc, "ann", "annotator"), _key(svc, "rita", "reviewer")
    check(c.post(f"/v1/models/{h}/pool", json={"texts": [TEXT, *OTHERS]}, headers=owner), 201)
    checks = [f"a gold text about {w}" for w in ("clouds", "sand")]
    gold = {"items": [{"trait": "formality", "text": t, "quality": 1.0} for t in checks]}
    check(c.post(f"/v1/models/{h}/gold", json=gold, headers=owner), 201)
    ids = _pool_ids(svc)
    o0, g0, o1, g1, promoted = (
        _label(svc, h, ids[t], 0.0, ann)["id"] for t in [OTHERS[0], checks[0], OTHERS[1], checks[1], TEXT]
    )
    settle = {"trait": "formality", "text": TEXT, "quality": 1.0}
    check(c.post(f"/v1/models/{h}/settle", json=settle, headers=rita), 200)
    promote = {"trait": "formality", "count": 1}
    assert check(c.post(f"/v1/models/{h}/gold/promote", json=promote, headers=owner), 200)["added"] == 1

    def decide(decision: str, *labels: int) -> None:
        items = [{"kind": "sample", "id": i} for i in labels]
        check(
            c.post(f"/v1/models/{h}/review", json={"decision": decision, "items": items}, headers=rita), 200
        )

    def read() -> dict[int, tuple[bool, int | None]]:
        """Each of ann's labels: (trained, version_no), after checking every route says the same of it."""
        mine = check(c.get(f"/v1/models/{h}/my-labels", headers=ann), 200)["items"]
        versions: dict[int, int | None] = {}
        for key in (owner, ann):  # a gold answer is ann's to read, a gold text's vote the owner's
            exported = check(c.get(f"/v1/models/{h}/votes", headers=key), 200)["items"]
            versions |= {v["id"]: v["version_no"] for v in exported}
        for i in (o0, g0, o1, g1):  # and a text's history says what the export says
            items = check(c.get(f"/v1/models/{h}/labels/{i}/history", headers=ann), 200)["items"]
            assert [v["version_no"] for v in items if v["id"] == i] == [versions[i]], (i, items)
        seen = {x["id"]: (x["trained"], versions.get(x["id"])) for x in mine}
        assert all(trained == (n is not None) for trained, n in seen.values()), seen
        assert seen[o0] == seen[g0] and seen[o1] == seen[g1], seen
        return seen

    decide("accept", o0, g0, promoted)
    train_ready(c, owner, h)  # reads o0, g0 and the promoted text's vote; o1 and g1 wait for review
    assert read() == {o0: (True, 1), g0: (True, 1), o1: (False, None), g1: (False, None), promoted: (True, 1)}
    decide("accept", o1, g1)  # accepted after the training started: none took them in
    assert read()[o1] == (False, None)
    for i in (o0, g0):  # corrected: what it says now no version has trained on
        check(c.post(f"/v1/models/{h}/labels/{i}/correct", json={"quality": 1.0}, headers=rita), 200)
    assert read()[o0] == (False, None)
    check(c.post(f"/v1/models/{h}/reopen", headers=owner), 200)
    train_ready(c, owner, h)
    assert read() == {o0: (True, 2), g0: (True, 2), o1: (True, 2), g1: (True, 2), promoted: (True, 1)}
    decide("reject", o1, g1)  # rejected since: it trains no more
    assert read()[o1] == (False, None)
    before = read()
    out = check(c.delete(f"/v1/models/{h}/labels", params={"annotator": "ann"}, headers=owner), 200)
    check(c.post(f"/v1/models/{h}/labels/restore", json={"undo": out["undo"]}, headers=owner), 200)
    assert read() == before  # put back as they were, each trained in its version
