"""Training on the best of several embedders, by out-of-fold ROC-AUC: the comparison the benchmarks measure
(benchmarks/embedder_choice.py, embedder_choice_cost.py, quality.py) and their tests run.

`auto` does not compare (it trains on the blend or on e5-small alone: core/engine/embedder_choice.py); this is
dev-only code, kept so the figures that led there can be measured again. Each embedder is trained on the same
folds (they depend on the labels only) and the best is kept; an embedder within `TIE` of the best that costs
less wins instead. An embedder that reads only some languages is not a candidate for samples mostly in
others. Short texts and few labels are not compared at all (docs/decisions/0017).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from core.embedders.base import Embedder
from core.engine.embedder_choice import TIE, Candidate, ChosenEmbedder, eligible, median_words, model_roc_auc
from core.engine.poles import pole_signs
from core.engine.text_utils import stable_seed
from core.engine.types import Sample, TraitSpec

#: Embedders are compared only when every trait with samples has at least this many on each pole: below it the
#: out-of-fold figures do not foretell the test (at 8 a pole the choice lost up to 0.023 against e5 alone).
MIN_POLE = 32

#: Below this median word count of the samples' texts embedders are not compared and the cheapest is kept: on
#: short texts (chat turns of 4 words) the larger embedder never won, and comparing costs every text ~3x more.
MIN_WORDS = 8

#: At most this many labelled samples are embedded with every embedder to compare them; the rest are embedded
#: once, with the embedder kept: a larger embedder costs ~3x the smaller one's CPU per text.
COMPARE_LABELS = 400


def smallest_pole(samples: Sequence[Sample]) -> int:
    """The fewest samples on one pole of a trait that has samples (0 for none)."""
    counts: dict[tuple[str, int], int] = {}
    traits = set()
    for s, sign in zip(samples, pole_signs([s.quality for s in samples]), strict=True):
        traits.add(s.trait)
        if sign != 0:
            counts[(s.trait, int(sign))] = counts.get((s.trait, int(sign)), 0) + 1
    return min((counts.get((t, sign), 0) for t in traits for sign in (1, -1)), default=0)


def not_compared_because(samples: Sequence[Sample], min_words: float, min_pole: int) -> str | None:
    """Why the embedders are not compared on `samples` (the cheapest is kept), or None when they are."""
    words = median_words([s.text for s in samples])
    if words < min_words:
        return f"short texts: a median of {words:g} words, under {min_words:g}"
    pole = smallest_pole(samples)
    if pole < min_pole:
        return f"few labels: {pole} on the smallest pole, under {min_pole}"
    return None


def comparison_subset(samples: Sequence[Sample], limit: int = COMPARE_LABELS) -> list[Sample]:
    """The samples embedders are compared on: all of them up to `limit` on the poles, else `limit` of them
    drawn alike from each trait's poles (a share of each as large as its share of the samples, at least 5 so
    every fold has one), fixed by the texts. Neutral samples are left out: training leaves them out too."""
    signs = pole_signs([s.quality for s in samples])
    on = [s for s, sign in zip(samples, signs, strict=True) if sign != 0]
    if len(on) <= limit:
        return list(samples) if len(on) == len(samples) else on
    groups: dict[tuple[str, int], list[Sample]] = {}
    for s, sign in zip(samples, signs, strict=True):
        if sign != 0:
            groups.setdefault((s.trait, int(sign)), []).append(s)
    kept: list[Sample] = []
    for members in groups.values():
        take = min(len(members), max(5, round(limit * len(members) / len(on))))
        # The seed's words predate the embedder's name: changing them would draw another subset.
        ranked = sorted(members, key=lambda s: stable_seed("body comparison", s.trait, s.text, s.quality))
        kept.extend(ranked[:take])
    chosen = {id(s) for s in kept}
    return [s for s in samples if id(s) in chosen]  # in the samples' order


def choose(candidates: Sequence[Candidate], tie: float = TIE) -> Candidate:
    """The embedder to keep; `candidates` are ordered cheapest first (the order of their CPU per text). An
    embedder leading the cheaper ones by `tie` or less is not kept (benchmarks.embedder_choice tries larger
    margins)."""
    if not candidates:
        raise ValueError("no embedder to choose from")
    scored = [c for c in candidates if c.roc_auc is not None]
    if not scored:
        return candidates[0]
    best = max(c.roc_auc for c in scored if c.roc_auc is not None)
    return next(c for c in candidates if c.roc_auc is not None and c.roc_auc >= best - tie)


class _Remembering:
    """An embedder that embeds each text once within one choice: the kept embedder's training on every sample
    then embeds only the texts outside the compared subset (a text's vector does not depend on its batch)."""

    def __init__(self, inner: Embedder) -> None:
        self.embedder = inner  # what snapshot.model_sha256 sees through
        self.id = inner.id
        self.dim = inner.dim
        self._seen: dict[str, np.ndarray] = {}

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._seen]
        if missing:
            self._seen.update(zip(missing, np.asarray(self.embedder.encode(missing)), strict=True))
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._seen[t] for t in texts])


def choose_embedder(
    traits: Sequence[TraitSpec],
    samples: Sequence[Sample],
    embedders: Sequence[Embedder],
    languages: Sequence[str | None],
    *,
    min_words: float = MIN_WORDS,
    min_pole: int = MIN_POLE,
    compare_labels: int = COMPARE_LABELS,
    progress: Callable[[float, str], None] | None = None,
    **options: Any,
) -> ChosenEmbedder:
    """The embedder of `embedders` (cheapest first) to train on: among those that read most of the samples'
    `languages` (detected ISO 639-1 codes of some or all of the samples), the best by out-of-fold ROC-AUC
    (`choose`). The folds depend on the labels only, so every embedder is measured on the same folds.
    Embedders are not compared (the cheapest is kept, nothing is trained) on texts shorter than `min_words`
    (the samples' median) or with fewer than `min_pole` samples on a trait's pole; else each is trained on
    `comparison_subset(samples, compare_labels)` (`options` go to `train`; `progress` covers them all)."""
    from core.engine.training import train

    kept, left = eligible([b.id for b in embedders], languages)
    offered = [b for b in embedders if b.id in kept]
    if not offered:
        raise ValueError("no embedder reads the samples' languages")
    because = not_compared_because(samples, min_words, min_pole) if len(offered) > 1 else None
    if because is not None or len(offered) == 1:
        skipped = tuple(b.id for b in offered[1:])
        return ChosenEmbedder(None, offered[0].id, (), tuple(left), skipped, because, 0)
    subset = comparison_subset(samples, compare_labels)
    results = {}
    for i, embedder in enumerate(offered):
        share = _share(progress, i, len(offered))
        results[embedder.id] = train(traits, subset, embedder=embedder, progress=share, **options)
    candidates = tuple(
        Candidate(embedder_id, model_roc_auc(r), model_roc_auc(r, "roc_auc_se"))
        for embedder_id, r in results.items()
    )
    chosen = choose(candidates).embedder_id
    return ChosenEmbedder(results[chosen], chosen, candidates, tuple(left), (), None, len(subset))


def _share(
    progress: Callable[[float, str], None] | None, i: int, n: int
) -> Callable[[float, str], None] | None:
    """The `i`th of `n` equal parts of `progress`."""
    if progress is None:
        return None
    report = progress
    return lambda fraction, phase: report((i + fraction) / n, phase)


def train_on_best_embedder(
    traits: Sequence[TraitSpec],
    samples: Sequence[Sample],
    embedders: Sequence[Embedder],
    languages: Sequence[str | None],
    **options: Any,
) -> ChosenEmbedder:
    """`choose_embedder` (`options` as it takes them), then the kept embedder trained on every sample unless
    the comparison already did (the texts of the compared subset are not embedded again)."""
    from core.engine.training import train

    remembering = {b.id: _Remembering(b) for b in embedders}
    choice = choose_embedder(traits, samples, list(remembering.values()), languages, **options)
    if choice.result is not None and choice.compared_on == len(samples):
        return choice
    rule = ("min_words", "min_pole", "compare_labels")
    trains = {k: v for k, v in options.items() if k not in rule}
    return choice.trained(train(traits, samples, embedder=remembering[choice.chosen], **trains))
