"""The `balanced_cosine` trait model: a class-balanced, shrunk prototype axis with a calibrated sigmoid.

From L2-normalised embeddings X and qualities q in [0, 1]:

* positive prototype p+ = weighted mean of X with weights q, negative p- with weights 1 - q, each
  pole's weights normalised to sum 1, so 500 samples on one pole and 20 on the other weigh the
  same (class balance);
* axis w = (S_shrunk)^-1 (p+ - p-), where S is the class-balanced pooled within-pole covariance and
  S_shrunk = (1 - shrinkage) S + shrinkage * mu * I with mu = trace(S) / n_distinct. shrinkage 1 is the
  pure prototype (cosine) axis; small shrinkage is LDA-like. Scaling the target by the sample count
  (the noise of an estimated covariance grows like dim / n) keeps one shrinkage value good across
  sample sizes, so params reused on a grown sample set stay sensible;
* w is scaled so that r(p+) = +1 and r(p-) = -1 for the raw score r(x) = w . (x - m), m the midpoint
  of the prototypes; so the midpoint maps to 0.5 after calibration;
* score(x) = sigmoid(k * r(x)), with k fitted on out-of-fold raw scores (see `fit_calibration`).

Everything is float64 and deterministic (fixed fold seeds, no randomness elsewhere).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.optimize import minimize_scalar
from scipy.special import expit
from sklearn.model_selection import RepeatedStratifiedKFold, StratifiedKFold
from threadpoolctl import threadpool_limits

from core.engine.poles import on_poles, pole_signs

#: Bounds of the calibration slope. r is +-1 at the prototypes, so k = 0.25 still keeps the
#: axis order visible when held-out folds found no signal, and 200 is far past any real fit.
K_MIN = 0.25
K_MAX = 200.0
#: The spread in log k of the prior `fit_temperature` puts on a slope.
PRIOR_SD = 0.75
#: Prototypes closer than this are the same point: the trait has no usable axis.
_DEGENERATE = 1e-12

Split = tuple[np.ndarray, np.ndarray]


def raw_scores(E: np.ndarray, w: np.ndarray, offset: float) -> np.ndarray:
    """r = E . w - offset per row, float64.

    A row-wise sum rather than a BLAS product: each row's result then depends only on that row,
    so a text scores bit-identically alone or in any batch, in the trainer or from a snapshot.
    """
    raw: np.ndarray = (np.asarray(E, dtype=np.float64) * np.asarray(w, dtype=np.float64)).sum(axis=1) - offset
    return raw


def pole_labels(q: np.ndarray) -> np.ndarray:
    """1 for a positive sample, 0 for a negative one. The model is fitted on pole samples only: a neutral one
    (quality exactly 0.5) defines neither pole, and its callers leave it out (`on_poles`)."""
    return (pole_signs(q) > 0).astype(np.int64)


def _distinct_rows(X: np.ndarray) -> int:
    """How many different vectors X holds: repeated texts carry no new information, so duplicating
    a pole must not change the shrinkage (rows are compared through a fixed random projection)."""
    probe = np.random.default_rng(12345).standard_normal(X.shape[1])
    return int(np.unique(X @ probe).size)


@dataclass
class AxisSpectrum:
    """What every shrinkage value needs: the prototypes and the within-pole covariance S.

    With fewer (sample, pole) rows than dimensions S is kept as its thin SVD (exact and cheap);
    otherwise as the dense matrix, and each shrinkage value costs one Cholesky solve.
    """

    p_pos: np.ndarray
    p_neg: np.ndarray
    mu: float  # trace(S) / n_distinct, the scale of the identity target
    evals: np.ndarray | None = None  # non-zero spectrum of S (thin-SVD form)
    evecs: np.ndarray | None = None  # (dim, r) orthonormal columns (thin-SVD form)
    cov: np.ndarray | None = None  # S itself (dense form)
    trace: float = 0.0  # trace(S), the spread of the samples around their prototypes
    n_pos: float = 1.0  # weight on each pole (sample count for hard labels), for the prior's strength
    n_neg: float = 1.0

    @classmethod
    def from_data(cls, X: np.ndarray, q: np.ndarray) -> AxisSpectrum:
        X = np.asarray(X, dtype=np.float64)
        q = np.asarray(q, dtype=np.float64)
        a, b = q, 1.0 - q
        a_sum, b_sum = float(a.sum()), float(b.sum())
        p_pos = (a @ X) / a_sum
        p_neg = (b @ X) / b_sum
        # S = 1/2 (S+ + S-) = R^T R with one row per (sample, pole) that has weight on that pole.
        ia, ib = a > 0, b > 0
        rows = np.concatenate(
            [
                np.sqrt(0.5 * a[ia] / a_sum)[:, None] * (X[ia] - p_pos),
                np.sqrt(0.5 * b[ib] / b_sum)[:, None] * (X[ib] - p_neg),
            ]
        )
        trace = float(np.einsum("ij,ij->", rows, rows))
        # The identity target's scale: trace(S) / n. The noise in an estimated covariance grows like
        # dim / n, so this keeps one shrinkage value near-optimal from 8 to 256 samples per pole.
        mu = trace / _distinct_rows(X)
        if not mu > 0.0:
            mu = 1.0  # every sample sits on its prototype: any positive scale is the same
        if rows.shape[0] < X.shape[1]:
            _, sv, vt = np.linalg.svd(rows, full_matrices=False)
            return cls(p_pos, p_neg, mu, trace=trace, n_pos=a_sum, n_neg=b_sum, evals=sv**2, evecs=vt.T)
        return cls(p_pos, p_neg, mu, trace=trace, n_pos=a_sum, n_neg=b_sum, cov=rows.T @ rows)

    def prior_pull(self, strength: float) -> float:
        """Length of the prior direction added to p+ - p- (see `axis`).

        strength x sqrt(trace(S)) x (1/n+ + 1/n-) / 2: the samples' spread, times the prior's weight
        relative to the samples, which falls as 1/n like the posterior mean of a Gaussian mean
        difference under a Gaussian prior centred on the pole-text direction.
        """
        spread = float(np.sqrt(max(self.trace, 0.0)))
        return float(strength) * spread * 0.5 * (1.0 / self.n_pos + 1.0 / self.n_neg)

    def axis(
        self, shrinkage: float, prior: np.ndarray | None = None, strength: float = 0.0
    ) -> tuple[np.ndarray, float]:
        """Return (w, offset) with raw score r(x) = x . w - offset.

        `prior` (a unit vector, the pole-text direction) with `strength` > 0 is added to the prototype
        difference before the shrunk covariance is applied: a MAP estimate of the mean difference
        pulled toward the labels' direction (`prior_pull`). The midpoint stays the samples' own.
        """
        delta = self.p_pos - self.p_neg
        if prior is not None and strength > 0.0:
            delta = delta + self.prior_pull(strength) * np.asarray(prior, dtype=np.float64)
        dim = delta.shape[0]
        if float(delta @ delta) < _DEGENERATE:
            return np.zeros(dim), 0.0
        g = float(shrinkage)
        if g >= 1.0:
            w = delta.copy()  # pure prototype axis: the identity target alone
        elif self.cov is not None:
            shrunk = (1.0 - g) * self.cov
            shrunk[np.diag_indices(dim)] += g * self.mu
            w = cho_solve(cho_factor(shrunk, check_finite=False), delta, check_finite=False)
        else:
            assert self.evecs is not None and self.evals is not None
            proj = self.evecs.T @ delta
            inside = self.evecs @ (proj / ((1.0 - g) * self.evals + g * self.mu))
            outside = (delta - self.evecs @ proj) / (g * self.mu)  # directions where S is 0
            w = inside + outside
        # Scale so w . delta = 2: r(p+) = 1 and r(p-) = -1 without a prior; w . delta > 0 because the
        # shrunk S is positive definite.
        w = w * (2.0 / float(w @ delta))
        m = 0.5 * (self.p_pos + self.p_neg)
        return w, float(m @ w)


def make_splits(y: np.ndarray, folds: int, repeats: int = 1, seed: int = 0) -> list[list[Split]]:
    """Stratified folds (grouped per repeat); none when a pole has fewer than 2 samples."""
    counts = np.bincount(y, minlength=2)
    k = min(int(folds), int(np.min(counts)))
    if k < 2:
        return []
    index = np.zeros(len(y))
    if repeats <= 1:
        cv = StratifiedKFold(n_splits=k, shuffle=True, random_state=seed)
        return [list(cv.split(index, y))]
    rcv = RepeatedStratifiedKFold(n_splits=k, n_repeats=repeats, random_state=seed)
    all_splits = list(rcv.split(index, y))
    return [all_splits[r * k : (r + 1) * k] for r in range(repeats)]


@dataclass
class PoleMoments:
    """Weighted sums per pole (count, first and second moments); additive over samples, so the
    moments of a training fold are the full moments minus the held-out fold's. That makes K-fold
    cost about two passes over the data instead of K."""

    a_sum: float
    b_sum: float
    a_first: np.ndarray
    b_first: np.ndarray
    a_second: np.ndarray
    b_second: np.ndarray

    @classmethod
    def of(cls, X: np.ndarray, q: np.ndarray) -> PoleMoments:
        a, b = q, 1.0 - q
        ia, ib = a > 0, b > 0
        xa = X[ia] * np.sqrt(a[ia])[:, None]
        xb = X[ib] * np.sqrt(b[ib])[:, None]
        return cls(float(a.sum()), float(b.sum()), a @ X, b @ X, xa.T @ xa, xb.T @ xb)

    def __sub__(self, other: PoleMoments) -> PoleMoments:
        return PoleMoments(
            self.a_sum - other.a_sum,
            self.b_sum - other.b_sum,
            self.a_first - other.a_first,
            self.b_first - other.b_first,
            self.a_second - other.a_second,
            self.b_second - other.b_second,
        )

    def spectrum(self, n_distinct: int) -> AxisSpectrum:
        p_pos = self.a_first / self.a_sum
        p_neg = self.b_first / self.b_sum
        cov_pos = self.a_second / self.a_sum - np.outer(p_pos, p_pos)
        cov_neg = self.b_second / self.b_sum - np.outer(p_neg, p_neg)
        cov = 0.5 * (cov_pos + cov_neg)
        trace = float(np.trace(cov))
        mu = trace / n_distinct
        return AxisSpectrum(
            p_pos=p_pos,
            p_neg=p_neg,
            mu=mu if mu > 0.0 else 1.0,
            cov=cov,
            trace=trace,
            n_pos=self.a_sum,
            n_neg=self.b_sum,
        )


def oof_raw_scores(
    X: np.ndarray,
    q: np.ndarray,
    shrinkages: Sequence[float],
    splits: list[list[Split]],
    prior: np.ndarray | None = None,
    strengths: Sequence[float] = (0.0,),
    progress: Callable[[float], None] | None = None,
) -> np.ndarray:
    """Out-of-fold raw scores, shape (repeats, len(shrinkages) * len(strengths), n).

    Candidates are ordered shrinkage-major: candidate g * len(strengths) + j is (shrinkages[g],
    strengths[j]); `strengths` are prior strengths toward the unit vector `prior` (ignored without one).
    `progress` gets the share of folds done after each fold (the search is most of a training's time).
    """
    X = np.asarray(X, dtype=np.float64)
    n, dim = X.shape
    out = np.empty((len(splits), len(shrinkages) * len(strengths), n))
    # Many samples: fold moments by subtraction (dense S). Few: a thin SVD per fold is cheaper.
    full = PoleMoments.of(X, q) if n >= 2 * dim else None
    folds, done = sum(len(repeat) for repeat in splits), 0
    for r, repeat in enumerate(splits):
        for train_idx, test_idx in repeat:
            if full is not None and len(train_idx) >= dim:
                held_out = PoleMoments.of(X[test_idx], q[test_idx])
                spectrum = (full - held_out).spectrum(_distinct_rows(X[train_idx]))
            else:
                spectrum = AxisSpectrum.from_data(X[train_idx], q[train_idx])
            Xt = X[test_idx]
            for g, shrinkage in enumerate(shrinkages):
                for j, strength in enumerate(strengths):
                    w, offset = spectrum.axis(shrinkage, prior, strength)
                    out[r, g * len(strengths) + j, test_idx] = raw_scores(Xt, w, offset)
            done += 1
            if progress is not None:
                progress(done / folds)
    return out


def fit_calibration(raw: np.ndarray, q: np.ndarray) -> float:
    """Slope k of score = sigmoid(k * raw), no intercept, fitted class-balanced.

    Minimises the class-balanced cross-entropy against soft targets q, with Platt's target
    smoothing (hard 1 -> (N+ + 1)/(N+ + 2), hard 0 -> 1/(N- + 2)) so that perfectly separated
    folds give a finite, not an infinite, slope. `raw` may be (n,) or (repeats, n).
    """
    raw = np.atleast_2d(np.asarray(raw, dtype=np.float64))
    q = np.asarray(q, dtype=np.float64)
    y = pole_labels(q)
    n_pos, n_neg = int(y.sum()), int(len(y) - y.sum())
    hi = (n_pos + 1.0) / (n_pos + 2.0)
    lo = 1.0 / (n_neg + 2.0)
    target = np.tile(q * hi + (1.0 - q) * lo, raw.shape[0])
    weight = np.tile(np.where(y == 1, 0.5 / max(n_pos, 1), 0.5 / max(n_neg, 1)), raw.shape[0])
    r = raw.ravel()
    if not np.any(r):
        return K_MIN

    def loss(log_k: float) -> float:
        z = np.exp(log_k) * r
        return float(weight @ (np.logaddexp(0.0, z) - target * z))

    res = minimize_scalar(
        loss, bounds=(np.log(K_MIN), np.log(K_MAX)), method="bounded", options={"xatol": 1e-9}
    )
    return float(np.exp(res.x))


def fit_temperature(raw: np.ndarray, q: np.ndarray, prior_k: float, prior_sd: float = PRIOR_SD) -> float:
    """Slope k of score = sigmoid(k * raw), no intercept: the class-balanced logistic fit to the qualities q
    of the held-out `raw` ((n,) or (repeats, n)), with a log-normal prior on k centred on `prior_k`.

    The repeats are the same n samples scored again, so together they weigh as n samples, not repeats x n:
    with 8 samples a pole the held-out labels say little about k and the prior stands; with hundreds they
    decide. Unlike Platt's target smoothing the prior does not cap the scores short of the poles, and a
    perfectly separated set of folds still gives a finite slope.
    """
    raw = np.atleast_2d(np.asarray(raw, dtype=np.float64))
    q = np.asarray(q, dtype=np.float64)
    y = pole_labels(q)
    n_pos, n_neg = int(y.sum()), int(len(y) - y.sum())
    repeats = raw.shape[0]
    target = np.tile(q, repeats)
    each = np.where(y == 1, 0.5 / max(n_pos, 1), 0.5 / max(n_neg, 1)) * len(y) / repeats
    weight = np.tile(each, repeats)
    r = raw.ravel()
    centre = float(np.log(prior_k))

    def loss(log_k: float) -> float:
        z = np.exp(log_k) * r
        return float(weight @ (np.logaddexp(0.0, z) - target * z)) + 0.5 * ((log_k - centre) / prior_sd) ** 2

    res = minimize_scalar(
        loss, bounds=(np.log(K_MIN), np.log(K_MAX)), method="bounded", options={"xatol": 1e-9}
    )
    return float(np.exp(res.x))


class BalancedCosineTrait:
    """One trait axis, scikit-learn style: parameters in the constructor, `fit` returns self.

    Parameters
    ----------
    shrinkage : float in (0, 1]
        Weight of the identity target in the shrunk within-pole covariance (1 = prototype cosine).
    folds, repeats : int
        Stratified K-fold (repeated) used to get out-of-fold raw scores for the calibration.
    random_state : int
        Seed of the fold assignment.
    prior, prior_strength : unit vector or None, float >= 0
        The pole-text direction the axis is pulled toward, and how strongly (`AxisSpectrum.axis`).

    Learned attributes: `w_`, `offset_` (= m . w), `k_`, `positive_prototype_`,
    `negative_prototype_`, `oof_raw_` ((repeats, n) out-of-fold raw scores, or None when a
    pole has fewer than 2 samples and the calibration falls back to in-sample raw scores).
    """

    def __init__(
        self,
        shrinkage: float = 1.0,
        folds: int = 5,
        repeats: int = 1,
        random_state: int = 0,
        prior: np.ndarray | None = None,
        prior_strength: float = 0.0,
    ):
        self.shrinkage = shrinkage
        self.folds = folds
        self.repeats = repeats
        self.random_state = random_state
        self.prior = prior
        self.prior_strength = prior_strength

    def fit(self, X: np.ndarray, y: np.ndarray, *, oof_raw: np.ndarray | None = None) -> BalancedCosineTrait:
        """Fit on embeddings X (n, dim) and qualities y (n,) in [0, 1], none of them neutral (0.5: it defines
        neither pole, so a caller leaves such rows out, as `train` does; given one, this raises ValueError).

        `oof_raw` lets a caller that already computed this shrinkage's out-of-fold raw scores
        (the parameter search) pass them in instead of refitting every fold.
        """
        if not on_poles(y).all():
            raise ValueError("neutral qualities (0.5) define neither pole: leave those rows out of the fit")
        with threadpool_limits(limits=1, user_api="blas"):  # small matrices: see core.engine.training
            return self._fit(np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64), oof_raw)

    def _fit(self, X: np.ndarray, q: np.ndarray, oof_raw: np.ndarray | None) -> BalancedCosineTrait:
        spectrum = AxisSpectrum.from_data(X, q)
        self.positive_prototype_ = spectrum.p_pos
        self.negative_prototype_ = spectrum.p_neg
        self.w_, self.offset_ = spectrum.axis(self.shrinkage, self.prior, self.prior_strength)
        if oof_raw is None:
            splits = make_splits(pole_labels(q), self.folds, self.repeats, self.random_state)
            oof_raw = (
                oof_raw_scores(X, q, [self.shrinkage], splits, self.prior, [self.prior_strength])[:, 0, :]
                if splits
                else None
            )
        self.oof_raw_ = None if oof_raw is None else np.atleast_2d(oof_raw)
        calibration_raw = self.oof_raw_ if self.oof_raw_ is not None else self.decision_function(X)
        self.k_ = fit_calibration(calibration_raw, q)
        return self

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        """Raw score r(x) = w . x - m . w (0 at the midpoint, +-1 at the prototypes)."""
        return raw_scores(X, self.w_, self.offset_)

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """Calibrated score in [0, 1] per row (the positive pole's probability)."""
        return np.asarray(expit(self.k_ * self.decision_function(X)))
