"""Which embedder a model's version is trained on when the model lets training choose (`auto`).

Training embeds the samples with every embedder available and eligible, computes for each the out-of-fold
ROC-AUC it already reports (the same folds: they depend on the labels only), and keeps the best; an embedder
within `TIE` of the best that costs less wins instead, so a larger embedder is taken only for a real gain. An
embedder that reads only some languages is not a candidate for a model whose samples are mostly in others
(docs/embedders-mpnet.md).
Short texts and few labels are not compared at all: there the figures did not foretell the test, and
comparing costs every text a larger embedder's embedding (docs/decisions/0017).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from core.embedder_words import embedder_words
from core.embedders.base import Embedder
from core.embedders.languages import languages_read
from core.embedders.registry import short_name
from core.engine.poles import pole_signs
from core.engine.text_utils import stable_seed
from core.engine.types import Sample, TrainingResult, TraitSpec
from core.json_types import JsonObject

#: Out-of-fold ROC-AUC: a larger embedder must lead the cheaper ones by more than this to be kept. On the
#: quality benchmark a lead of 0.005 kept mpnet on draws where it trailed e5 on test by up to 0.045; from 0.02
#: no cell lost more than 0.009 (docs/benchmarks/quality.md, "Training on the best embedder").
TIE = 0.02
#: Embedders are compared only when every trait with samples has at least this many on each pole: below it the
#: out-of-fold figures do not foretell the test (at 8 a pole the choice lost up to 0.023 against e5 alone).
MIN_POLE = 32
MOSTLY = 0.5  # share of the samples in languages an embedder reads for it to be a candidate
#: Below this median word count of the samples' texts embedders are not compared and the cheapest is kept: on
#: short texts (chat turns of 4 words) the larger embedder never won, and comparing costs every text ~3x more.
MIN_WORDS = 8
#: At most this many labelled samples are embedded with every embedder to compare them; the rest are embedded
#: once, with the embedder kept: a larger embedder costs ~3x the smaller one's CPU per text.
COMPARE_LABELS = 400
#: `auto` trains on both embedders (the blend, scored by the mean of both models' scores) where the samples'
#: median text has at least this many words and most samples are in English; nothing is compared. On the
#: quality benchmark the blend led e5 alone at every size on every dataset but subjectivity at 8 a pole
#: (−0.006), chat turns of 3–4 words included (+0.005 to +0.007); under 3 words nothing was measured
#: (docs/decisions/0020).
BLEND_MIN_WORDS = 3
#: The texts whose language is detected to tell whether most samples are in English: a share is what counts,
#: and 200 texts tell it as all of them do.
LANGUAGE_SAMPLE = 200


def median_words(texts: Sequence[str]) -> float:
    """The median count of whitespace-separated words of `texts` (0 for none)."""
    counts = sorted(len(t.split()) for t in texts)
    if not counts:
        return 0.0
    mid = len(counts) // 2
    return float(counts[mid]) if len(counts) % 2 else (counts[mid - 1] + counts[mid]) / 2


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


@dataclass(frozen=True)
class Candidate:
    """One embedder's figure: `roc_auc` is None when the samples give no folds (then the cheapest embedder
    wins)."""

    embedder_id: str
    roc_auc: float | None
    roc_auc_se: float | None = None


def eligible(embedder_ids: Sequence[str], languages: Sequence[str | None]) -> tuple[list[str], list[str]]:
    """(the embedders that read most of the samples, those left out): `languages` are the samples' detected
    ISO 639-1 codes (None where detection could not tell, which counts for every embedder)."""
    known = [code for code in languages if code is not None]
    kept: list[str] = []
    left: list[str] = []
    for embedder_id in embedder_ids:
        read = languages_read(embedder_id)
        share = 1.0 if read is None or not known else sum(code in read for code in known) / len(known)
        (kept if share > MOSTLY else left).append(embedder_id)
    return kept, left


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


@dataclass(frozen=True)
class ChosenEmbedder:
    """Which embedder a training keeps, and every candidate's figure. `result` is the kept embedder's training
    on the
    `compared_on` samples (None when nothing was trained: embedders were not compared)."""

    result: TrainingResult | None
    chosen: str
    candidates: tuple[Candidate, ...]
    left_out: tuple[str, ...]  # embedders not offered: they do not read most of the samples' languages
    not_compared: tuple[str, ...] = ()  # embedders offered but not compared (`because` says why)
    because: str | None = None
    compared_on: int = 0  # how many samples the candidates' figures were measured on

    def as_json(self) -> JsonObject:
        """What a version records of its embedder choice."""
        return {
            "chosen": self.chosen,
            "tie": TIE,
            "candidates": [
                {"embedder": c.embedder_id, "roc_auc": c.roc_auc, "roc_auc_se": c.roc_auc_se}
                for c in self.candidates
            ],
            "left_out_for_language": list(self.left_out),
            "not_compared": list(self.not_compared),
            "not_compared_because": self.because,
            "compared_on": self.compared_on,
        }

    def describe(self) -> str:
        """The choice in words (`core.embedder_words`)."""
        figures = {short_name(c.embedder_id): c.roc_auc for c in self.candidates}
        se = next((c.roc_auc_se for c in self.candidates if c.embedder_id == self.chosen), None)
        return embedder_words(
            short_name(self.chosen),
            figures,
            [short_name(b) for b in self.left_out],
            not_compared=[short_name(b) for b in self.not_compared],
            because=self.because,
            compared_on=self.compared_on,
            tie=TIE,
            se=se,
        )

    def trained(self, result: TrainingResult, samples: int) -> ChosenEmbedder:
        """The choice with the kept embedder's training on all `samples`: when embedders were not compared,
        its out-of-fold figure becomes the one candidate's."""
        if self.result is not None:
            return replace(self, result=result)
        only: tuple[Candidate, ...] = (
            Candidate(self.chosen, model_roc_auc(result), model_roc_auc(result, "roc_auc_se")),
        )
        if self.chosen.startswith("blend:"):  # the blend's figure, then each embedder's alone
            only += tuple(
                Candidate(
                    embedder,
                    model_embedder_figure(result, embedder),
                    model_embedder_figure(result, embedder, "roc_auc_se"),
                )
                for embedder in embedder_ids(result)
            )
        return replace(self, result=result, candidates=only, compared_on=samples)


def model_roc_auc(result: TrainingResult, figure: str = "roc_auc") -> float | None:
    """A training run's out-of-fold ROC-AUC (or another figure of its traits): the mean over its traits that
    have one (None if none has)."""
    aucs = [m.get(figure) for m in result.metrics.values()]
    figures = [float(a) for a in aucs if isinstance(a, int | float)]
    return sum(figures) / len(figures) if figures else None


def embedder_ids(result: TrainingResult) -> list[str]:
    """The embedders of a blend's training (core.engine.blend), in its order."""
    for metrics in result.metrics.values():
        embedders = metrics.get("bodies")
        if isinstance(embedders, list):
            return [str(b["embedder"]) for b in embedders if isinstance(b, dict)]
    return []


def model_embedder_figure(result: TrainingResult, embedder: str, figure: str = "roc_auc") -> float | None:
    """One embedder's figure in a blend's training, the mean over its traits that have one."""
    found = []
    for metrics in result.metrics.values():
        for b in metrics.get("bodies") or []:
            if (
                isinstance(b, dict)
                and b.get("embedder") == embedder
                and isinstance(b.get(figure), int | float)
            ):
                found.append(float(b[figure]))
    return sum(found) / len(found) if found else None


def detected_languages(samples: Sequence[Sample], limit: int = LANGUAGE_SAMPLE) -> list[str | None]:
    """The detected languages of at most `limit` of the samples' texts: a sample of every part of the set,
    fixed by the texts."""
    from core.embedders.languages import main_language

    texts = sorted({s.text for s in samples})
    step = max(1, len(texts) // limit)
    return [main_language(t) for t in texts[::step][:limit]]


def blend_refused_because(
    samples: Sequence[Sample],
    languages: Sequence[str | None],
    blend_id: str,
    min_words: float = BLEND_MIN_WORDS,
) -> str | None:
    """Why `auto` does not train a model on both embedders (`blend_id`) but on e5-small alone, or None when it
    does: texts shorter than `min_words` (the samples' median), or most samples (`languages`, their detected
    ISO 639-1 codes) not in a language both embedders read."""
    words = median_words([s.text for s in samples])
    if words < min_words:
        return f"short texts: a median of {words:g} words, under {min_words:g}"
    if not eligible([blend_id], languages)[0]:
        return "most samples are not in English, which mpnet-base reads"
    return None


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
    return choice.trained(train(traits, samples, embedder=remembering[choice.chosen], **trains), len(samples))
