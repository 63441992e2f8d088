"""The counting rule (`core.engine.votes`): latest vote per annotator, unattributed rows each a vote,
adjudicated decides, else the mean; one vote per text trains exactly as the samples themselves do."""

from __future__ import annotations

import json
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from core.contract import pole_of
from core.embedders.base import Embedder
from core.engine import CountedText, Sample, Vote, count_votes, train, training_samples, vote_counts
from core.engine.training import canonical_json
from core.engine.votes import CONTESTED_GAP
from tests.support.corpus import Corpus


def test_one_vote_per_text_keeps_the_sample_and_its_place() -> None:
    votes = [Vote("t", " b ", 1.0, "ann", id=3), Vote("t", "a", 0.0, None, id=5), Vote("u", "a", 0.25, id=9)]
    counted = count_votes(votes)
    assert [(c.trait, c.text, c.quality, c.first_id) for c in counted] == [
        ("t", "b", 1.0, 3),
        ("t", "a", 0.0, 5),
        ("u", "a", 0.25, 9),
    ]
    assert training_samples(counted) == [
        Sample("t", "b", 1.0, 3),
        Sample("t", "a", 0.0, 5),
        Sample("u", "a", 0.25, 9),
    ]
    assert not any(c.contested or c.adjudicated for c in counted)


def test_an_annotators_latest_vote_counts_and_the_others_are_averaged() -> None:
    votes = [
        Vote("t", "x", 1.0, "alice", id=1),
        Vote("t", "x", 0.0, "bob", id=2),
        Vote("t", "x", 0.25, "alice", id=4),  # alice changed her mind
        Vote("t", "x", 0.5, "carol", id=6),
    ]
    (c,) = count_votes(votes)
    assert [v.id for v in c.votes] == [2, 4, 6]
    assert c.quality == (0.0 + 0.25 + 0.5) / 3
    assert c.first_id == 1  # the group's first row, though alice's first vote no longer counts
    assert not c.contested  # 0.0 and 0.25 negative, 0.5 neutral: on neither pole, so no other side
    assert vote_counts([c]) == {"t": {"texts": 1, "votes": 3}}
    (c,) = count_votes([*votes, Vote("t", "x", 0.75, "dave", id=7)])
    assert c.contested  # now a vote on the positive pole


def test_graded_votes_a_hair_either_side_of_the_middle_do_not_contest_a_text() -> None:
    """On a file rated -4..+4 (qualities 1/8 apart), mean ratings of 0.49 and 0.51 are noise around the
    middle, not a contradiction; whole ratings either side of it (-1 and +1, or -0.5 and +0.5: a full step)
    and the poles themselves still contest."""

    def contested(*qualities: float) -> bool:
        (c,) = count_votes([Vote("t", "x", q, None, id=i) for i, q in enumerate(qualities)])
        return c.contested

    assert not contested(0.49, 0.51)
    assert not contested(0.49, 0.51, 0.5, 0.55)
    assert not contested(0.4376, 0.5624)  # a hair under one step apart
    assert contested(0.4375, 0.5625)  # -0.5 and +0.5 on -4..+4: one step
    assert contested(0.375, 0.625)  # -1 and +1
    assert contested(0.49, 0.51, 0.9)
    assert contested(0.0, 1.0) and contested(0.25, 0.75)  # a 5-point scale's 2 and 4
    assert contested(0.499999, 0.625)  # rounded to 6 decimals, still a step


def test_unattributed_rows_are_each_a_vote() -> None:
    votes = [Vote("t", "x", 1.0, id=1), Vote("t", "x", 1.0, id=2), Vote("t", "x", 0.0, "bob", id=3)]
    (c,) = count_votes(votes)
    assert len(c.votes) == 3
    assert math.isclose(c.quality, 2 / 3)
    assert c.contested


def test_an_adjudicated_vote_decides_and_the_votes_stay() -> None:
    votes = [
        Vote("t", "x", 1.0, "alice", id=1),
        Vote("t", "x", 0.0, "bob", id=2),
        Vote("t", "x", 0.0, "rev", id=3, adjudicated=True),
        Vote("t", "x", 0.9, "carol", id=4),
        Vote("t", "x", 0.2, "dan", id=5, adjudicated=True),  # the latest adjudicated vote decides
    ]
    (c,) = count_votes(votes)
    assert c.quality == 0.2
    assert c.adjudicated and not c.contested
    assert len(c.votes) == 5
    # The reviewer votes again without adjudicating: their latest vote is no longer a ruling.
    (again,) = count_votes([*votes[:4], Vote("t", "x", 0.9, "rev", id=7)])
    assert not again.adjudicated and again.contested
    assert math.isclose(again.quality, (1.0 + 0.0 + 0.9 + 0.9) / 4)


def test_texts_group_as_stored_trimmed_and_per_trait() -> None:
    votes = [
        Vote("t", "x", 1.0, "a", id=1),
        Vote("t", "  x\n", 0.0, "b", id=2),
        Vote("u", "x", 0.0, "a", id=3),
    ]
    counted = count_votes(votes)
    assert [(c.trait, c.text, len(c.votes)) for c in counted] == [("t", "x", 2), ("u", "x", 1)]
    assert vote_counts(counted) == {"t": {"texts": 1, "votes": 2}, "u": {"texts": 1, "votes": 1}}


def test_one_vote_per_text_trains_to_the_same_snapshot_bytes(hashing: Embedder, corpus: type[Corpus]) -> None:
    samples = corpus.sentiment_samples(10, 10) + [Sample("sentiment", "the hotel was fine", 0.6, id=5000)]
    direct = train([corpus.SENTIMENT], samples, embedder=hashing, effort="low")
    votes = [Vote(s.trait, s.text, s.quality, annotator=None, id=s.id or 0) for s in samples]
    counted = count_votes(votes)
    via_votes = train([corpus.SENTIMENT], training_samples(counted), embedder=hashing, effort="low")
    assert canonical_json(via_votes.snapshot).encode() == canonical_json(direct.snapshot).encode()
    assert json.dumps(via_votes.metrics, sort_keys=True) == json.dumps(direct.metrics, sort_keys=True)


def test_several_votes_train_one_soft_row_per_text(hashing: Embedder, corpus: type[Corpus]) -> None:
    """Three annotators' votes on a text train as one sample with their mean quality."""
    samples = corpus.sentiment_samples(8, 8)
    votes = [Vote(s.trait, s.text, s.quality, "alice", id=i) for i, s in enumerate(samples)]
    votes += [Vote(s.trait, s.text, 1.0 - s.quality, "bob", id=100 + i) for i, s in enumerate(samples[:4])]
    votes += [Vote(s.trait, s.text, s.quality, "carol", id=200 + i) for i, s in enumerate(samples[:4])]
    counted = count_votes(votes)
    assert vote_counts(counted) == {"sentiment": {"texts": 16, "votes": 24}}
    soft = [
        Sample(s.trait, s.text, (2 * s.quality + 1 - s.quality) / 3 if i < 4 else s.quality, id=i)
        for i, s in enumerate(samples)
    ]
    assert training_samples(counted) == soft
    via_votes = train([corpus.SENTIMENT], training_samples(counted), embedder=hashing, effort="low")
    direct = train([corpus.SENTIMENT], soft, embedder=hashing, effort="low")
    assert canonical_json(via_votes.snapshot) == canonical_json(direct.snapshot)
    assert via_votes.metrics["sentiment"]["positive_samples"] + via_votes.metrics["sentiment"][
        "negative_samples"
    ] == len(samples)


# -- properties of the rule -----------------------------------------------------------------------------

_votes = st.lists(
    st.builds(
        Vote,
        trait=st.sampled_from(["t", "u"]),
        text=st.sampled_from(["a", "b", " a", "c "]),
        quality=st.floats(0.0, 1.0),
        annotator=st.one_of(st.none(), st.sampled_from(["alice", "bob", "carol"])),
        adjudicated=st.booleans(),
    ),
    max_size=30,
).map(lambda vs: [Vote(v.trait, v.text, v.quality, v.annotator, i, v.adjudicated) for i, v in enumerate(vs)])


def _reference(votes: list[Vote]) -> dict[tuple[str, str], tuple[float, list[int], int, bool]]:
    """The rule as the design states it, written apart: (quality, counted ids, first id, adjudicated)."""
    out = {}
    for key in {(v.trait, v.text.strip()) for v in votes}:
        rows = [v for v in votes if (v.trait, v.text.strip()) == key]
        latest = {}
        for v in sorted(rows, key=lambda v: v.id):
            if v.annotator is not None:
                latest[v.annotator] = v
        counted = sorted([v for v in rows if v.annotator is None] + list(latest.values()), key=lambda v: v.id)
        ruling = [v for v in counted if v.adjudicated]
        quality = ruling[-1].quality if ruling else sum(v.quality for v in counted) / len(counted)
        out[key] = (quality, [v.id for v in counted], min(v.id for v in rows), bool(ruling))
    return out


@settings(max_examples=300, deadline=None)
@given(_votes)
def test_the_rule_matches_its_statement(votes: list[Vote]) -> None:
    counted = count_votes(votes)
    expected = _reference(votes)
    assert {(c.trait, c.text) for c in counted} == set(expected)
    for c in counted:
        quality, ids, first, adjudicated = expected[(c.trait, c.text)]
        assert math.isclose(c.quality, quality, rel_tol=1e-12, abs_tol=1e-12)
        assert [v.id for v in c.votes] == ids
        assert (c.first_id, c.adjudicated) == (first, adjudicated)
        poles = {pole_of(v.quality) for v in c.votes} - {"neutral"}  # a neutral vote takes neither side
        qualities = [v.quality for v in c.votes]
        apart = max(qualities) - min(qualities) >= CONTESTED_GAP - 1e-6  # nearer is a graded scale's noise
        assert c.contested == (not adjudicated and len(poles) == 2 and apart)
        assert 0.0 <= c.quality <= 1.0
    assert [c.first_id for c in counted] == sorted(c.first_id for c in counted)  # ordered by first row
    totals = vote_counts(counted)
    assert sum(t["texts"] for t in totals.values()) == len(counted)
    assert sum(t["votes"] for t in totals.values()) == sum(len(c.votes) for c in counted)


@settings(max_examples=200, deadline=None)
@given(_votes)
def test_counting_is_idempotent_on_its_own_votes(votes: list[Vote]) -> None:
    """Counting the counted votes again changes nothing: superseded rows were the only ones dropped."""
    counted = count_votes(votes)
    again = count_votes([v for c in counted for v in c.votes])
    assert [(c.trait, c.text, c.quality, c.votes) for c in again] == [
        (c.trait, c.text, c.quality, c.votes) for c in counted
    ]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d"]), st.floats(0.0, 1.0)), max_size=12))
def test_one_vote_per_text_is_the_samples_themselves(rows: list[tuple[str, float]]) -> None:
    unique = list(dict(rows).items())  # one vote per text, in first-seen order
    samples = [Sample("t", text, q, id=i) for i, (text, q) in enumerate(unique)]
    counted = count_votes(Vote("t", s.text, s.quality, None, s.id or 0) for s in samples)
    assert training_samples(counted) == samples  # the same qualities bit for bit, the same order


def test_spread_is_the_votes_standard_deviation() -> None:
    (one,) = count_votes([Vote("t", "x", 1.0)])
    (two,) = count_votes([Vote("t", "x", 1.0, "a"), Vote("t", "x", 0.0, "b")])
    assert isinstance(one, CountedText)
    assert (one.spread, two.spread) == (0.0, 0.5)
