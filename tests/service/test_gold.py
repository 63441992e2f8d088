"""Gold items (docs/api.md, "Gold items"): mixed into people's suggestions at the owner's rate and looking
like any text, answers recorded and compared (never votes), accuracy with its Wilson interval for reviewers
and owners only, and gold texts kept out of training and out of the evaluation set."""

from __future__ import annotations

import random
from typing import Any

import pytest
from sqlalchemy import func, select

from core.contract import DEFAULT_GOLD_THRESHOLD
from harness.texts import WORDS
from service.domain.gold import person
from service.domain.gold_queue import plan
from service.store.api_keys import create_key
from service.store.campaign_schema import GoldAnswer
from service.store.db import transaction
from service.store.schema import PoolText, SampleRow
from tests.support.service import Svc, auth, check, error_code, make_model, train_ready

TRAITS = [{"name": "Formality", "positive_label": "formal", "negative_label": "casual"}]
# Texts far apart (no two near-duplicates, which a suggestion never hands out together).
POOL = [f"{WORDS[i % 25]} {WORDS[(i * 7 + 3) % 23]} {WORDS[(i * 11 + 5) % 19]} pool {i}" for i in range(40)]
GOLD = [f"{WORDS[(i * 3 + 1) % 25]} {WORDS[(i * 5 + 2) % 23]} gold text number {i}" for i in range(12)]


def test_the_share_of_gold_is_the_rate_and_its_places_are_uniform() -> None:
    """20,000 texts in answers of 10 at rate 0.1: the share of gold is within 4 standard errors of 0.1, each
    place of an answer holds gold about as often as any other, and never more gold than candidates."""
    rng = random.Random(20261127)
    n, rounds, rate = 10, 2000, 0.1
    per_place = [0] * n
    total = 0
    for _ in range(rounds):
        places = plan(n, rate, list(range(100)), rng)
        assert len(set(places.values())) == len(places)  # a gold item once per answer
        total += len(places)
        for p in places:
            per_place[p] += 1
    share, se = total / (n * rounds), (rate * (1 - rate) / (n * rounds)) ** 0.5
    assert abs(share - rate) < 4 * se, share
    expected = total / n  # each place's count: binomial around it
    assert all(abs(c - expected) < 5 * expected**0.5 for c in per_place), per_place
    assert plan(n, 0.0, [1, 2, 3], rng) == {}
    assert all(len(plan(n, 0.5, [7], rng)) <= 1 for _ in range(50))


def test_accuracy_has_wilson_interval_and_flags_only_surely_under_threshold() -> None:
    seven = person("ann", 10, 7, threshold=DEFAULT_GOLD_THRESHOLD)
    assert seven.accuracy == pytest.approx(0.7)
    assert seven.low == pytest.approx(0.3968, abs=1e-3) and seven.high == pytest.approx(0.8922, abs=1e-3)
    assert not seven.flagged  # 7/10 may be a careful person's unlucky draw under 0.7
    assert person("ann", 10, 7, threshold=0.9).flagged  # its upper end, 0.89, is under 0.9
    none = person("bob", 5, 0, threshold=DEFAULT_GOLD_THRESHOLD)
    assert none.low == 0.0 and none.high == pytest.approx(0.4345, abs=1e-3) and none.flagged


def _key(svc: Svc, name: str, role: str) -> dict[str, str]:
    with transaction(svc.ctx.sessions) as s:
        return auth(create_key(s, ["acme"], "authoring", name, role=role))


def _suggest(
    svc: Svc, handle: str, key: dict[str, str], k: int = 10, claim: bool = True
) -> list[dict[str, Any]]:
    body = {"trait": "formality", "k": k, "claim": claim}
    items: list[dict[str, Any]] = check(
        svc.client.post(f"/v1/models/{handle}/pool/suggest", json=body, headers=key), 200
    )["items"]
    return items


def test_gold_reaches_the_queue_as_any_text_and_answers_are_scored_not_stored(svc: Svc) -> None:
    c, h, owner = svc.client, "acme.gold", svc.author
    check(c.post("/v1/models", json={"handle": h}, headers=owner), 201)
    check(c.post(f"/v1/models/{h}/traits", json={"traits": TRAITS}, headers=owner), 201)
    # Every text, gold ones too, comes with its metadata: a gold item shown without any would stand out.
    meta = {t: {"source": "forum", "row": i} for i, t in enumerate(POOL + GOLD)}
    check(c.post(f"/v1/models/{h}/pool", json={"texts": POOL + GOLD, "metadata": list(meta.values())},
                 headers=owner), 201)  # fmt: skip
    items = [{"trait": "formality", "text": t, "quality": float(i % 2)} for i, t in enumerate(GOLD)]
    added = check(c.post(f"/v1/models/{h}/gold", json={"items": items}, headers=owner), 201)
    assert (added["added"], added["total"], added["duplicates"]) == (len(GOLD), len(GOLD), [])
    again = check(c.post(f"/v1/models/{h}/gold", json={"items": items[:2]}, headers=owner), 201)
    assert (again["added"], again["duplicates"]) == (0, [0, 1])
    known = {t: i % 2 for i, t in enumerate(GOLD)}
    ann = _key(svc, "ann", "annotator")
    # Off by default: gold texts are never handed out as texts to label either.
    assert check(c.get(f"/v1/models/{h}", headers=owner), 200)["gold_rate"] == 0.0
    bob = _key(svc, "bob", "annotator")
    assert {x["text"] for x in _suggest(svc, h, bob, k=len(POOL), claim=False)} == set(POOL)
    check(c.patch(f"/v1/models/{h}", json={"gold_rate": 0.5}, headers=owner), 200)
    seen: list[dict[str, Any]] = []
    answers: dict[str, float] = {}
    ids: list[int] = []  # the label route's ids, in the order given: a gold answer's among them alike
    for _ in range(6):  # six answers of 10 at rate 0.5: none gold once in 2^60
        batch = _suggest(svc, h, ann)
        for x in batch:
            assert set(x) == {"id", "text", "score", "overlap", "claimed_until", "metadata"}
            assert x["claimed_until"] is not None and x["overlap"] is False
            assert x["metadata"] == meta[x["text"]]
        seen += batch
        for x in batch:
            gold = x["text"] in known
            if gold and not answers:  # a skip of gold releases a claim, as of any text
                skip = check(c.delete(f"/v1/models/{h}/pool/{x['id']}/claim", headers=ann), 200)
                assert skip["released"] == 1
            # ann answers gold right on even texts, wrong on odd ones; a label is a label to her.
            q = float(known[x["text"]] if x["text"] in GOLD[::2] else 1 - known[x["text"]]) if gold else 1.0
            out = check(
                c.post(f"/v1/models/{h}/pool/{x['id']}/label", json={"trait": "formality", "quality": q},
                       headers=ann), 201)  # fmt: skip
            assert out["stored_as"] == "sample" and out["votes"] == 1 and not out["retraining"]
            ids.append(out["id"])
            if gold:
                answers[x["text"]] = q
    assert answers, "no gold item was served"
    assert ids == sorted(set(ids))  # one sequence: no id tells an answer from a label
    # Two people's claimed queues share no text when one vote is wanted, gold included.
    cat, dan = _key(svc, "cat", "annotator"), _key(svc, "dan", "annotator")
    for _ in range(3):
        mine = {x["id"] for x in _suggest(svc, h, cat, k=5)}
        theirs = {x["id"] for x in _suggest(svc, h, dan, k=5)}
        assert not mine & theirs
    assert len({x["text"] for x in seen if x["text"] in known}) == len(answers)  # each gold item once
    # The answers are no samples: nothing trains on them.
    with transaction(svc.ctx.sessions) as s:
        stored = set(s.scalars(select(SampleRow.text).where(SampleRow.annotator == "ann")))
        assert not stored & set(GOLD)
        assert s.scalar(select(func.count()).select_from(GoldAnswer)) == len(answers)
    right = sum(1 for t, q in answers.items() if q == known[t])
    # Reviewers and owners see the figures and the gold; an annotator never does.
    rev = _key(svc, "rev", "reviewer")
    for key in (owner, rev):
        figures = check(c.get(f"/v1/models/{h}/gold/accuracy", headers=key), 200)
        [p] = figures["people"]
        assert (p["annotator"], p["answered"], p["correct"]) == ("ann", len(answers), right)
        assert p["low"] <= p["accuracy"] <= p["high"] and figures["confidence"] == 0.95
        listed = check(c.get(f"/v1/models/{h}/gold", headers=key), 200)
        assert sum(g["answers"] for g in listed["items"]) == len(answers)
    for url in (f"/v1/models/{h}/gold/accuracy", f"/v1/models/{h}/gold"):
        assert error_code(c.get(url, headers=ann), 403) == "forbidden"
    url = f"/v1/models/{h}/gold"
    assert error_code(c.post(url, json={"items": items[:1]}, headers=ann), 403) == "forbidden"
    # Deleting a gold item takes its answers; its text is an ordinary pool text again.
    first = listed["items"][0]
    check(c.delete(f"/v1/models/{h}/gold/{first['id']}", headers=owner), 200)
    assert (
        error_code(c.delete(f"/v1/models/{h}/gold/{first['id']}", headers=owner), 404)
        == "gold_item_not_found"
    )
    left = check(c.get(f"/v1/models/{h}/gold", headers=owner), 200)
    assert left["total"] == len(GOLD) - 1


def test_gold_never_trains(svc: Svc) -> None:
    c, h, owner = svc.client, "acme.goldtrain", svc.author
    make_model(c, owner, h)
    settled = "Kindly confirm the arrangements at your earliest convenience."
    votes = [
        {"trait": "formality", "text": settled, "quality": 1.0, "annotator": "rater-1"},
        {"trait": "formality", "text": settled, "quality": 0.0, "annotator": "rater-2"},
        {"trait": "formality", "text": settled, "quality": 1.0, "adjudicated": True},
    ]
    check(c.post(f"/v1/models/{h}/samples", json={"samples": votes}, headers=owner), 201)
    body = {"trait": "formality", "count": 5}
    promoted = check(c.post(f"/v1/models/{h}/gold/promote", json=body, headers=owner), 200)
    assert (promoted["added"], promoted["total"]) == (1, 1)  # the one settled text
    imported = "We request the pleasure of your company at dinner."
    gold = {"items": [{"trait": "formality", "text": imported, "quality": 1.0}]}
    check(c.post(f"/v1/models/{h}/gold", json=gold, headers=owner), 201)
    # A sample of a gold text (a file's row) is stored, and still never trains.
    row = {"trait": "formality", "text": imported, "quality": 1.0, "annotator": "rater-1"}
    check(c.post(f"/v1/models/{h}/samples", json={"samples": [row]}, headers=owner), 201)
    with transaction(svc.ctx.sessions) as s:
        stored = s.scalar(select(func.count()).select_from(SampleRow)) or 0
    model = train_ready(c, owner, h)
    version = check(c.get(f"/v1/models/{h}/versions/v{model['version_no']}", headers=owner), 200)
    assert version["sample_count"] == stored - 4  # the settled text's three votes and the gold row


def test_gold_never_enters_the_evaluation_set_nor_outlives_zero_data_retention(svc: Svc) -> None:
    c, h, owner = svc.client, "acme.goldeval", svc.author
    make_model(c, owner, h)
    imported = "We request the pleasure of your company at dinner."
    gold = {"items": [{"trait": "formality", "text": imported, "quality": 1.0}]}
    check(c.post(f"/v1/models/{h}/gold", json=gold, headers=owner), 201)
    # The evaluation set leaves gold texts out, and gold leaves the set's texts out.
    other = "Respectfully submitted for review."
    items = [{"trait": "formality", "text": t, "quality": 1.0} for t in (imported, other)]
    added = check(c.post(f"/v1/models/{h}/evaluation-set", json={"items": items}, headers=owner), 201)
    assert (added["added"], added["gold_texts"]) == (1, [0])
    gold = {"items": [{"trait": "sentiment", "text": other, "quality": 1.0}]}
    out = check(c.post(f"/v1/models/{h}/gold", json=gold, headers=owner), 201)
    assert (out["added"], out["in_evaluation_set"]) == (0, [0])
    neutral = {"items": [{"trait": "formality", "text": "Half and half.", "quality": 0.5}]}
    refused = c.post(f"/v1/models/{h}/gold", json=neutral, headers=owner)
    assert error_code(refused, 422) == "validation_error" and "on a pole, not 0.5" in refused.text
    # Zero-data-retention keeps no text: turning it on takes the gold items with the other texts.
    check(c.patch(f"/v1/models/{h}", json={"zero_data_retention": True}, headers=owner), 200)
    assert check(c.get(f"/v1/models/{h}/gold", headers=owner), 200)["total"] == 0
    assert error_code(c.post(f"/v1/models/{h}/gold", json=gold, headers=owner), 409) == "zero_data_retention"


def test_a_point_answers_gold_by_its_pole(svc: Svc) -> None:
    """On a 5-point scale a known 1.0 is answered right by point 4 (positive) and wrong by the neutral
    middle 3 as by 2: a point counts by its quality's pole."""
    c, h, owner = svc.client, "acme.goldscale", svc.author
    check(c.post("/v1/models", json={"handle": h}, headers=owner), 201)
    trait = {**TRAITS[0], "scale": {"points": 5}}
    check(c.post(f"/v1/models/{h}/traits", json={"traits": [trait]}, headers=owner), 201)
    items = [{"trait": "formality", "text": t, "quality": 1.0} for t in GOLD[:3]]
    check(c.post(f"/v1/models/{h}/gold", json={"items": items}, headers=owner), 201)
    with transaction(svc.ctx.reads) as s:
        found = s.execute(select(PoolText.text, PoolText.id).where(PoolText.text.in_(GOLD[:3])))
        ids = dict(found.tuples().all())
    ann = _key(svc, "ann", "annotator")
    for text, point in zip(GOLD[:3], (4, 3, 2), strict=True):
        label = {"trait": "formality", "point": point}
        check(c.post(f"/v1/models/{h}/pool/{ids[text]}/label", json=label, headers=ann), 201)
    with transaction(svc.ctx.reads) as s:
        judged = sorted(s.execute(select(GoldAnswer.quality, GoldAnswer.correct)).tuples())
    assert judged == [(0.25, False), (0.5, False), (0.75, True)]


def test_an_undo_of_a_gold_answer_reaches_no_other_label_and_withdraws_it_as_a_label(svc: Svc) -> None:
    """The label route answers a gold answer with the answer's own id: an undo by that id as a vote's reached
    whichever vote had it, here a colleague's. An undo names the pool text instead: the colleague's vote
    stays, and the gold answer is withdrawn as the caller's vote is (no longer listed, nor judged)."""
    c, h, owner = svc.client, "acme.goldundo", svc.author
    check(c.post("/v1/models", json={"handle": h}, headers=owner), 201)
    check(c.post(f"/v1/models/{h}/traits", json={"traits": [TRAITS[0]]}, headers=owner), 201)
    colleague = _key(svc, "colleague", "annotator")
    body = {"samples": [{"trait": "formality", "text": "A colleague's vote.", "quality": 1.0}]}
    [theirs] = check(c.post(f"/v1/models/{h}/samples", json=body, headers=colleague), 201)["ids"]
    gold = {"items": [{"trait": "formality", "text": GOLD[0], "quality": 1.0}]}
    check(c.post(f"/v1/models/{h}/gold", json=gold, headers=owner), 201)
    check(c.post(f"/v1/models/{h}/pool", json={"texts": ["An ordinary text."]}, headers=owner), 201)
    with transaction(svc.ctx.reads) as s:
        ids = dict(s.execute(select(PoolText.text, PoolText.id)).tuples().all())
    ann = _key(svc, "ann", "annotator")
    wrong = {"trait": "formality", "quality": 0.0}
    answered = check(c.post(f"/v1/models/{h}/pool/{ids[GOLD[0]]}/label", json=wrong, headers=ann), 201)
    # Drawn from the label ids as a label's: never a colleague's vote's number (it once was, and an undo by
    # it reached that vote), and after it, as a label given later would be.
    assert answered["stored_as"] == "sample" and answered["id"] > theirs
    # The answer is one of the person's labels, listed and counted as any (gold_labels.py).
    listed = check(c.get(f"/v1/models/{h}/my-labels", headers=ann), 200)
    assert listed["total"] == 1 and [(x["kind"], x["id"]) for x in listed["items"]] == [
        ("sample", answered["id"])
    ]
    assert check(c.get(f"/v1/models/{h}/my-labels?q=nothing+like+it", headers=ann), 200)["total"] == 0

    undone = check(c.delete(f"/v1/models/{h}/pool/{ids[GOLD[0]]}/label?trait=formality", headers=ann), 200)
    assert undone["deleted"] is True and (undone["kind"], undone["id"]) == ("sample", answered["id"])
    assert [x["id"] for x in check(c.get(f"/v1/models/{h}/samples", headers=owner), 200)["items"]] == [theirs]
    with transaction(svc.ctx.reads) as s:
        assert s.execute(select(GoldAnswer.annotator, GoldAnswer.quality)).tuples().all() == []
    gone = c.delete(f"/v1/models/{h}/pool/{ids[GOLD[0]]}/label?trait=formality", headers=ann)
    assert error_code(gone, 404) == "label_not_found"

    label = {"trait": "formality", "quality": 1.0}
    mine = check(
        c.post(f"/v1/models/{h}/pool/{ids['An ordinary text.']}/label", json=label, headers=ann), 201
    )
    undone = check(
        c.delete(f"/v1/models/{h}/pool/{ids['An ordinary text.']}/label?trait=formality", headers=ann), 200
    )
    assert (undone["kind"], undone["id"]) == ("sample", mine["id"])
    again = c.delete(f"/v1/models/{h}/pool/{ids['An ordinary text.']}/label?trait=formality", headers=ann)
    assert error_code(again, 404) == "label_not_found"
    assert error_code(c.delete(f"/v1/models/{h}/pool/999999/label?trait=formality", headers=ann), 404) == (
        "pool_text_not_found"
    )
