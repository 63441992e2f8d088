"""Training with `balanced_cosine`: class balance, midpoint, calibration, search, determinism, reuse."""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from core.embedders import get_embedder
from core.embedders.base import Embedder
from core.engine import (
    SEARCH_PLANS,
    BalancedCosineTrait,
    InvalidEffortError,
    InvalidParamsError,
    OnePoleTraitError,
    Sample,
    Scorer,
    TrainingResult,
    TraitSpec,
    train,
)
from core.engine.pole_text import all_pole_texts
from core.engine.training import PRIOR_SHRINKAGE, SE_RULE, _choose, auc_difference_se, param_hash
from core.engine.trait_model import K_MAX, K_MIN, AxisSpectrum, PoleMoments, fit_calibration
from tests.support.processes import FreshPython

METRIC_KEYS = {
    "positive_samples",
    "negative_samples",
    "roc_auc",
    "accuracy",
    "calibration_error",
    "discrimination",
    "explained_variance",
    "anchor_sample_ids",
    "params",
}


def _xq(embedder: Embedder, samples: list[Sample]) -> tuple[np.ndarray, np.ndarray]:
    X = embedder.encode([s.text for s in samples]).astype(np.float64)
    return X, np.array([s.quality for s in samples])


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


# -- the model ----------------------------------------------------------------------------------


@pytest.mark.parametrize("shrinkage", [1.0, 0.9, 0.3])
def test_duplicating_one_pole_20x_leaves_the_axis_unchanged(
    corpus: Any, hashing: Embedder, shrinkage: float
) -> None:
    samples = corpus.sentiment_samples(10, 10)
    X, q = _xq(hashing, samples)
    base = BalancedCosineTrait(shrinkage=shrinkage).fit(X, q)
    pos = q == 1.0
    X_dup = np.concatenate([np.repeat(X[pos], 20, axis=0), X[~pos]])
    q_dup = np.concatenate([np.repeat(q[pos], 20), q[~pos]])
    dup = BalancedCosineTrait(shrinkage=shrinkage).fit(X_dup, q_dup)
    assert _cos(base.w_, dup.w_) > 0.99
    # Class balance also keeps the midpoint (and so the 0.5 point) where it was.
    assert dup.offset_ == pytest.approx(base.offset_, rel=1e-6, abs=1e-9)


def test_unbalanced_poles_still_rank_held_out_texts(corpus: Any, hashing: Embedder) -> None:
    # 200 negatives vs 10 positives: both poles weigh the same, so the axis still separates new texts.
    pos = corpus.make_texts(corpus.POSITIVE_WORDS, 10, 1)
    neg = corpus.make_texts(corpus.NEGATIVE_WORDS, 200, 2)
    X = hashing.encode(pos + neg).astype(np.float64)
    q = np.array([1.0] * 10 + [0.0] * 200)
    model = BalancedCosineTrait(shrinkage=1.0).fit(X, q)
    test_pos = model.predict_proba(hashing.encode(corpus.make_texts(corpus.POSITIVE_WORDS, 30, 3)))
    test_neg = model.predict_proba(hashing.encode(corpus.make_texts(corpus.NEGATIVE_WORDS, 30, 4)))
    assert roc_auc_score([1] * 30 + [0] * 30, np.concatenate([test_pos, test_neg])) > 0.85


def test_midpoint_of_prototypes_scores_exactly_one_half_and_prototypes_are_plus_minus_one(
    corpus: Any,
    hashing: Embedder,
) -> None:
    X, q = _xq(hashing, corpus.sentiment_samples())
    for shrinkage in (1.0, 0.1):
        model = BalancedCosineTrait(shrinkage=shrinkage).fit(X, q)
        mid = 0.5 * (model.positive_prototype_ + model.negative_prototype_)
        assert model.predict_proba(mid[None, :])[0] == pytest.approx(0.5, abs=1e-12)
        raw = model.decision_function(np.stack([model.positive_prototype_, model.negative_prototype_]))
        np.testing.assert_allclose(raw, [1.0, -1.0], atol=1e-9)


def test_midpoint_is_one_half_through_the_snapshot_scorer(trained: TrainingResult, hashing: Embedder) -> None:
    scorer = Scorer.from_snapshot(trained.snapshot, embedder=hashing)
    w = np.array(trained.snapshot["traits"][0]["w"])
    offset = trained.snapshot["traits"][0]["m_dot_w"]
    point = w * (offset / float(w @ w))  # a point with w . x = m . w, i.e. on the midpoint plane
    assert scorer.score_vectors(point[None, :])[0, 0] == pytest.approx(0.5, abs=1e-12)


def test_quality_weights_pull_the_prototypes(corpus: Any, hashing: Embedder) -> None:
    X, _ = _xq(hashing, corpus.sentiment_samples(6, 6))
    q_hard = np.array([1.0] * 6 + [0.0] * 6)
    q_soft = np.array([1.0] * 5 + [0.6] + [0.0] * 6)
    hard = BalancedCosineTrait().fit(X, q_hard)
    soft = BalancedCosineTrait().fit(X, q_soft)
    # The 0.6 sample now also counts 0.4 toward the negative prototype.
    expected_neg = (X[6:].sum(axis=0) + 0.4 * X[5]) / 6.4
    np.testing.assert_allclose(soft.negative_prototype_, expected_neg, atol=1e-12)
    assert not np.allclose(hard.negative_prototype_, soft.negative_prototype_)


def test_calibration_slope_is_finite_on_separable_data_and_floored_without_signal() -> None:
    q = np.array([1.0] * 10 + [0.0] * 10)
    separable = np.concatenate([np.linspace(0.2, 1.0, 10), -np.linspace(0.2, 1.0, 10)])
    k = fit_calibration(separable, q)
    assert K_MIN < k < K_MAX
    # Platt's smoothing caps confidence: the surest positive scores below the smoothed target.
    assert 1 / (1 + math.exp(-k)) < 1.0
    assert fit_calibration(-separable, q) == pytest.approx(K_MIN, rel=1e-6)  # anti-correlated


def test_calibrated_scores_are_in_range_and_sensible(
    corpus: Any, trained: TrainingResult, hashing: Embedder
) -> None:
    scorer = Scorer.from_snapshot(trained.snapshot, embedder=hashing)
    pos = scorer.score(corpus.make_texts(corpus.POSITIVE_WORDS, 20, 91))[:, 0]
    neg = scorer.score(corpus.make_texts(corpus.NEGATIVE_WORDS, 20, 92))[:, 0]
    both = np.concatenate([pos, neg])
    assert np.all((both >= 0.0) & (both <= 1.0))
    assert pos.mean() > 0.65 and neg.mean() < 0.35
    assert np.mean(pos > 0.5) >= 0.7 and np.mean(neg < 0.5) >= 0.7
    assert trained.metrics["sentiment"]["calibration_error"] < 0.25


# -- train(): metrics, search, determinism -------------------------------------------------------


def test_metrics_have_every_field_with_sensible_values(trained: TrainingResult) -> None:
    metrics = trained.metrics["sentiment"]
    assert set(metrics) >= METRIC_KEYS
    assert metrics["positive_samples"] == 12 and metrics["negative_samples"] == 12
    assert metrics["roc_auc"] > 0.85
    assert 0.7 <= metrics["accuracy"] <= 1.0
    assert 0.0 <= metrics["calibration_error"] <= 1.0
    assert 0.2 < metrics["discrimination"] <= 1.0
    assert 0.0 < metrics["explained_variance"] < 1.0
    anchors = metrics["anchor_sample_ids"]
    assert len(anchors["positive"]) == 3 and len(anchors["negative"]) == 3
    assert all(i < 1000 for i in anchors["positive"]) and all(i >= 1000 for i in anchors["negative"])
    assert metrics["params"] == trained.params["sentiment"]
    json.dumps(trained.metrics, allow_nan=False)  # plain JSON, no numpy scalars or NaN


def test_anchor_ids_are_the_most_typical_and_skip_missing_ids(corpus: Any, hashing: Embedder) -> None:
    samples = corpus.sentiment_samples(8, 8)
    samples = [Sample(s.trait, s.text, s.quality, id=None if s.id in (0, 1) else s.id) for s in samples]
    result = train([corpus.SENTIMENT], samples, embedder=hashing, effort="low")
    anchors = result.metrics["sentiment"]["anchor_sample_ids"]
    assert None not in anchors["positive"] and 0 not in anchors["positive"]
    # The top anchor is the positive sample with the highest cosine to the positive prototype.
    X, q = _xq(hashing, samples)
    proto = X[q == 1.0].mean(axis=0)
    cos = X[q == 1.0] @ proto
    ranked = [samples[i].id for i in np.argsort(-cos) if samples[i].id is not None]
    assert anchors["positive"] == ranked[:3]


def test_effort_grows_the_search(corpus: Any, hashing: Embedder) -> None:
    sizes = []
    for effort in ("low", "medium", "high", "max"):
        plan = SEARCH_PLANS[effort]
        result = train([corpus.SENTIMENT], corpus.sentiment_samples(), embedder=hashing, effort=effort)
        sizes.append(len(result.metrics["sentiment"]["search"]))
        assert sizes[-1] == len(plan.shrinkages)
        assert result.params["sentiment"]["folds"] == plan.folds
    assert sizes == sorted(sizes) and sizes[0] < sizes[-1]
    assert SEARCH_PLANS["low"].folds <= SEARCH_PLANS["medium"].folds <= SEARCH_PLANS["max"].folds
    assert SEARCH_PLANS["max"].repeats > SEARCH_PLANS["low"].repeats
    assert len(SEARCH_PLANS["low"].shrinkages) <= 3


def test_the_chosen_shrinkage_is_one_of_the_recorded_candidates(trained: TrainingResult) -> None:
    search = trained.metrics["sentiment"]["search"]
    assert trained.params["sentiment"]["shrinkage"] in [c["shrinkage"] for c in search]


def test_without_fold_scores_the_best_auc_wins_and_ties_go_to_larger_shrinkage() -> None:
    from core.engine.training import _choose

    assert _choose([0.80, 0.90, 0.90], [0.5, 0.9, 0.7]) == 1  # 0.9 and 0.7 tie: the larger shrinkage
    assert _choose([0.95, 0.90], [0.5, 0.9]) == 0  # a clearly better AUC wins whatever its shrinkage
    assert _choose([None, None], [0.5, 0.9]) == 1  # no AUC at all: the largest shrinkage


def _delong_se_by_matrix(a: np.ndarray, b: np.ndarray, y: np.ndarray) -> float:
    """The textbook form: the full n+ x n- comparison matrix of each scoring."""

    def comps(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pos, neg = s[y == 1], s[y == 0]
        cmp = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
        return cmp.mean(axis=1), cmp.mean(axis=0)

    (a10, a01), (b10, b01) = comps(a), comps(b)
    return float(np.sqrt(np.var(a10 - b10, ddof=1) / len(a10) + np.var(a01 - b01, ddof=1) / len(a01)))


def test_auc_difference_se_matches_delong_with_ties_and_is_zero_when_undefined() -> None:
    rng = np.random.default_rng(3)
    q = np.r_[np.ones(30), np.zeros(40)]
    a = np.round(rng.normal(size=70) + q, 1)  # rounding makes ties within and across poles
    b = np.round(rng.normal(size=70) + 0.5 * q, 1)
    se = auc_difference_se(a, b, q)
    assert se > 0.0
    assert se == pytest.approx(_delong_se_by_matrix(a, b, q.astype(int)), rel=1e-12)
    assert auc_difference_se(a, a, q) == 0.0  # a scoring against itself: no difference at all
    # A quality of 0.5 is on neither side and is left out, as in the AUC itself.
    assert auc_difference_se(np.r_[a, 99.0], np.r_[b, -99.0], np.r_[q, 0.5]) == pytest.approx(se, rel=1e-12)
    assert auc_difference_se(a[:31], b[:31], q[:31]) == 0.0  # one negative: no variance estimate


def _oof_of(scores: list[np.ndarray]) -> np.ndarray:
    return np.stack(scores)[None, :, :]  # (repeats=1, candidates, n)


def _aucs(oof: np.ndarray, q: np.ndarray) -> list[float | None]:
    return [float(roc_auc_score(q, oof[0, g])) for g in range(oof.shape[1])]


def test_choose_keeps_the_prior_when_the_best_auc_is_within_noise() -> None:
    rng = np.random.default_rng(0)
    shrinkages = (0.95, PRIOR_SHRINKAGE, 0.8)
    q = np.r_[np.ones(10), np.zeros(10)]
    base = rng.normal(size=20) + 0.7 * q
    # 0.95 is a little ahead (its weakest positive moves up past a negative or two), far less than
    # one standard error at 10 per pole.
    ahead = base.copy()
    pos = np.flatnonzero(q == 1)
    ahead[pos[np.argmin(base[pos])]] += 0.3
    oof = _oof_of([ahead, base, base - 0.01 * rng.normal(size=20)])
    aucs = _aucs(oof, q)
    first, second = aucs[0], aucs[1]
    assert first is not None and second is not None
    assert first > second  # the prior is not the best by AUC ...
    assert first - second < SE_RULE * auc_difference_se(oof[0, 0], oof[0, 1], q)
    assert shrinkages[_choose(aucs, shrinkages, oof, q)] == PRIOR_SHRINKAGE  # ... but it stands
    # Without out-of-fold scores there is no standard error: the plain best AUC wins, as before.
    assert shrinkages[_choose(aucs, shrinkages)] == 0.95


def test_choose_leaves_the_prior_on_clear_evidence_and_breaks_ties_toward_larger_shrinkage() -> None:
    rng = np.random.default_rng(1)
    shrinkages = (0.95, PRIOR_SHRINKAGE, 0.8)
    q = np.r_[np.ones(200), np.zeros(200)]
    noise = rng.normal(size=400)
    oof = _oof_of([noise + 0.2 * q, noise + 0.2 * q, noise + 3.0 * q])  # 0.8 separates far better
    aucs = _aucs(oof, q)
    assert shrinkages[_choose(aucs, shrinkages, oof, q)] == 0.8
    # Equal distance from the prior and equal evidence: the larger shrinkage (nearer the prototype) wins.
    even = (PRIOR_SHRINKAGE + 0.02, PRIOR_SHRINKAGE - 0.02)
    same = _oof_of([noise + 0.2 * q, noise + 0.2 * q])
    assert even[_choose(_aucs(same, q), even, same, q)] == even[0]
    # No AUC at all (a pole too small for folds): the largest shrinkage, as before.
    assert shrinkages[_choose([None, None, None], shrinkages, oof, q)] == 0.95


def test_every_effort_grid_holds_the_prior_between_its_ends() -> None:
    for plan in SEARCH_PLANS.values():
        assert min(plan.shrinkages) < PRIOR_SHRINKAGE < max(plan.shrinkages)
    assert PRIOR_SHRINKAGE in SEARCH_PLANS["medium"].shrinkages


def test_training_is_deterministic_and_param_hash_is_stable(corpus: Any, hashing: Embedder) -> None:
    a = train([corpus.SENTIMENT], corpus.sentiment_samples(), embedder=hashing, effort="medium")
    b = train([corpus.SENTIMENT], corpus.sentiment_samples(), embedder=hashing, effort="medium")
    assert a.snapshot == b.snapshot
    assert a.metrics == b.metrics
    assert a.param_hash == b.param_hash == a.snapshot["param_hash"]
    assert len(a.param_hash) == 64
    assert a.param_hash == param_hash(a.params, hashing.id)
    other = get_embedder("hashing-v1-256")
    c = train([corpus.SENTIMENT], corpus.sentiment_samples(), embedder=other, effort="medium")
    assert c.param_hash != a.param_hash  # the embedder id is part of the hash


def test_reused_params_skip_the_search_and_reproduce_the_version(corpus: Any, hashing: Embedder) -> None:
    first = train([corpus.SENTIMENT], corpus.sentiment_samples(), embedder=hashing, effort="high")
    phases: list[str] = []
    again = train(
        [corpus.SENTIMENT],
        corpus.sentiment_samples(),
        embedder=hashing,
        effort="high",
        params=first.params,
        progress=lambda f, p: phases.append(p),
    )
    assert "searching" not in phases
    assert len(again.metrics["sentiment"]["search"]) == 1
    assert again.params == first.params and again.param_hash == first.param_hash
    assert again.snapshot == first.snapshot
    # Retraining with more samples keeps the params (and so the hash) but refits the axis.
    more = corpus.sentiment_samples(16, 16, seed=5)
    retrained = train([corpus.SENTIMENT], more, embedder=hashing, params=first.params)
    assert retrained.param_hash == first.param_hash
    assert retrained.snapshot["traits"][0]["w"] != first.snapshot["traits"][0]["w"]


@pytest.mark.parametrize(
    "bad",
    [
        {"shrinkage": 0.0},
        {"shrinkage": 1.5},
        {"shrinkage": float("nan")},
        {"folds": 5},
        "0.5",
        {"shrinkage": 0.5, "folds": 1},
    ],
)
def test_invalid_reused_params_are_rejected(corpus: Any, hashing: Embedder, bad: Any) -> None:
    with pytest.raises(InvalidParamsError, match="sentiment"):
        train([corpus.SENTIMENT], corpus.sentiment_samples(), embedder=hashing, params={"sentiment": bad})


def test_unknown_effort_is_rejected(corpus: Any, hashing: Embedder) -> None:
    with pytest.raises(InvalidEffortError, match="xhigh"):
        train([corpus.SENTIMENT], corpus.sentiment_samples(), embedder=hashing, effort="xhigh")


def test_all_texts_are_embedded_once_in_one_call(corpus: Any, counting: Any) -> None:
    other = TraitSpec("other", "Other", "yes", "no")
    samples = corpus.sentiment_samples(6, 6)
    # The same texts again under a second trait, with the opposite labels.
    samples += [Sample("other", s.text, 1.0 - s.quality) for s in samples]
    train([corpus.SENTIMENT, other], samples, embedder=counting, effort="low")
    assert len(counting.calls) == 1
    # The samples and every trait's pole texts (the prior), each distinct text once.
    poles = {x for t in (corpus.SENTIMENT, other) for side in all_pole_texts(t) for x in side}
    assert sorted(counting.calls[0]) == sorted({s.text for s in samples} | poles)


def test_progress_is_monotone_and_names_the_phases(corpus: Any, hashing: Embedder) -> None:
    events: list[tuple[float, str]] = []
    train(
        [corpus.SENTIMENT],
        corpus.sentiment_samples(),
        embedder=hashing,
        effort="low",
        progress=lambda f, p: events.append((f, p)),
    )
    fractions = [f for f, _ in events]
    assert fractions == sorted(fractions) and all(0.0 <= f <= 1.0 for f in fractions)
    phases = [p for _, p in events]
    assert phases[0] == "embedding" and events[-1] == (1.0, "done")
    assert {"searching", "calibrating"} <= set(phases)


def test_progress_moves_during_one_traits_search(corpus: Any, hashing: Embedder) -> None:
    # One trait is one step of the outer loop: the search within it reports by folds, so a long search
    # does not sit at "searching 11%" until the trait is done.
    events: list[tuple[float, str]] = []
    train(
        [corpus.SENTIMENT],
        corpus.sentiment_samples(),
        embedder=hashing,
        effort="medium",
        progress=lambda f, p: events.append((f, p)),
    )
    searching = sorted({f for f, p in events if p == "searching"})
    plan = SEARCH_PLANS["medium"]
    assert len(searching) >= plan.folds * plan.repeats  # one report a fold, each further along
    assert searching[-1] - searching[0] > 0.5


def test_several_traits_train_independently(corpus: Any, hashing: Embedder) -> None:
    formal = TraitSpec("formality", "Formality", "formal", "casual", aggregation="max")
    samples = corpus.sentiment_samples(8, 8)
    formal_texts = ("Dear Sir, I write to request", "Kind regards, the board", "We respectfully submit")
    casual_texts = ("hey whats up lol", "yo dude gimme that", "lol ok cya later")
    samples += [Sample("formality", t, 1.0) for t in formal_texts]
    samples += [Sample("formality", t, 0.0) for t in casual_texts]
    result = train([corpus.SENTIMENT, formal], samples, embedder=hashing, effort="low")
    assert [t["key"] for t in result.snapshot["traits"]] == ["sentiment", "formality"]
    assert result.snapshot["traits"][1]["aggregation"] == "max"
    assert result.metrics["formality"]["positive_samples"] == 3
    assert set(result.params) == {"sentiment", "formality"}


# -- edge cases of the data -----------------------------------------------------------------------


def test_neutral_samples_are_left_out_of_the_poles_and_counted(corpus: Any, hashing: Embedder) -> None:
    """Quality 0.5 used to count toward the positive pole (half its weight on each prototype): a rating
    scale's middle trained as signal. Now it defines neither pole: the fit is exactly the fit without it."""
    poles = corpus.sentiment_samples(8, 8)
    neutral = [Sample("sentiment", t, 0.5) for t in corpus.make_texts(["ordinary", "average", "plain"], 4, 9)]
    mixed = poles[:5] + neutral[:2] + poles[5:] + neutral[2:]  # interleaved: the order of the poles stays
    with_neutral = train([corpus.SENTIMENT], mixed, embedder=hashing, effort="low")
    without = train([corpus.SENTIMENT], poles, embedder=hashing, effort="low")
    metrics = with_neutral.metrics["sentiment"]
    assert (metrics["positive_samples"], metrics["negative_samples"], metrics["neutral_samples"]) == (8, 8, 4)
    assert without.metrics["sentiment"]["neutral_samples"] == 0
    assert with_neutral.snapshot == without.snapshot
    assert {k: v for k, v in metrics.items() if k != "neutral_samples"} == {
        k: v for k, v in without.metrics["sentiment"].items() if k != "neutral_samples"
    }
    json.dumps(with_neutral.metrics, allow_nan=False)


def test_neutral_samples_do_not_make_a_pole(corpus: Any, hashing: Embedder) -> None:
    neutral = [Sample("sentiment", t, 0.5) for t in corpus.make_texts(corpus.POSITIVE_WORDS, 6, 1)]
    negative = [Sample("sentiment", t, 0.0) for t in corpus.make_texts(corpus.NEGATIVE_WORDS, 6, 2)]
    with pytest.raises(OnePoleTraitError, match="no positive samples"):
        train([corpus.SENTIMENT], neutral + negative, embedder=hashing, effort="low")
    with pytest.raises(OnePoleTraitError, match="all neutral"):  # samples, so not zero-shot either
        train([corpus.SENTIMENT], neutral, embedder=hashing, effort="low")


def test_a_pole_with_a_single_sample_trains_without_folds(corpus: Any, hashing: Embedder) -> None:
    samples = [Sample("sentiment", "the hotel was wonderful and lovely", 1.0, id=1)]
    negatives = corpus.make_texts(corpus.NEGATIVE_WORDS, 5, 3)
    samples += [Sample("sentiment", t, 0.0, id=10 + i) for i, t in enumerate(negatives)]
    result = train([corpus.SENTIMENT], samples, embedder=hashing, effort="medium")
    metrics = result.metrics["sentiment"]
    assert metrics["cv_folds"] == 0
    assert metrics["anchor_sample_ids"]["positive"] == [1]
    scorer = Scorer.from_snapshot(result.snapshot, embedder=hashing)
    assert scorer.score(["our dinner was wonderful and lovely"])[0, 0] > 0.5


def test_identical_texts_on_both_poles_give_neutral_scores_not_a_crash(hashing: Embedder) -> None:
    texts = ["the hotel was fine", "our dinner was fine"]
    samples = [Sample("sentiment", t, q) for t in texts for q in (1.0, 0.0)]
    sentiment = TraitSpec("sentiment", "Sentiment", "positive", "negative")
    # Without the prior (params of a version trained before it) the samples give no axis at all.
    plain = {"sentiment": {"shrinkage": 0.9, "folds": 2, "repeats": 1}}
    result = train([sentiment], samples, embedder=hashing, effort="low", params=plain)
    scorer = Scorer.from_snapshot(result.snapshot, embedder=hashing)
    assert scorer.score(["anything at all"])[0, 0] == 0.5
    # With it, the samples carry no side and the labels decide the direction.
    result = train([sentiment], samples, embedder=hashing, effort="low")
    assert result.metrics["sentiment"]["method"] == "prior"
    scorer = Scorer.from_snapshot(result.snapshot, embedder=hashing)
    low, high = scorer.score(["a negative text", "a positive text"])[:, 0]
    assert 0.0 < low < 0.5 < high < 1.0


def test_fold_moments_by_subtraction_match_a_direct_fit() -> None:
    rng = np.random.default_rng(1)
    X = rng.standard_normal((600, 16))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    q = np.where(rng.random(600) < 0.5, 1.0, 0.0)
    q[:50] = rng.random(50)  # some soft qualities too
    test = np.arange(0, 600, 5)
    train_idx = np.setdiff1d(np.arange(600), test)
    direct = AxisSpectrum.from_data(X[train_idx], q[train_idx])
    moments = PoleMoments.of(X, q) - PoleMoments.of(X[test], q[test])
    subtracted = moments.spectrum(len(train_idx))
    for shrinkage in (1.0, 0.9, 0.3, 0.01):
        w1, o1 = direct.axis(shrinkage)
        w2, o2 = subtracted.axis(shrinkage)
        np.testing.assert_allclose(w1, w2, atol=1e-10)
        assert o1 == pytest.approx(o2, abs=1e-10)


def test_another_process_trains_the_same_snapshot(
    corpus: Any, hashing: Embedder, fresh_python: FreshPython
) -> None:
    samples = corpus.sentiment_samples()
    result = train([corpus.SENTIMENT], samples, embedder=hashing, effort="medium")
    script = (
        "import json, sys\n"
        "from core.embedders import get_embedder\n"
        "from core.engine import Sample, TraitSpec, train\n"
        "data = json.load(sys.stdin)\n"
        "trait = TraitSpec(**data['trait'])\n"
        "samples = [Sample(**s) for s in data['samples']]\n"
        "result = train([trait], samples, embedder=get_embedder('hashing'), effort='medium')\n"
        "print(json.dumps(result.snapshot))\n"
    )
    payload = json.dumps(
        {"trait": dataclasses.asdict(corpus.SENTIMENT), "samples": [dataclasses.asdict(s) for s in samples]}
    )
    assert json.loads(fresh_python(script, input=payload).stdout) == result.snapshot
