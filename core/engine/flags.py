"""Flags on a model's samples: likely mislabelled, contested and outlier texts (the workbench's Flags tab).

The samples are counted as votes per (trait, text) first (`core.engine.votes.count_votes`, as training counts
them). A text whose counted votes fall on both poles and that no reviewer settled is contested: a disagreement
to settle, never "likely mislabelled" (on data whose labels are contested, that flag used to mark the hard
cases rather than the mistakes).

A sample is likely mislabelled when two signals, on average, speak strongly against its label: its out-of-fold
probability (`oof_scores`: class-balanced logistic regression on the embeddings, C = 1, each sample scored by
the model of the stratified 5-fold split that did not see it, calibrated with a fitted slope) taken towards
the other pole, and the share of its 10 nearest samples in the trait that carry the other pole's label. The
score alone (a margin of 0.25, the first rule) flagged 5-7% of the clean politeness and subjectivity datasets
and ordinary reviews of the demo drafts; with the neighbours' vote the precision is higher on every dataset.
The out-of-fold model was the product's prototype axis (`BalancedCosineTrait`, shrinkage 1) until logistic
regression ranked the datasets' held-out labels better (AUC 0.77 / 0.82 / 0.94 against 0.75 / 0.79 / 0.92 on
politeness / subjectivity / abuse, MiniLM) at about the same cost; cleanlab's confident learning on the same
probabilities flags 2-7 times as many clean samples (4-24%). benchmarks/flags.py measures all of them, also
on the texts whose raters agree (`--part agreed`); figures in docs/benchmarks/labelling.md.

Outliers are samples whose nearest neighbours within their trait are much less similar than usual (a robust
z-score of the mean cosine similarity to the k nearest neighbours). A sample with a near-duplicate in its
trait is never an outlier, and the spread behind the z-score has a floor: in a trait made mostly of
near-duplicates the median similarity is ~1 with almost no spread, and ordinary samples would otherwise
score z < -3.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

import numpy as np
from scipy.special import expit
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from threadpoolctl import threadpool_limits

from core.contract import FLAG_KINDS, pole_of
from core.embedders.base import Embedder
from core.engine.poles import pole_signs
from core.engine.trait_model import fit_calibration
from core.engine.types import JsonObject
from core.engine.votes import CountedText, Vote, count_votes

OOF_FOLDS = 5
OOF_C = 1.0  # inverse L2 strength of the out-of-fold regression (3 tied with 1; 0.3 and 10 did worse)
LABEL_NEIGHBOURS = 10  # the nearest samples in the trait whose labels vote
MISLABEL_EVIDENCE = 0.75  # mean of (held-out score towards the other pole, share of votes for it) to flag
OUTLIER_Z = -3.0  # robust z of the kNN similarity below which a sample is an outlier
NEIGHBOURS = 5
NEAR_DUPLICATE = 0.95  # cosine similarity to the nearest neighbour at which a sample has a near-duplicate
MIN_SPREAD = 0.05  # floor of the robust spread (cosine): z < -3 needs at least 0.15 below the median


def oof_scores(X: np.ndarray, q: np.ndarray) -> np.ndarray | None:
    """Out-of-fold probability of the positive pole for each pole sample (NaN for a neutral one, which defines
    neither pole and is left out of the fit), or None when a pole has fewer than 2 samples: class-balanced
    logistic regression, stratified folds (at most as many as the smaller pole has samples), fixed seed. Each
    held-out decision value d becomes sigmoid(k * d), k fitted on them all (`fit_calibration`, as the trait
    model calibrates): with few samples the regularised model's own probabilities all sit near 0.5, and no
    sample could reach the evidence threshold."""
    signs = pole_signs(q)
    on = signs != 0
    y = (signs[on] > 0).astype(int)
    smaller = int(np.min(np.bincount(y, minlength=2)))
    if smaller < 2:
        return None
    folds = StratifiedKFold(min(OOF_FOLDS, smaller), shuffle=True, random_state=0)
    model = LogisticRegression(C=OOF_C, class_weight="balanced", max_iter=1000)
    # One BLAS thread: these are small matrices, and threads only contend on a busy machine (as in training).
    with threadpool_limits(limits=1, user_api="blas"):
        decision = np.asarray(cross_val_predict(model, X[on], y, cv=folds, method="decision_function"))
    out = np.full(len(signs), np.nan)
    out[on] = expit(fit_calibration(decision, y.astype(float)) * decision)
    return out


def neighbour_votes(q: np.ndarray, neighbours: np.ndarray) -> np.ndarray:
    """Share of each sample's neighbours (rows of indices) on the other pole than the sample's own. A neutral
    neighbour is on neither pole, so it never speaks against a label; a neutral sample has no other pole:
    0."""
    signs = pole_signs(q)
    share: np.ndarray = (signs[neighbours] == -signs[:, None]).mean(axis=1)
    return np.where(signs != 0, share, 0.0)


def mislabel_evidence(q: np.ndarray, oof: np.ndarray, neighbours: np.ndarray) -> np.ndarray:
    """Per sample, in [0, 1]: the mean of its held-out score towards the other pole (1 - score for a positive
    sample) and the share of its nearest samples (`nearest_neighbours` rows) on that pole; 0 for a neutral
    sample, which has no pole to be wrong about."""
    signs = pole_signs(q)
    towards_other = np.where(signs > 0, 1.0 - oof, oof)
    evidence: np.ndarray = np.where(signs != 0, (towards_other + neighbour_votes(q, neighbours)) / 2, 0.0)
    return evidence


def likely_mislabelled(q: np.ndarray, oof: np.ndarray, neighbours: np.ndarray) -> np.ndarray:
    """Which samples are likely mislabelled: their `mislabel_evidence` reaches MISLABEL_EVIDENCE (never a
    neutral sample: it is labelled toward neither pole)."""
    return mislabel_evidence(q, oof, neighbours) >= MISLABEL_EVIDENCE


def nearest_neighbours(X: np.ndarray, k: int, chunk: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """(cosine similarities, indices) of each row's k most similar other rows, most similar first (rows are
    L2-normalised), each (n, min(k, n - 1)).

    Rows go in blocks in float32, so 10,000 samples need a 1,024 x 10,000 block at a time instead of a
    10,000 x 10,000 float64 matrix (800 MB, and most of the flags' time).
    """
    n = X.shape[0]
    k = min(k, n - 1)
    X32 = np.ascontiguousarray(X, dtype=np.float32)
    out = np.empty((n, k), dtype=np.float32)
    index = np.empty((n, k), dtype=np.intp)
    for start in range(0, n, chunk):
        sims = X32[start : start + chunk] @ X32.T
        rows = np.arange(sims.shape[0])
        sims[rows, start + rows] = -np.inf  # not its own neighbour
        for j in range(k):  # k argmax passes: ~10x faster than np.partition for the small k used here
            best = sims.argmax(axis=1)
            out[start + rows, j] = sims[rows, best]
            index[start + rows, j] = best
            sims[rows, best] = -np.inf
    return out, index


def neighbour_similarities(X: np.ndarray, k: int = NEIGHBOURS) -> np.ndarray:
    """Cosine similarities of each row to its k most similar other rows (rows are L2-normalised), (n, k)."""
    return nearest_neighbours(X, k)[0]


def knn_similarity(X: np.ndarray, k: int = NEIGHBOURS) -> np.ndarray:
    """Mean cosine similarity of each row to its k nearest other rows (rows are L2-normalised)."""
    similarity: np.ndarray = neighbour_similarities(X, k).mean(axis=1, dtype=np.float64)
    return similarity


def robust_z(values: np.ndarray, min_spread: float = 0.0) -> np.ndarray:
    median = np.median(values)
    mad = max(np.median(np.abs(values - median)) * 1.4826, min_spread)
    if mad < 1e-12:
        return np.zeros_like(values)
    robust: np.ndarray = (values - median) / mad
    return robust


EMBED_BATCH = 512  # texts a progress step while embedding


FLAG_ORDER = FLAG_KINDS  # the Flags tab and client.flags list them in this order


def _votes(samples: list[JsonObject]) -> list[Vote]:
    """The samples as votes, in the order given (oldest first, as the service lists them); a vote's id is
    its sample's place in `samples`."""
    return [
        Vote(
            trait=s["trait"],
            text=s["text"],
            quality=float(s["quality"]),
            annotator=s.get("annotator"),
            id=i,
            adjudicated=bool(s.get("adjudicated", False)),
        )
        for i, s in enumerate(samples)
    ]


def _contested_why(text: CountedText) -> str:
    """Why a text is contested, e.g. "votes on both poles: 2 positive, 1 negative (alice 0.90, bob 0.70,
    carol 0.20); spread 0.31"."""
    poles = [pole_of(v.quality) for v in text.votes]
    counts = f"{poles.count('positive')} positive, {poles.count('negative')} negative"
    if neutral := poles.count("neutral"):
        counts += f", {neutral} neutral"
    who = ", ".join(f"{v.annotator or 'unattributed'} {v.quality:.2f}" for v in text.votes)
    return f"votes on both poles: {counts} ({who}); spread {text.spread:.2f}"


def flag_samples(
    samples: list[JsonObject],
    embedder: Embedder,
    progress: Callable[[float, str], None] | None = None,
) -> list[JsonObject]:
    """One row per flag on a (trait, text): id, trait, flag, text, quality, oof_score, why, votes, spread.

    Samples (dicts with id, trait, text, quality and optionally annotator and adjudicated) are counted as
    votes (`core.engine.votes.count_votes`, the rule training uses): each (trait, text) is checked once with
    its counted quality. A text whose counted votes fall on both poles and that no reviewer settled is
    `contested`, never `likely mislabelled`: its label is not a mistake to fix but a disagreement to settle.
    A row's `id` is the sample id of the text's first row; `votes` lists its counted votes
    ({annotator, quality, sample_id}) and `spread` their qualities' standard deviation (0 for one vote).

    `progress(fraction, step)` reports each step ("Embedding formality: 512 of 10,000 texts", then its
    cross-validation and neighbours), and `(1.0, "")` at the end. A text counts once embedded and once
    checked, so the bar moves through a large trait, not only between traits.
    """
    by_trait: dict[str, list[CountedText]] = defaultdict(list)
    for counted in count_votes(_votes(samples)):
        by_trait[counted.trait].append(counted)
    flagged: list[JsonObject] = []
    units = 2 * max(sum(len(g) for g in by_trait.values()), 1)
    done = 0

    def step(count: int, text: str) -> None:
        if progress:
            progress(min(count / units, 1.0), text)

    for trait, group in by_trait.items():
        contested = np.array([c.contested for c in group], dtype=bool)
        oof: np.ndarray | None = None
        mislabelled = np.zeros(len(group), dtype=bool)
        z = np.zeros(len(group))
        against, near = np.zeros(len(group)), 0
        if len(group) >= 3:
            texts = [c.text for c in group]
            blocks = []
            for start in range(0, len(texts), EMBED_BATCH):
                step(done + start, f"Embedding {trait}: {start:,} of {len(texts):,} texts")
                blocks.append(
                    np.asarray(embedder.encode(texts[start : start + EMBED_BATCH]), dtype=np.float64)
                )
            X = np.vstack(blocks)
            q = np.asarray([c.quality for c in group])
            step(done + len(group), f"Cross-validating {trait} ({len(group):,} texts)")
            oof = oof_scores(X, q)
            step(done + len(group) * 3 // 2, f"Comparing each {trait} text with its nearest neighbours")
            # One pass: the neighbours' labels, the kNN mean and the nearest neighbour (most similar first).
            top, neighbours = nearest_neighbours(X, max(LABEL_NEIGHBOURS, NEIGHBOURS))
            if oof is not None:  # a contested text's label is a disagreement, not a mistake
                mislabelled = likely_mislabelled(q, oof, neighbours) & ~contested
            against, near = neighbour_votes(q, neighbours), neighbours.shape[1]
            if len(group) >= 10:
                z = robust_z(top[:, :NEIGHBOURS].mean(axis=1, dtype=np.float64), MIN_SPREAD)
                z[top[:, 0] >= NEAR_DUPLICATE] = 0.0  # a near-duplicate is never an outlier
        done += 2 * len(group)
        for i, c in enumerate(group):
            reasons: list[tuple[str, str]] = []
            score = None if oof is None or np.isnan(oof[i]) else float(oof[i])  # NaN: a neutral text
            if mislabelled[i]:
                side = pole_of(c.quality)
                other = "negative" if side == "positive" else "positive"
                votes = round(float(against[i]) * near)
                reasons.append(
                    (
                        "likely mislabelled",
                        f"labelled {side}, held-out score {score:.2f}; {votes} of its {near} nearest samples "
                        f"are {other}",
                    )
                )
            if contested[i]:
                reasons.append(("contested", _contested_why(c)))
            if z[i] < OUTLIER_Z:
                reasons.append(("outlier", f"unlike its trait's other samples (z {z[i]:.1f})"))
            for flag, why in reasons:
                flagged.append(
                    {
                        "id": samples[c.first_id].get("id"),
                        "trait": trait,
                        "flag": flag,
                        "text": c.text,
                        "quality": c.quality,
                        "oof_score": score,
                        "why": why,
                        "votes": [
                            {
                                "annotator": v.annotator,
                                "quality": v.quality,
                                "sample_id": samples[v.id].get("id"),
                            }
                            for v in c.votes
                        ],
                        "spread": c.spread,
                    }
                )
    step(units, "")
    # Mislabels first, those with the held-out score farthest from their label first; then the most split
    # contested texts; then outliers.
    flagged.sort(
        key=lambda r: (
            FLAG_ORDER.index(r["flag"]),
            -r["spread"] if r["flag"] == "contested" else -abs((r["oof_score"] or 0.5) - r["quality"]),
        )
    )
    return flagged
