"""The human ceiling: how well one annotator predicts the others, and the model measured the same way.

For an evaluation set whose texts several annotators voted on (docs/engine-labels.md, "Human ceiling"):
- a pair (a, i) is annotator a's counted vote on text i where i has at least one other counted vote; its
  target t(a, i) is the mean of the OTHER annotators' counted votes on i (leave one annotator out);
- the human ceiling is the Pearson correlation of (vote(a, i), t(a, i)) over all pairs, the model's
  agreement the Pearson correlation of (score(i), t(a, i)) over the same pairs, and the share of the
  ceiling their ratio;
- 95 % intervals: a paired percentile bootstrap over texts (the same resampled texts for all three).

Why correlation: it suits graded votes (a 1-25 scale mapped to quality) and binary ones alike, and its chance
level is 0, so "the model reaches N % of the human ceiling" means something (accuracy's chance level is 0.5
and would inflate the share). The share may exceed 100 %: the model predicts the consensus of the others
better than one person does.

As in agreement, only independent votes are pairs: named annotators' votes that are not adjudicated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from core.engine.evaluation import CONFIDENCE
from core.engine.types import JsonObject
from core.engine.votes import CountedText

DIGITS = 6
BOOTSTRAP_DRAWS = 1000
_CHUNK = 100  # bootstrap draws per block: a block's counts are CHUNK x texts integers


@dataclass(frozen=True)
class Interval:
    value: float
    ci_low: float
    ci_high: float

    def as_dict(self) -> dict[str, float]:
        return {k: round(getattr(self, k), DIGITS) for k in ("value", "ci_low", "ci_high")}


@dataclass(frozen=True)
class Ceiling:
    human: Interval  # the annotators' agreement with each other
    model: Interval | None  # the model's agreement with the same targets; None when its scores do not vary
    share: Interval | None  # model / human; None without the model's, or when the human ceiling is <= 0
    pairs: int
    texts: int  # texts with >= 2 independent votes
    annotators: int

    def as_dict(self) -> JsonObject:
        """The evaluation's three fields (docs/api.md): human_ceiling, model_agreement, share_of_ceiling."""
        return {
            "human_ceiling": {
                **self.human.as_dict(),
                "pairs": self.pairs,
                "texts": self.texts,
                "annotators": self.annotators,
            },
            "model_agreement": self.model.as_dict() if self.model is not None else None,
            "share_of_ceiling": self.share.as_dict() if self.share is not None else None,
        }


# Per-text sums, the columns of `_sums`: every statistic is a function of their (weighted) totals, so a
# bootstrap draw is one matrix product of its texts' multiplicities with them.
N, V, T, S, VV, TT, SS, VT, ST = range(9)


def _sums(votes: list[np.ndarray], scores: np.ndarray) -> np.ndarray:
    """texts x 9: each text's pair count and sums of vote, target, score, their squares and products."""
    out = np.zeros((len(votes), 9))
    for i, (v, s) in enumerate(zip(votes, scores, strict=True)):
        k = len(v)
        t = (v.sum() - v) / (k - 1)  # leave-one-out: the mean of the others
        out[i] = (k, v.sum(), t.sum(), k * s, v @ v, t @ t, k * s * s, v @ t, s * t.sum())
    return out


def _pearson(tot: np.ndarray, x: int, y: int, xx: int, yy: int, xy: int) -> np.ndarray:
    """Pearson correlation from totals (rows = draws); NaN where a side does not vary."""
    n = tot[:, N]
    cov = n * tot[:, xy] - tot[:, x] * tot[:, y]
    var_x = n * tot[:, xx] - tot[:, x] ** 2
    var_y = n * tot[:, yy] - tot[:, y] ** 2
    # Rounding leaves ~1e-16 relative residue where a side is constant: treat that as no variation.
    tiny = 1e-12 * n * n
    ok = (var_x > tiny) & (var_y > tiny)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ok, cov / np.sqrt(np.where(ok, var_x * var_y, 1.0)), np.nan)


def _interval(value: float, draws: np.ndarray) -> Interval:
    draws = draws[np.isfinite(draws)]
    if len(draws) == 0:
        return Interval(value, value, value)
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(draws, [tail, 100 - tail])
    return Interval(value, float(low), float(high))


def human_ceiling(
    counted: Sequence[CountedText],
    scores: Mapping[str, float],
    *,
    draws: int = BOOTSTRAP_DRAWS,
    seed: int = 0,
) -> Ceiling | None:
    """The human ceiling, the model's agreement and its share of the ceiling, with bootstrap intervals.

    `counted`: one trait's counted evaluation texts (`count_votes`); `scores`: the version's score of each
    text (every text with >= 2 independent votes needs one). None when there are fewer than two texts with
    >= 2 independent votes, or the votes do not vary (no ceiling to measure).
    """
    if len({c.trait for c in counted}) > 1:
        raise ValueError("human_ceiling takes the counted texts of one trait")
    texts: list[str] = []
    votes: list[np.ndarray] = []
    names: set[str] = set()
    for c in counted:
        independent = [
            (v.annotator, v.quality) for v in c.votes if v.annotator is not None and not v.adjudicated
        ]
        if len(independent) >= 2:
            texts.append(c.text)
            votes.append(np.array([q for _, q in independent], dtype=np.float64))
            names.update(a for a, _ in independent)
    if len(texts) < 2:
        return None
    missing = [t for t in texts if t not in scores]
    if missing:
        raise KeyError(f"no score for {len(missing)} of the {len(texts)} texts, e.g. {missing[0][:80]!r}")
    s = np.array([scores[t] for t in texts], dtype=np.float64)
    # Centred first: the totals' differences then lose no precision to large means.
    centre = np.concatenate(votes).mean()
    sums = _sums([v - centre for v in votes], s - s.mean())

    def stats(totals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return _pearson(totals, V, T, VV, TT, VT), _pearson(totals, S, T, SS, TT, ST)

    human, model = (float(x[0]) for x in stats(sums.sum(axis=0, keepdims=True)))
    if not np.isfinite(human):
        return None

    rng = np.random.default_rng(seed)
    boot_h, boot_m = [], []
    for start in range(0, draws, _CHUNK):
        size = min(_CHUNK, draws - start)
        weights = rng.multinomial(len(texts), np.full(len(texts), 1 / len(texts)), size=size)
        h, m = stats(weights @ sums)
        boot_h.append(h)
        boot_m.append(m)
    bh, bm = np.concatenate(boot_h), np.concatenate(boot_m)

    model_iv = _interval(model, bm) if np.isfinite(model) else None
    share_iv = None
    if model_iv is not None and human > 0.0:
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = np.where(bh > 0.0, bm / bh, np.nan)
        share_iv = _interval(model / human, ratio)
    return Ceiling(
        human=_interval(human, bh),
        model=model_iv,
        share=share_iv,
        pairs=int(sums[:, N].sum()),
        texts=len(texts),
        annotators=len(names),
    )
