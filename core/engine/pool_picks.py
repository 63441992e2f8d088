"""Real texts for synthesis: pool texts picked for a trait's poles, or near a seed on its pole.

Templates and edits describe a pole ("The reply was very polite."); a model trained on them learns the
pole's name. A pool of real, unlabelled texts of the model's domain gives exemplars a person would accept
as texts of each pole, so synthesis picks from it when the model has one:

- `pole_exemplars` (`from_traits`): per pole, the pool texts the trait's axes place most clearly on it
  (the zero-shot axis of the pole texts, name and description, plus the axis of the trait's samples when
  they cover both poles; each standardised over the pool so neither dominates by scale), chosen by maximal
  marginal relevance so they are diverse, and no two near-duplicates.
- `neighbours` (`diversify`): per seed, the nearest pool texts that lie on the seed's pole, the clearer on it
  first among texts about as near.

Texts already labelled for the trait are never picked (the caller passes them as `taken` keys); a text
picked once for a trait is not picked again.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.engine.text_utils import dedup_key

#: Pool texts ranked per pole before the diversity pass (times the number wanted).
SHORTLIST_FACTOR = 5
#: Relevance against novelty in maximal marginal relevance (1: relevance only).
MMR_LAMBDA = 0.7
#: Cosine above which two texts are near-duplicates (the same text re-posted, a quote, a reply with one
#: word changed): only one of them is picked.
NEAR_DUPLICATE_COS = 0.92
#: diversify: weight of a text's place on the seed's pole against its cosine to the seed.
POLE_WEIGHT = 0.05


def unit_rows(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    out: np.ndarray = x / np.where(norms > 1e-12, norms, 1.0)
    return out


def standardised(margins: np.ndarray) -> np.ndarray:
    """Margins divided by their spread over the pool (the 0 point, the axis's midpoint, stays)."""
    spread = float(np.std(margins))
    out: np.ndarray = margins / spread if spread > 1e-12 else np.zeros_like(margins)
    return out


def _mmr(relevance: np.ndarray, unit: np.ndarray, want: int) -> list[int]:
    """Greedy maximal marginal relevance over a shortlist; never two near-duplicates."""
    lo, hi = float(relevance.min()), float(relevance.max())
    rel = (relevance - lo) / (hi - lo) if hi > lo else np.ones_like(relevance)
    chosen: list[int] = []
    closest = np.full(len(rel), -1.0)  # each candidate's highest cosine to a chosen one
    alive = np.ones(len(rel), dtype=bool)
    while len(chosen) < want and alive.any():
        value = np.where(alive, MMR_LAMBDA * rel - (1 - MMR_LAMBDA) * np.maximum(closest, 0.0), -np.inf)
        best = int(np.argmax(value))
        chosen.append(best)
        sims = unit @ unit[best]
        closest = np.maximum(closest, sims)
        alive &= sims <= NEAR_DUPLICATE_COS
        alive[best] = False
    return chosen


def pole_exemplars(
    texts: Sequence[str], embeddings: np.ndarray, scores: np.ndarray, taken: set[str], want: int
) -> tuple[list[int], list[int]]:
    """Indices of `texts` for the positive and the negative pole, most typical first.

    `scores`: each text's place on the trait (> 0 positive side, < 0 negative side; a text with score 0
    belongs to neither). `taken`: `dedup_key`s never picked; the picks are added to it.
    """
    unit = unit_rows(embeddings)
    keys = [dedup_key(t) for t in texts]
    picks: list[list[int]] = []
    for sign in (1.0, -1.0):
        side = scores * sign
        # Stable order: ties keep the pool order, so the same pool gives the same picks.
        order = [int(i) for i in np.argsort(-side, kind="stable") if side[i] > 0]
        first_of_key: dict[str, int] = {}
        for i in order:
            if keys[i] and keys[i] not in taken:
                first_of_key.setdefault(keys[i], i)
        shortlist = list(first_of_key.values())[: want * SHORTLIST_FACTOR]
        if not shortlist:
            picks.append([])
            continue
        idx = np.array(shortlist)
        chosen = [shortlist[j] for j in _mmr(side[idx], unit[idx], want)]
        taken.update(keys[i] for i in chosen)
        picks.append(chosen)
    return picks[0], picks[1]


def neighbours(
    texts: Sequence[str],
    embeddings: np.ndarray,
    on_side: np.ndarray,
    seed_embedding: np.ndarray,
    taken: set[str],
    want: int,
    pole: np.ndarray | None = None,
) -> list[int]:
    """Indices of the `want` pool texts nearest the seed (cosine) among those `on_side`, not in `taken`,
    no near-duplicate of the seed and no two near-duplicates; the picks are added to `taken`.

    `pole`: how far each text lies out on the seed's pole (standardised margins); when given, a text ranks
    by its cosine plus `POLE_WEIGHT` times that, so of two texts as near the seed the one clearer on its
    pole comes first."""
    unit = unit_rows(embeddings)
    seed = unit_rows(np.asarray(seed_embedding, dtype=np.float64).reshape(1, -1))[0]
    sims = unit @ seed
    rank = sims if pole is None else sims + POLE_WEIGHT * pole
    chosen: list[int] = []
    for i in np.argsort(-rank, kind="stable"):
        if len(chosen) == want:
            break
        key = dedup_key(texts[i])
        if not on_side[i] or not key or key in taken:
            continue
        if sims[i] > NEAR_DUPLICATE_COS or any(float(unit[i] @ unit[j]) > NEAR_DUPLICATE_COS for j in chosen):
            continue  # the seed itself, or a pick, in other words
        chosen.append(int(i))
        taken.add(key)
    return chosen
