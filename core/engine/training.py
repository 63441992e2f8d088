"""`train`: validate, embed once, search each trait's shrinkage by cross-validation, calibrate, snapshot."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import expit
from threadpoolctl import threadpool_limits

from core.embedders.base import Embedder
from core.engine import metrics as m
from core.engine.errors import EngineError, InvalidEffortError, InvalidParamsError
from core.engine.pole_text import ZeroShotAxis, all_pole_texts, zero_shot_axis
from core.engine.poles import on_poles
from core.engine.snapshot import SCORING_METHOD, dump_snapshot, model_sha256
from core.engine.trait_model import BalancedCosineTrait, make_splits, oof_raw_scores, pole_labels
from core.engine.types import JsonObject, ProgressFn, Sample, TrainingResult, TraitSpec
from core.engine.validation import validate_samples

FOLD_SEED = 0
#: The params recorded for a zero-shot trait (no samples: nothing to search).
ZERO_SHOT_PARAMS: JsonObject = {"method": "zero_shot"}
#: The prior's strength for traits trained on samples (`AxisSpectrum.prior_pull`).
PRIOR_STRENGTH = 4.0


@dataclass(frozen=True)
class SearchPlan:
    """The candidates and the cross-validation of one effort level."""

    shrinkages: tuple[float, ...]  # tried in this order; ties go to the larger value
    folds: int
    repeats: int


#: The shrinkage the search starts from: near-optimal from 8 to 256 samples per pole on the quality
#: benchmark (the identity target is scaled by trace(S) / n, see trait_model). The search moves away from
#: it only on clear cross-validated evidence (see `_choose`).
PRIOR_SHRINKAGE = 0.87
#: How many standard errors of the paired AUC difference a candidate may trail the best one and still
#: count as "as good" (Breiman's one-standard-error rule).
SE_RULE = 1.0

#: Breadth grows with effort. 1.0 is the pure prototype-cosine axis; smaller values whiten the axis
#: by the within-pole covariance. Every grid holds values on both sides of the prior; more effort adds
#: values and repeated folds, which makes the cross-validated evidence less noisy.
SEARCH_PLANS: dict[str, SearchPlan] = {
    "low": SearchPlan((1.0, 0.9, 0.8), folds=3, repeats=1),
    "medium": SearchPlan((0.95, 0.92, 0.9, 0.87, 0.85, 0.82, 0.8), folds=5, repeats=3),
    "high": SearchPlan((1.0, 0.97, 0.95, 0.92, 0.9, 0.87, 0.85, 0.8, 0.7), folds=5, repeats=4),
    "max": SearchPlan(
        (1.0, 0.99, 0.98, 0.97, 0.95, 0.93, 0.92, 0.9, 0.88, 0.87, 0.85, 0.82, 0.8, 0.75, 0.7, 0.6, 0.5, 0.3),
        folds=5,
        repeats=6,
    ),
}


def canonical_json(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def param_hash(params: Mapping[str, Mapping[str, object]], embedder_id: str) -> str:
    """sha256 of the canonical JSON of every trait's chosen params, the embedder id and the method."""
    doc = {"method": SCORING_METHOD, "embedder": embedder_id, "traits": params}
    return hashlib.sha256(canonical_json(doc).encode("ascii")).hexdigest()


def _check_params(key: str, given: object) -> JsonObject:
    """Reused params of one trait: {"shrinkage": (0, 1], "folds": int >= 2, "repeats": int >= 1}."""
    if not isinstance(given, Mapping):
        raise InvalidParamsError(f"params for trait {key!r} must be an object, got {type(given).__name__}")
    shrinkage = given.get("shrinkage")
    if (
        isinstance(shrinkage, bool)
        or not isinstance(shrinkage, int | float)
        or not math.isfinite(shrinkage)
        or not 0.0 < shrinkage <= 1.0
    ):
        raise InvalidParamsError(f"params for trait {key!r}: shrinkage must be in (0, 1], got {shrinkage!r}")
    out: JsonObject = {"shrinkage": float(shrinkage)}
    strength = given.get("prior_strength", 0.0)
    if (
        isinstance(strength, bool)
        or not isinstance(strength, int | float)
        or not math.isfinite(strength)
        or strength < 0.0
    ):
        raise InvalidParamsError(f"params for trait {key!r}: prior_strength must be >= 0, got {strength!r}")
    if strength > 0.0:
        out["prior_strength"] = float(strength)
    for name, default, low in (("folds", 5, 2), ("repeats", 1, 1)):
        value = given.get(name, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise InvalidParamsError(
                f"params for trait {key!r}: {name} must be an integer >= {low}, got {value!r}"
            )
        out[name] = value
    return out


def auc_difference_se(a: np.ndarray, b: np.ndarray, q: np.ndarray) -> float:
    """Standard error of AUC(a) - AUC(b) for two scorings of the same samples (DeLong's paired variance).

    Each positive's and each negative's share of the Mann-Whitney statistic (its "structural component")
    is computed by binary search, so this is O(n log n) and needs no n+ x n- matrix. 0 when a side has
    fewer than two samples (no variance estimate).
    """
    mask, y = m.sides(q)
    if min(int(y.sum()), int(len(y) - y.sum())) < 2:
        return 0.0

    def components(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pos, neg = np.sort(s[y == 1]), np.sort(s[y == 0])
        below = np.searchsorted(neg, s[y == 1], "left")
        tied = np.searchsorted(neg, s[y == 1], "right") - below
        above = len(pos) - np.searchsorted(pos, s[y == 0], "right")
        tied_neg = len(pos) - np.searchsorted(pos, s[y == 0], "left") - above
        return (below + 0.5 * tied) / len(neg), (above + 0.5 * tied_neg) / len(pos)

    a10, a01 = components(np.asarray(a, dtype=np.float64)[mask])
    b10, b01 = components(np.asarray(b, dtype=np.float64)[mask])
    d10, d01 = a10 - b10, a01 - b01
    return float(np.sqrt(d10.var(ddof=1) / len(d10) + d01.var(ddof=1) / len(d01)))


def auc_se(scores: np.ndarray, q: np.ndarray) -> float | None:
    """Standard error of the ROC-AUC of `scores` (DeLong's variance; the mean over repeats for a 2-D array of
    out-of-fold scores): how far the out-of-fold figure may be from the model's true one. None when a side has
    fewer than two samples."""
    mask, y = m.sides(q)
    if min(int(y.sum()), int(len(y) - y.sum())) < 2:
        return None
    s = np.atleast_2d(np.asarray(scores, dtype=np.float64)).mean(axis=0)[mask]
    pos, neg = np.sort(s[y == 1]), np.sort(s[y == 0])
    v10 = (np.searchsorted(neg, s[y == 1], "left") + np.searchsorted(neg, s[y == 1], "right")) / (
        2 * len(neg)
    )
    v01 = (
        2 * len(pos) - np.searchsorted(pos, s[y == 0], "left") - np.searchsorted(pos, s[y == 0], "right")
    ) / (2 * len(pos))
    return float(np.sqrt(v10.var(ddof=1) / len(v10) + v01.var(ddof=1) / len(v01)))


def _choose(
    aucs: list[float | None],
    shrinkages: Sequence[float],
    oof: np.ndarray | None = None,
    q: np.ndarray | None = None,
) -> int:
    """Index of the chosen candidate: the one-standard-error rule, centred on the prior.

    Candidates whose cross-validated AUC trails the best by at most SE_RULE standard errors of the
    paired difference (`auc_difference_se` on the repeat-averaged out-of-fold scores `oof`, shape
    (repeats, candidates, n)) are as good as the best; of those the one closest to PRIOR_SHRINKAGE wins,
    ties to the larger shrinkage. With 8-16 samples per pole the fold AUCs are mostly noise, so the
    prior usually stands; with hundreds the standard errors shrink and the best AUC decides. Without
    `oof` this is the plain best AUC; with no AUC at all the largest shrinkage wins.
    """
    order = sorted(range(len(shrinkages)), key=lambda j: -shrinkages[j])
    best, best_auc = None, -math.inf
    for i in order:
        auc = aucs[i]
        if auc is not None and auc > best_auc + 1e-12:
            best, best_auc = i, auc
    if best is None:
        return order[0]
    if oof is None or q is None:
        return best
    mean_oof = np.asarray(oof).mean(axis=0)
    tolerable = [
        i
        for i in order
        if (auc := aucs[i]) is not None
        and auc >= best_auc - SE_RULE * auc_difference_se(mean_oof[best], mean_oof[i], q) - 1e-12
    ]
    return min(tolerable, key=lambda i: (abs(shrinkages[i] - PRIOR_SHRINKAGE), -shrinkages[i]))


@dataclass
class FittedTrait:
    model: BalancedCosineTrait
    params: JsonObject
    metrics: JsonObject
    search: list[JsonObject]  # every candidate's cross-validated AUC, for the record
    #: (held-out scores of every repeat, the qualities) when folds exist: what a blend of embedders measures
    #: on.
    held_out: tuple[np.ndarray, np.ndarray] | None = None


def fit_trait(
    X: np.ndarray,
    q: np.ndarray,
    ids: Sequence[int | None],
    *,
    plan: SearchPlan,
    prior: np.ndarray | None = None,
    prior_strength: float = 0.0,
    progress: Callable[[float], None] | None = None,
    neutral: int = 0,
) -> FittedTrait:
    """Search `plan`, fit the chosen shrinkage on all samples, and measure it on held-out folds.

    `q` holds no neutral quality: `neutral` is how many samples of quality 0.5 the caller left out (they
    define neither pole), reported beside the poles' counts.

    `progress` gets the share of the search's folds done (0 to 1) as they finish.

    `prior` (the unit pole-text direction) with `prior_strength` > 0 pulls every candidate axis toward
    the trait's labels (`AxisSpectrum.axis`); the strength is a fixed rule, not searched.
    """
    if prior is None:
        prior_strength = 0.0
    splits = make_splits(pole_labels(q), plan.folds, plan.repeats, FOLD_SEED)
    oof_chosen = None
    search: list[JsonObject] = []
    if splits:
        oof = oof_raw_scores(X, q, plan.shrinkages, splits, prior, [prior_strength], progress)
        aucs = [m.cv_roc_auc(oof[:, g, :], q) for g in range(len(plan.shrinkages))]
        chosen = _choose(aucs, plan.shrinkages, oof, q)
        oof_chosen = oof[:, chosen, :]
        search = [{"shrinkage": s, "roc_auc": a} for s, a in zip(plan.shrinkages, aucs, strict=True)]
    else:
        chosen = _choose([None] * len(plan.shrinkages), plan.shrinkages)
    shrinkage = plan.shrinkages[chosen]
    model = BalancedCosineTrait(
        shrinkage, plan.folds, plan.repeats, FOLD_SEED, prior=prior, prior_strength=prior_strength
    ).fit(X, q, oof_raw=oof_chosen)

    # Held-out raw scores when folds exist; otherwise (a pole with one sample) in-sample ones.
    raw = model.oof_raw_ if model.oof_raw_ is not None else model.decision_function(X)[None, :]
    held_out = np.asarray(expit(model.k_ * raw))
    params: JsonObject = {"shrinkage": float(shrinkage), "folds": plan.folds, "repeats": plan.repeats}
    if prior_strength > 0.0:
        params["prior_strength"] = float(prior_strength)
    y = pole_labels(q)
    metrics = {
        "method": "prior" if prior_strength > 0.0 else "samples",
        "positive_samples": int(y.sum()),
        "negative_samples": int(len(y) - y.sum()),
        "neutral_samples": neutral,
        "roc_auc": m.cv_roc_auc(raw, q),
        # How much `roc_auc` can be trusted: with few samples a side it is a noisy figure (docs/api.md).
        "roc_auc_se": auc_se(raw, q) if model.oof_raw_ is not None else None,
        "accuracy": m.accuracy(held_out, q),
        **calibration_figures(held_out, q),
        "discrimination": m.discrimination(held_out, q),
        "explained_variance": m.explained_variance(X, model.w_),
        "anchor_sample_ids": m.anchor_sample_ids(
            X, q, ids, model.positive_prototype_, model.negative_prototype_
        ),
        "params": dict(params),
        "cv_folds": len(splits[0]) if splits else 0,
        "k": model.k_,
        "search": search,
        "label_agreement": _cosine(prior, model.positive_prototype_ - model.negative_prototype_),
    }
    folds = (held_out, q) if model.oof_raw_ is not None else None
    return FittedTrait(model=model, params=params, metrics=metrics, search=search, held_out=folds)


def calibration_figures(held_out: np.ndarray, q: np.ndarray) -> JsonObject:
    """The out-of-fold calibration error and slope of held-out scores (repeats, n) of samples of qualities q,
    every repeat's pooled into one set of items."""
    return {
        "calibration_error": float(m.expected_calibration_error(held_out.ravel(), np.tile(q, len(held_out)))),
        "calibration_slope": m.calibration_slope(held_out, q),
    }


def _cosine(a: np.ndarray | None, b: np.ndarray) -> float | None:
    """Cosine of two directions; None without a prior or with a zero vector."""
    if a is None:
        return None
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b / norm) if norm > 0.0 else None


def fit_zero_shot(axis: ZeroShotAxis) -> FittedTrait:
    """A trait without samples: its pole-text axis, calibrated on the pole texts (see `pole_text`)."""
    model = BalancedCosineTrait(1.0)
    model.w_, model.offset_, model.k_ = axis.w, axis.offset, axis.k
    params = dict(ZERO_SHOT_PARAMS)
    metrics = {
        "method": "zero_shot",
        "positive_samples": 0,
        "negative_samples": 0,
        "neutral_samples": 0,
        "roc_auc": None,
        "roc_auc_se": None,
        "accuracy": None,
        "calibration_error": None,
        "calibration_slope": None,
        "discrimination": None,
        "explained_variance": None,
        "anchor_sample_ids": {"positive": [], "negative": []},
        "params": dict(params),
        "cv_folds": 0,
        "k": axis.k,
        "search": [],
        "label_agreement": None,
        "pole_texts": axis.n_texts,
    }
    return FittedTrait(model=model, params=params, metrics=metrics, search=[])


def _embed_unique(embedder: Embedder, texts: list[str]) -> np.ndarray:
    vectors = np.asarray(embedder.encode(texts))
    if vectors.shape != (len(texts), embedder.dim):
        raise EngineError(
            f"embedder {embedder.id!r} returned an array of shape {vectors.shape}, "
            f"expected {(len(texts), embedder.dim)}"
        )
    if not np.all(np.isfinite(vectors)):
        raise EngineError(f"embedder {embedder.id!r} returned non-finite values")
    return vectors  # float32; each trait's rows become float64 when it is fitted


def train(
    traits: Sequence[TraitSpec],
    samples: Sequence[Sample],
    *,
    embedder: Embedder,
    effort: str = "medium",
    params: Mapping[str, Mapping[str, object]] | None = None,
    progress: ProgressFn | None = None,
    prior_strength: float = PRIOR_STRENGTH,
) -> TrainingResult:
    """Train every trait with `balanced_cosine` and return the snapshot, metrics and param_hash.

    `prior_strength` (for searched traits; 0 turns the prior off, as the quality benchmark's
    comparison does) defaults to `PRIOR_STRENGTH`.

    A trait without samples is zero-shot (its pole-text axis); a trait with samples on both poles is
    fitted on them with the pole-text prior; samples on one pole only raise `OnePoleTraitError`. Neutral
    samples (quality 0.5) define neither pole: each trait is fitted without them, and its metrics say how
    many it left out (`neutral_samples`).
    `params` (per trait key, as in a previous `TrainingResult.params`) skips the search for the
    traits it names: automatic retraining reuses the active version's parameters that way. Reused
    params without `prior_strength` (versions trained before the prior) keep training without it;
    zero-shot params of a trait that now has samples are ignored (it is searched afresh).
    """
    if effort not in SEARCH_PLANS:
        raise InvalidEffortError(f"unknown effort {effort!r}; expected one of {', '.join(SEARCH_PLANS)}")
    traits = list(traits)
    clean = validate_samples(traits, samples, allow_empty=True)
    reuse = {
        key: _check_params(key, value)
        for key, value in (params or {}).items()
        if not (isinstance(value, Mapping) and value.get("method") == ZERO_SHOT_PARAMS["method"])
    }

    def report(fraction: float, phase: str) -> None:
        if progress is not None:
            progress(float(min(max(fraction, 0.0), 1.0)), phase)

    report(0.0, "embedding")
    poles = {t.key: all_pole_texts(t) for t in traits}
    fitted_texts = (s.text for s, on in zip(clean, on_poles([s.quality for s in clean]), strict=True) if on)
    texts = list(dict.fromkeys([*fitted_texts, *(x for p, n in poles.values() for x in (*p, *n))]))
    row_of = {t: i for i, t in enumerate(texts)}
    vectors = _embed_unique(embedder, texts)
    by_trait: dict[str, list[Sample]] = {t.key: [] for t in traits}
    for sample in clean:
        by_trait[sample.trait].append(sample)
    searching = any(t.key not in reuse and by_trait[t.key] for t in traits)
    report(0.1, "searching" if searching else "calibrating")

    fitted: dict[str, FittedTrait] = {}
    total = max(len(clean), 1)
    done = 0
    for spec in traits:
        pos, neg = poles[spec.key]
        axis = zero_shot_axis(vectors[[row_of[t] for t in pos]], vectors[[row_of[t] for t in neg]])
        mine = by_trait[spec.key]
        if not mine:
            fitted[spec.key] = fit_zero_shot(axis)
            continue
        members = [s for s, on in zip(mine, on_poles([s.quality for s in mine]), strict=True) if on]
        X = vectors[[row_of[s.text] for s in members]].astype(np.float64)
        q = np.array([s.quality for s in members], dtype=np.float64)
        given = reuse.get(spec.key)
        if given is not None:
            plan = SearchPlan((given["shrinkage"],), given["folds"], given["repeats"])
            strength = given.get("prior_strength", 0.0)
        else:
            plan = SEARCH_PLANS[effort]
            strength = prior_strength
        phase = "searching" if len(plan.shrinkages) > 1 else "calibrating"
        report(0.1 + 0.85 * done / total, phase)

        def fold_done(share: float, before: int = done, size: int = len(mine), phase: str = phase) -> None:
            # Within a trait, by folds: a large trait's search would otherwise hold one figure for minutes.
            report(0.1 + 0.85 * (before + share * size) / total, phase)

        # One BLAS thread: the matrices are small (dim x dim), and on a busy 2-core machine a
        # multi-threaded BLAS runs them up to 10x slower than a single thread does.
        with threadpool_limits(limits=1, user_api="blas"):
            fitted[spec.key] = fit_trait(
                X,
                q,
                [s.id for s in members],
                plan=plan,
                prior=axis.direction,
                prior_strength=strength,
                progress=fold_done,
                neutral=len(mine) - len(members),
            )
        done += len(mine)
        report(0.1 + 0.85 * done / total, "calibrating")

    chosen = {key: f.params for key, f in fitted.items()}
    digest = param_hash(chosen, embedder.id)
    snapshot = dump_snapshot(
        traits,
        [(f.model.w_, f.model.offset_, f.model.k_) for f in (fitted[t.key] for t in traits)],
        chosen,
        embedder_id=embedder.id,
        embedder_dim=embedder.dim,
        embedder_model_sha256=model_sha256(embedder),
        param_hash=digest,
    )
    report(1.0, "done")
    return TrainingResult(
        snapshot=snapshot,
        metrics={key: f.metrics for key, f in fitted.items()},
        param_hash=digest,
        params=chosen,
        held_out={key: f.held_out for key, f in fitted.items() if f.held_out is not None},
    )
