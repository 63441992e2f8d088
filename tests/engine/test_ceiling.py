"""The human ceiling (`core.engine.ceiling`) on synthetic raters with known structure: a latent score per
text, each rater's vote = latent + independent noise (variance 1 each), five raters per text. Then, per pair,
the others' mean has variance 1 + 1/4 and covariance 1 with a vote and with the latent:
human ceiling = 1 / sqrt(2 * 1.25) = 0.632; a model equal to the latent: sqrt(1 / 1.25) = 0.894."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.engine import CountedText, Vote, count_votes, human_ceiling
from core.engine.ceiling import _CHUNK

RATERS = 5
HUMAN = 1 / math.sqrt(2 * 1.25)
LATENT = math.sqrt(1 / 1.25)


def _raters(texts: int, seed: int = 0) -> tuple[list[CountedText], np.ndarray, np.ndarray]:
    """(counted texts, latent per text, votes texts x raters)."""
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=texts)
    votes = latent[:, None] + rng.normal(size=(texts, RATERS))
    rows = [
        Vote("t", f"text {i}", float(votes[i, r]), f"r{(i + r) % 12}", id=i * RATERS + r)  # 12 raters in turn
        for i in range(texts)
        for r in range(RATERS)
    ]
    return count_votes(rows), latent, votes


def _scores(values: np.ndarray) -> dict[str, float]:
    return {f"text {i}": float(v) for i, v in enumerate(values)}


def test_a_model_equal_to_the_latent_beats_noisy_raters() -> None:
    counted, latent, _ = _raters(3000)
    c = human_ceiling(counted, _scores(latent), draws=300)
    assert c is not None and c.model is not None and c.share is not None
    assert (c.pairs, c.texts, c.annotators) == (15_000, 3000, 12)
    assert c.human.value == pytest.approx(HUMAN, abs=0.02)
    assert c.model.value == pytest.approx(LATENT, abs=0.02)
    assert c.share.value == pytest.approx(LATENT / HUMAN, abs=0.05)  # 141 %: above the ceiling
    for iv, truth in ((c.human, HUMAN), (c.model, LATENT), (c.share, LATENT / HUMAN)):
        assert iv.ci_low < iv.value < iv.ci_high
        assert iv.ci_low - 0.02 < truth < iv.ci_high + 0.02
    assert c.share.ci_low > 1.0


def test_a_model_as_good_as_one_more_rater_reaches_the_ceiling() -> None:
    """A sixth rater's votes (the same noise, not among the targets) agree as one of the five does."""
    counted, latent, _ = _raters(3000, seed=1)
    sixth = latent + np.random.default_rng(99).normal(size=len(latent))
    c = human_ceiling(counted, _scores(sixth), draws=300)
    assert c is not None and c.share is not None
    assert c.share.value == pytest.approx(1.0, abs=0.06)
    assert c.share.ci_low < 1.0 < c.share.ci_high


def test_a_model_equal_to_one_of_the_raters_is_in_most_of_its_own_targets() -> None:
    """Scored with rater 0's votes, the model is part of the others' mean in 4 of 5 pairs per text: pooled
    covariance (1 + 4 * 1.25) / 5 = 1.2 with target variance 1.25 and score variance 2, so 1.2 / sqrt(2.5).
    (Why an evaluation set must hold texts and votes the model was not trained on.)"""
    counted, _, votes = _raters(3000, seed=2)
    by_text = {c.text: c for c in counted}
    first = {text: c.votes[0].quality for text, c in by_text.items()}
    c = human_ceiling(counted, first, draws=100)
    assert c is not None and c.model is not None
    assert c.model.value == pytest.approx(1.2 / math.sqrt(2.5), abs=0.02)
    assert c.human.value == pytest.approx(HUMAN, abs=0.02)


def _expanded(counted: list[CountedText], scores: dict[str, float], weights: np.ndarray) -> tuple:
    """Every pair as a row, repeated by its text's bootstrap weight: the direct statement of the rule."""
    v, t, s = [], [], []
    for c, w in zip(counted, weights, strict=True):
        q = np.array([x.quality for x in c.votes])
        for a in range(len(q)):
            others = np.delete(q, a)
            v += [q[a]] * w
            t += [others.mean()] * w
            s += [scores[c.text]] * w
    return np.array(v), np.array(t), np.array(s)


def test_the_estimates_and_intervals_match_a_direct_computation() -> None:
    rng = np.random.default_rng(5)
    rows: list[Vote] = []
    for i in range(40):  # 2 to 4 votes per text, graded on 1-25 around the text's own level
        level = int(rng.integers(1, 26))
        for r in rng.choice(6, size=rng.integers(2, 5), replace=False):
            grade = int(np.clip(level + rng.integers(-6, 7), 1, 25))
            rows.append(Vote("t", f"x{i}", (grade - 1) / 24, f"r{r}", id=len(rows)))
    rows.append(Vote("t", "lonely", 1.0, "r0", id=len(rows)))  # one vote: no pair
    counted = count_votes(rows)
    scores = {c.text: float(rng.random()) for c in counted}
    draws = 2 * _CHUNK + 17
    c = human_ceiling(counted, scores, draws=draws, seed=3)
    assert c is not None and c.model is not None and c.share is not None
    paired = [x for x in counted if len(x.votes) >= 2]

    v, t, s = _expanded(paired, scores, np.ones(len(paired), dtype=int))
    assert c.pairs == len(v) and c.texts == 40
    assert c.human.value == pytest.approx(np.corrcoef(v, t)[0, 1], abs=1e-12)
    assert c.model.value == pytest.approx(np.corrcoef(s, t)[0, 1], abs=1e-12)

    boot = np.random.default_rng(3)
    hs, ms = [], []
    for start in range(0, draws, _CHUNK):
        size = min(_CHUNK, draws - start)
        for w in boot.multinomial(len(paired), np.full(len(paired), 1 / len(paired)), size=size):
            v, t, s = _expanded(paired, scores, w)
            hs.append(np.corrcoef(v, t)[0, 1])
            ms.append(np.corrcoef(s, t)[0, 1])
    hs_a, ms_a = np.array(hs), np.array(ms)
    for iv, draws_of in ((c.human, hs_a), (c.model, ms_a), (c.share, ms_a / hs_a)):
        assert (iv.ci_low, iv.ci_high) == pytest.approx(tuple(np.percentile(draws_of, [2.5, 97.5])), abs=1e-9)


def test_too_few_pairs_or_no_variation_is_none() -> None:
    one_text = count_votes([Vote("t", "x", 1.0, "a"), Vote("t", "x", 0.0, "b", id=1)])
    assert human_ceiling(one_text, {"x": 0.5}) is None
    single_votes = count_votes([Vote("t", f"x{i}", i / 10, "a", id=i) for i in range(10)])
    assert human_ceiling(single_votes, {f"x{i}": 0.5 for i in range(10)}) is None
    same = count_votes(
        [Vote("t", f"x{i}", 0.5, r, id=2 * i + k) for i in range(5) for k, r in enumerate("ab")]
    )
    assert human_ceiling(same, {f"x{i}": i / 5 for i in range(5)}) is None
    assert human_ceiling([], {}) is None


def test_unattributed_and_adjudicated_votes_make_no_pairs() -> None:
    rows = []
    for i in range(6):
        rows += [
            Vote("t", f"x{i}", i / 5, "a", id=10 * i),
            Vote("t", f"x{i}", 1 - i / 5, None, id=10 * i + 1),
            Vote("t", f"x{i}", 1.0, "rev", id=10 * i + 2, adjudicated=True),
        ]
    assert human_ceiling(count_votes(rows), {f"x{i}": 0.5 for i in range(6)}) is None


def test_a_constant_model_has_no_agreement_and_the_ceiling_stays() -> None:
    counted, _, _ = _raters(50)
    c = human_ceiling(counted, {x.text: 0.5 for x in counted}, draws=50)
    assert c is not None and c.model is None and c.share is None
    d = c.as_dict()
    assert set(d) == {"human_ceiling", "model_agreement", "share_of_ceiling"}
    assert set(d["human_ceiling"]) == {"value", "ci_low", "ci_high", "pairs", "texts", "annotators"}
    assert d["model_agreement"] is None and d["share_of_ceiling"] is None


def test_seeded_and_checked() -> None:
    counted, latent, _ = _raters(200)
    a = human_ceiling(counted, _scores(latent), draws=200, seed=4)
    assert a == human_ceiling(counted, _scores(latent), draws=200, seed=4)
    assert a != human_ceiling(counted, _scores(latent), draws=200, seed=5)
    with pytest.raises(KeyError, match="no score for 1 of the 200 texts"):
        human_ceiling(counted, {f"text {i}": 0.0 for i in range(1, 200)})
    with pytest.raises(ValueError, match="one trait"):
        human_ceiling([*counted, *count_votes([Vote("u", "x", 1.0)])], _scores(latent))
