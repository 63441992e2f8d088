"""A team labelling one model: claimed suggestions (disjoint work, leases, skips, reloads), votes wanted per
text, the labelling route that never refuses a label for the model's state, and pausing automatic retraining.
Every test runs on SQLite and on PostgreSQL (the `svc` fixtures)."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import httpx
from sqlalchemy import func, select, update

from core.contract import DEFAULT_CLAIMS_PER_PERSON
from harness.texts import WORDS
from service.store.api_keys import create_key
from service.store.db import transaction
from service.store.schema import PoolClaim, SampleRow, utcnow
from tests.support.service import (
    CASUAL,
    FORMAL,
    Svc,
    auth,
    check,
    error_code,
    loopback,
    make_model,
    wait_settled,
)

TRAITS = [{"name": "Formality", "positive_label": "formal", "negative_label": "casual"}]
# Sixty texts far apart (no two near-duplicates, which a suggestion never hands out together).
POOL = [
    f"{WORDS[i % 25]} {WORDS[(i * 7 + 3) % 23]} {WORDS[(i * 11 + 5) % 19]} {WORDS[(i * 13 + 1) % 17]}"
    for i in range(60)
]


def person(svc: Svc, name: str, role: str = "owner") -> dict[str, str]:
    with transaction(svc.ctx.sessions) as s:
        return auth(create_key(s, ["acme"], "authoring", name, role=role))


def draft(svc: Svc, handle: str, pool: list[str] = POOL, **fields: Any) -> None:
    c = svc.client
    check(c.post("/v1/models", json={"handle": handle, **fields}, headers=svc.author), 201)
    check(c.post(f"/v1/models/{handle}/traits", json={"traits": TRAITS}, headers=svc.author), 201)
    check(c.post(f"/v1/models/{handle}/pool", json={"texts": pool}, headers=svc.author), 201)


def suggest(svc: Svc, handle: str, key: dict[str, str], k: int = 10, **body: Any) -> list[dict[str, Any]]:
    body = {"trait": "formality", "k": k, "claim": True, **body}
    items: list[dict[str, Any]] = check(
        svc.client.post(f"/v1/models/{handle}/pool/suggest", json=body, headers=key), 200
    )["items"]
    return items


def label(svc: Svc, handle: str, key: dict[str, str], text_id: int, quality: float = 1.0) -> dict[str, Any]:
    body = {"trait": "formality", "quality": quality}
    out: dict[str, Any] = check(
        svc.client.post(f"/v1/models/{handle}/pool/{text_id}/label", json=body, headers=key), 201
    )
    return out


def samples(svc: Svc, handle: str, **params: str) -> list[dict[str, Any]]:
    url = f"/v1/models/{handle}/samples"
    items: list[dict[str, Any]] = check(
        svc.client.get(url, params={"limit": "500", **params}, headers=svc.author), 200
    )["items"]
    return items


def test_concurrent_suggestions_hand_three_people_disjoint_texts(svc: Svc) -> None:
    h = "acme.claims"
    draft(svc, h)
    keys = {name: person(svc, name) for name in ("alice", "bob", "carol")}
    got: dict[str, list[int]] = {}
    start = threading.Barrier(3)
    with loopback(svc) as base:

        def ask(name: str) -> None:
            with httpx.Client(base_url=base, headers=keys[name], timeout=60) as http:
                start.wait()
                body = {"trait": "formality", "k": 10, "claim": True}
                resp = http.post(f"/v1/models/{h}/pool/suggest", json=body)
                got[name] = [i["id"] for i in check(resp, 200)["items"]]

        threads = [threading.Thread(target=ask, args=(name,)) for name in keys]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    assert sorted(got) == ["alice", "bob", "carol"] and all(len(ids) == 10 for ids in got.values())
    handed = [i for ids in got.values() for i in ids]
    assert len(set(handed)) == 30, "a text was handed to two people at once"
    with transaction(svc.ctx.reads) as s:
        rows = s.execute(select(PoolClaim.pool_text_id, PoolClaim.annotator)).tuples().all()
    assert sorted(rows) == sorted((i, name) for name, ids in got.items() for i in ids)


def test_a_reload_brings_back_the_claimed_texts_and_a_skip_releases_one(svc: Svc) -> None:
    c, h = svc.client, "acme.reload"
    draft(svc, h)
    alice, bob = person(svc, "alice"), person(svc, "bob")
    first = suggest(svc, h, alice, k=5)
    assert all(i["claimed_until"] for i in first)
    again = suggest(svc, h, alice, k=5)  # a reload: the same texts, first, the lease renewed
    assert [i["id"] for i in again] == [i["id"] for i in first]
    assert all(b["claimed_until"] >= a["claimed_until"] for a, b in zip(first, again, strict=True))
    more = suggest(svc, h, alice, k=8)  # still hers first, then new ones
    assert [i["id"] for i in more[:5]] == [i["id"] for i in first] and len(more) == 8
    theirs = {i["id"] for i in suggest(svc, h, bob, k=100)}  # at most DEFAULT_CLAIMS_PER_PERSON held
    assert not theirs & {i["id"] for i in more} and len(theirs) == DEFAULT_CLAIMS_PER_PERSON
    # A plain suggestion (no claim) never hands out a text someone holds either.
    plain = {i["id"] for i in suggest(svc, h, svc.author, k=100, claim=False)}
    assert not plain & (theirs | {i["id"] for i in more})
    # Alice skips one: bob may be handed it at once; a second release finds nothing to let go.
    skipped = first[0]["id"]
    url = f"/v1/models/{h}/pool/{skipped}/claim"
    out = check(c.delete(url, params={"trait": "formality"}, headers=alice), 200)
    assert out == {"handle": h, "id": skipped, "trait": "formality", "released": 1}
    assert check(c.delete(url, headers=alice), 200)["released"] == 0
    check(c.delete(f"/v1/models/{h}/pool/{next(iter(theirs))}/claim", headers=bob), 200)
    assert skipped in {i["id"] for i in suggest(svc, h, person(svc, "carol"), k=100)}
    assert error_code(c.delete(url, params={"trait": "nope"}, headers=alice), 422) == "unknown_trait"


def test_an_expired_lease_frees_the_text_for_others(svc: Svc) -> None:
    h = "acme.lease"
    draft(svc, h, pool=POOL[:6])
    alice, bob = person(svc, "alice"), person(svc, "bob")
    held = {i["id"] for i in suggest(svc, h, alice, k=6)}
    assert len(held) == 6 and suggest(svc, h, bob) == []
    with transaction(svc.ctx.sessions) as s:  # the lease ends (SCORING_CLAIM_LEASE_S later)
        s.execute(update(PoolClaim).values(expires_at=utcnow() - timedelta(seconds=1)))
    assert {i["id"] for i in suggest(svc, h, bob, k=6)} == held
    assert suggest(svc, h, alice) == []  # now bob's


def test_votes_wanted_lets_that_many_people_label_a_text_then_it_leaves_every_queue(svc: Svc) -> None:
    c, h = svc.client, "acme.votes"
    draft(svc, h, pool=POOL[:6])
    model = check(c.get(f"/v1/models/{h}", headers=svc.author), 200)
    assert model["votes_wanted"] == 1 and model["auto_retrain"] is True
    assert (
        check(c.patch(f"/v1/models/{h}", json={"votes_wanted": 2}, headers=svc.author), 200)["votes_wanted"]
        == 2
    )
    for bad in (0, 11, 1.5, "2", True):
        assert error_code(c.patch(f"/v1/models/{h}", json={"votes_wanted": bad}, headers=svc.author), 422)
    alice, bob, carol = (person(svc, n) for n in ("alice", "bob", "carol"))
    a = {i["id"] for i in suggest(svc, h, alice, k=6)}
    b = {i["id"] for i in suggest(svc, h, bob, k=6)}
    assert a == b and len(a) == 6  # two votes wanted: two people may hold each text
    assert suggest(svc, h, carol) == []
    done = sorted(a)[:3]
    for i in done:
        assert label(svc, h, alice, i)["votes"] == 1
    for i in done:
        out = label(svc, h, bob, i, 0.0)
        assert out["votes"] == 2 and out["votes_wanted"] == 2 and out["stored_as"] == "sample"
    # Two votes each: those texts leave every queue, labelled or not by the asker; the rest stay held.
    assert suggest(svc, h, carol) == []
    with transaction(svc.ctx.sessions) as s:
        s.execute(update(PoolClaim).values(expires_at=utcnow() - timedelta(seconds=1)))
    assert {i["id"] for i in suggest(svc, h, carol)} == a - set(done)
    left = check(c.post(f"/v1/models/{h}/pool/suggest", json={"trait": "formality"}, headers=carol), 200)
    assert left["unlabelled"] == 3


def test_with_more_votes_wanted_texts_wanting_votes_lead_the_queue(svc: Svc) -> None:
    """Two votes wanted: a colleague's labelled texts come before new ones, as the Label page takes its queue
    in the answer's order (spread among new ones, the first labels after a campaign change opened new texts
    while half-voted ones waited)."""
    c, h = svc.client, "acme.wantfirst"
    draft(svc, h, pool=POOL[:30])
    check(c.patch(f"/v1/models/{h}", json={"votes_wanted": 2}, headers=svc.author), 200)
    alice, bob = person(svc, "alice"), person(svc, "bob")
    given = [i["id"] for i in suggest(svc, h, alice, k=3)]
    for i in given:
        label(svc, h, alice, i)
    items = suggest(svc, h, bob, k=10)
    assert [(i["id"], i["overlap"]) for i in items[:3]] == [(i, True) for i in sorted(given)]
    assert not any(i["overlap"] for i in items[3:]) and len(items) == 10


def test_overlap_gives_that_share_of_texts_a_second_vote(svc: Svc) -> None:
    """Three people, 20 % overlap, one vote wanted: each takes its work from the suggestions it is handed
    (claimed, so nobody duplicates another's fresh text); about a fifth of their picks are second votes."""
    h = "acme.overlap"
    draft(svc, h)
    keys = [person(svc, n) for n in ("alice", "bob", "carol")]
    while True:  # until the fresh texts run out (after that, only second votes would be left to give)
        rounds = [suggest(svc, h, key, k=5, overlap=0.2) for key in keys]
        if not any(not i["overlap"] for items in rounds for i in items):
            break
        for key, items in zip(keys, rounds, strict=True):
            for n, item in enumerate(items):
                label(svc, h, key, item["id"], float(n % 2))
    votes: dict[str, int] = {}
    for row in samples(svc, h):
        votes[row["text"]] = votes.get(row["text"], 0) + 1
    assert len(votes) >= 50 and max(votes.values()) <= 3
    twice = sum(v == 2 for v in votes.values()) / len(votes)
    assert 0.1 <= twice <= 0.35, twice


def test_a_label_on_a_text_deleted_meanwhile_is_refused_and_stores_nothing(svc: Svc) -> None:
    c, h = svc.client, "acme.gone"
    draft(svc, h)
    alice = person(svc, "alice")
    [item] = suggest(svc, h, alice, k=1)
    check(c.delete(f"/v1/models/{h}/pool/{item['id']}", headers=svc.author), 200)
    resp = c.post(
        f"/v1/models/{h}/pool/{item['id']}/label", json={"trait": "formality", "quality": 1}, headers=alice
    )
    assert error_code(resp, 404) == "pool_text_not_found" and "not stored" in resp.json()["error"]["message"]
    assert error_code(c.delete(f"/v1/models/{h}/pool/{item['id']}/claim", headers=alice), 404) == (
        "pool_text_not_found"
    )
    with transaction(svc.ctx.reads) as s:
        assert s.scalar(select(func.count()).select_from(SampleRow)) == 0
        assert s.scalar(select(func.count()).select_from(PoolClaim)) == 0
    for bad in ({"trait": "formality", "quality": 1.5}, {"trait": "formality"}, {"quality": 1}):
        [other] = suggest(svc, h, alice, k=1)
        resp = c.post(f"/v1/models/{h}/pool/{other['id']}/label", json=bad, headers=alice)
        assert error_code(resp, 422) == "validation_error"


def test_labels_while_training_are_buffered_into_the_next_version(idle_svc: Svc) -> None:
    svc = idle_svc
    c, h = svc.client, "acme.busy"
    # The owner chose automatic retraining and no review (a team's model has both the other way by default).
    make_model(c, svc.author, h, with_data=False, auto_retrain=True, review=False)
    check(c.post(f"/v1/models/{h}/traits", json={"traits": TRAITS}, headers=svc.author), 201)
    body = {
        "samples": [{"trait": "formality", "text": t, "quality": 1.0} for t in FORMAL]
        + [{"trait": "formality", "text": t, "quality": 0.0} for t in CASUAL]
    }
    check(c.post(f"/v1/models/{h}/samples", json=body, headers=svc.author), 201)
    check(c.post(f"/v1/models/{h}/pool", json={"texts": POOL[:10]}, headers=svc.author), 201)
    alice = person(svc, "alice", role="annotator")
    items = suggest(svc, h, alice, k=10)
    # Alice's first label: a sample of the draft, for its first version.
    first = label(svc, h, alice, items[0]["id"])
    assert (first["stored_as"], first["buffered"], first["version_no"]) == ("sample", False, 1)
    run = check(c.post(f"/v1/models/{h}/train", json={"effort": "low"}, headers=svc.author), 202)["run_id"]
    # The owner trains; alice's next key press is kept, buffered for the version after the one in flight.
    during = label(svc, h, alice, items[1]["id"], 0.0)
    assert during["state"] == "busy" and during["stored_as"] == "feedback" and during["buffered"] is True
    assert during["version_no"] == 2 and during["buffered_feedback"] == 1
    # Plain imports keep the spec's rule: samples only in a draft (busy: 409 model_busy, retryable).
    one = {"samples": [{"trait": "formality", "text": "Yours truly.", "quality": 1.0}]}
    assert error_code(c.post(f"/v1/models/{h}/samples", json=one, headers=svc.author), 409) == "model_busy"
    svc.ctx.executor.execute(run)
    ready = check(c.get(f"/v1/models/{h}", headers=svc.author), 200)
    assert ready["state"] == "ready" and ready["version_no"] == 1 and ready["buffered_feedback"] == 1
    # After the training: labels go to the buffer, never model_not_draft; a repeat stores nothing twice.
    after = label(svc, h, alice, items[2]["id"])
    assert after["stored_as"] == "feedback" and after["version_no"] == 2 and not after["retraining"]
    assert label(svc, h, alice, items[2]["id"])["id"] == after["id"]
    full = label(svc, h, alice, items[3]["id"])  # the buffer (3 in the tests) is full: a retraining
    assert full["retraining"] and full["version_no"] == 2 and full["buffered_feedback"] == 3
    retrain = check(c.get(f"/v1/models/{h}", headers=svc.author), 200)["last_operation"]["run_id"]
    svc.ctx.executor.execute(retrain)
    v2 = check(c.get(f"/v1/models/{h}", headers=svc.author), 200)
    assert v2["version_no"] == 2 and v2["buffered_feedback"] == 0
    fed = {s["text"]: s["annotator"] for s in samples(svc, h, provenance="feedback")}
    assert fed == {items[i]["text"]: "alice" for i in (1, 2, 3)}


def test_pausing_automatic_retraining_holds_the_buffer_and_resuming_retrains(svc: Svc) -> None:
    c, h = svc.client, "acme.pause"
    make_model(c, svc.author, h, with_data=True, review=False)  # labels train as given (no reviewer here)
    check(c.post(f"/v1/models/{h}/train", json={"effort": "low"}, headers=svc.author), 202)
    wait_settled(c, h, svc.author)
    check(c.post(f"/v1/models/{h}/pool", json={"texts": POOL[:20]}, headers=svc.author), 201)
    alice = person(svc, "alice", role="annotator")
    # Pausing is the owner's: an annotator may label, not manage.
    assert (
        error_code(c.patch(f"/v1/models/{h}", json={"auto_retrain": False}, headers=alice), 403)
        == "forbidden"
    )
    paused = check(c.patch(f"/v1/models/{h}", json={"auto_retrain": False}, headers=svc.author), 200)
    assert paused["auto_retrain"] is False and paused["state"] == "ready"
    items = suggest(svc, h, alice, k=10)
    for n, item in enumerate(items):  # over three buffers' worth: no automatic version
        out = label(svc, h, alice, item["id"], float(n % 2))
        assert out["stored_as"] == "feedback" and not out["retraining"] and out["version_no"] == 2
    model = check(c.get(f"/v1/models/{h}", headers=svc.author), 200)
    assert (model["state"], model["version_no"], model["buffered_feedback"]) == ("ready", 1, 10)
    resumed = check(c.patch(f"/v1/models/{h}", json={"auto_retrain": True}, headers=svc.author), 200)
    assert resumed["auto_retrain"] is True
    [nxt] = suggest(svc, h, alice, k=1)
    assert label(svc, h, alice, nxt["id"])["retraining"] is True
    model = wait_settled(c, h, svc.author)
    assert model["version_no"] == 2 and model["buffered_feedback"] == 0
    assert len(samples(svc, h, provenance="feedback")) == 11


def test_a_new_model_can_be_created_with_the_campaign_settings(svc: Svc) -> None:
    c = svc.client
    body = {"handle": "acme.campaign", "votes_wanted": 3, "auto_retrain": False}
    made = check(c.post("/v1/models", json=body, headers=svc.author), 201)
    assert made["votes_wanted"] == 3 and made["auto_retrain"] is False
    listed = check(c.get("/v1/models", params={"namespace": "acme"}, headers=svc.author), 200)["items"]
    assert [(m["votes_wanted"], m["auto_retrain"]) for m in listed if m["handle"] == "acme.campaign"] == [
        (3, False)
    ]


# -- fair claims: bounded per person, held while shown, never a vote beyond those wanted ---------------------


def answer(svc: Svc, handle: str, key: dict[str, str], k: int = 10) -> dict[str, Any]:
    body = {"trait": "formality", "k": k, "claim": True}
    out: dict[str, Any] = check(
        svc.client.post(f"/v1/models/{handle}/pool/suggest", json=body, headers=key), 200
    )
    return out


def test_two_people_asking_for_the_most_hold_a_bounded_share_and_the_answer_says_so(svc: Svc) -> None:
    h = "acme.hogs"
    draft(svc, h)
    alice, bob, carol = person(svc, "alice"), person(svc, "bob"), person(svc, "carol")
    assert len(answer(svc, h, alice, k=100)["items"]) == DEFAULT_CLAIMS_PER_PERSON
    assert len(answer(svc, h, bob, k=100)["items"]) == len(POOL) - DEFAULT_CLAIMS_PER_PERSON
    left = answer(svc, h, carol)  # the rest is held: the answer says why it is empty
    assert left["items"] == [] and left["unlabelled"] == left["held_by_others"] == len(POOL)
    again = answer(svc, h, alice, k=100)  # asking again renews hers, takes no more
    assert len(again["items"]) == DEFAULT_CLAIMS_PER_PERSON and again["held_by_others"] == len(POOL) - 40


def test_a_claim_lasts_while_its_text_is_shown(svc: Svc) -> None:
    h = "acme.shown"
    draft(svc, h, pool=POOL[:12])
    alice, bob = person(svc, "alice"), person(svc, "bob")
    first = [i["id"] for i in suggest(svc, h, alice, k=10)]
    kept = [i["id"] for i in suggest(svc, h, alice, k=3)]  # the page now shows three of them
    assert kept == first[:3]
    theirs = {i["id"] for i in suggest(svc, h, bob, k=12)}
    assert set(first[3:]) <= theirs and not theirs & set(kept)


def test_a_colleague_s_claimed_text_cannot_take_a_vote_beyond_those_wanted(svc: Svc) -> None:
    c, h = svc.client, "acme.steal"
    draft(svc, h, pool=POOL[:4])
    alice, bob = person(svc, "alice"), person(svc, "bob")
    held = [i["id"] for i in suggest(svc, h, alice, k=4)]
    body = {"trait": "formality", "quality": 0.0}
    url = f"/v1/models/{h}/pool/{held[0]}/label"
    assert error_code(c.post(url, json=body, headers=bob), 409) == "pool_text_taken"
    assert samples(svc, h) == []  # nothing stored
    out = label(svc, h, alice, held[0])
    assert (out["votes"], out["votes_wanted"]) == (1, 1)
    assert error_code(c.post(url, json=body, headers=bob), 409) == "pool_text_taken"
    assert label(svc, h, alice, held[0], quality=0.0)["votes"] == 1  # her own vote changes, still one


def test_a_lease_that_ran_out_and_went_to_a_colleague_who_labelled_it_refuses_the_late_label(
    svc: Svc,
) -> None:
    c, h = svc.client, "acme.late"
    draft(svc, h, pool=POOL[:3])
    alice, bob = person(svc, "alice"), person(svc, "bob")
    held = {i["id"] for i in suggest(svc, h, alice, k=3)}
    with transaction(svc.ctx.sessions) as s:  # alice's lease ends
        s.execute(update(PoolClaim).values(expires_at=utcnow() - timedelta(seconds=1)))
    theirs = [i["id"] for i in suggest(svc, h, bob, k=3)]
    assert set(theirs) == held
    assert label(svc, h, bob, theirs[0])["votes"] == 1
    body = {"trait": "formality", "quality": 1.0}
    late = c.post(f"/v1/models/{h}/pool/{theirs[0]}/label", json=body, headers=alice)
    assert error_code(late, 409) == "pool_text_taken"
    assert len(samples(svc, h)) == 1


def test_a_claimed_text_labelled_by_someone_else_leaves_the_holder_s_queue(svc: Svc) -> None:
    c, h = svc.client, "acme.leaves"
    draft(svc, h, pool=POOL[:4])
    alice = person(svc, "alice")
    held = [i["id"] for i in suggest(svc, h, alice, k=4)]
    text = c.get(f"/v1/models/{h}/pool", headers=svc.author).json()["items"]
    gone = next(t for t in text if t["id"] == held[0])
    # A file's row (an external rater's vote; the owner's own vote would be refused as the pool refuses it).
    sample = {
        "trait": "formality",
        "text": gone["text"],
        "quality": 1.0,
        "provenance": "imported",
        "annotator": "rater-7",
    }
    check(c.post(f"/v1/models/{h}/samples", json={"samples": [sample]}, headers=svc.author), 201)
    assert [i["id"] for i in suggest(svc, h, alice, k=4)] == held[1:]
    body = {"trait": "formality", "quality": 0.0}
    late = c.post(f"/v1/models/{h}/pool/{held[0]}/label", json=body, headers=alice)
    assert error_code(late, 409) == "pool_text_taken"


def test_a_claim_taken_before_the_owner_wanted_more_votes_still_labels(svc: Svc) -> None:
    """alice's texts were claimed while one vote was wanted; the owner then wants three, and bob labels one
    of them first: alice's label is the second of three wanted, stored, not refused as taken."""
    c, h = svc.client, "acme.more-votes"
    draft(svc, h, pool=POOL[:4])
    alice, bob = person(svc, "alice"), person(svc, "bob")
    held = [i["id"] for i in suggest(svc, h, alice, k=4)]
    check(c.patch(f"/v1/models/{h}", json={"votes_wanted": 3}, headers=svc.author), 200)
    assert label(svc, h, bob, held[0], 0.0)["votes"] == 1
    out = label(svc, h, alice, held[0])
    assert (out["votes"], out["votes_wanted"]) == (2, 3)
    assert held[1] in {i["id"] for i in suggest(svc, h, alice, k=4)}  # her claims stay hers


def test_the_samples_route_refuses_a_text_a_colleague_holds_as_the_pool_route_does(svc: Svc) -> None:
    """A colleague's live claim refuses the caller's own vote of that text through `POST …/samples` as it
    refuses `POST …/pool/{id}/label` (409 `pool_text_taken`, nothing stored, the claim kept); once the
    colleague lets go, the same sample is stored. A text nobody holds is stored as before."""
    h = "acme.claimsamples"
    draft(svc, h, votes_wanted=1)
    ann, bob = person(svc, "ann", "annotator"), person(svc, "bob", "annotator")
    [held] = suggest(svc, h, ann, k=1)
    sample = {"samples": [{"trait": "formality", "text": held["text"], "quality": 1.0}]}
    for resp in (
        svc.client.post(f"/v1/models/{h}/samples", json=sample, headers=bob),
        svc.client.post(
            f"/v1/models/{h}/pool/{held['id']}/label",
            json={"trait": "formality", "quality": 1.0},
            headers=bob,
        ),
    ):
        assert error_code(resp, 409) == "pool_text_taken"
    with transaction(svc.ctx.reads) as s:
        assert s.scalar(select(func.count()).select_from(SampleRow)) == 0
        assert s.scalar(select(func.count()).select_from(PoolClaim)) == 1
    free = next(t for t in POOL if t != held["text"])
    check(
        svc.client.post(
            f"/v1/models/{h}/samples",
            json={"samples": [{"trait": "formality", "text": free, "quality": 0.0}]},
            headers=bob,
        ),
        201,
    )
    check(svc.client.delete(f"/v1/models/{h}/pool/{held['id']}/claim", headers=ann), 200)
    check(svc.client.post(f"/v1/models/{h}/samples", json=sample, headers=bob), 201)


def test_overlap_routes_its_share_when_everyone_fetched_before_anyone_labelled(svc: Svc) -> None:
    """20 % overlap is a fifth of each person's work, not of each answer: queues fetched before anyone
    labelled (nothing to second yet) are made up for at the next answer, and short answers (k=2, whose own
    fifth rounds to none) still route it."""
    h = "acme.overlap_first"
    draft(svc, h)
    keys = [person(svc, n) for n in ("alice", "bob", "carol")]
    first = [suggest(svc, h, key, k=10, overlap=0.2) for key in keys]
    assert not any(i["overlap"] for items in first for i in items)
    for key, items in zip(keys, first, strict=True):
        for n, item in enumerate(items):
            label(svc, h, key, item["id"], float(n % 2))
    again = [suggest(svc, h, key, k=10, overlap=0.2) for key in keys]
    assert [sum(i["overlap"] for i in items) for items in again] == [4, 4, 4]  # a fifth of 20 each
    for key, items in zip(keys, again, strict=True):
        for item in items:
            label(svc, h, key, item["id"])
    # Two at a time (an answer whose own fifth rounds to none): each person's 22nd vote is a second one.
    for want in ([False, False], [False, True]):
        for key in keys:
            items = suggest(svc, h, key, k=2, overlap=0.2)
            assert sorted(i["overlap"] for i in items) == want
            for item in items:
                label(svc, h, key, item["id"])
