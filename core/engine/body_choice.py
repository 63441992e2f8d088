"""Which body (embedder) a model's version is trained on when the model lets training choose (`auto`).

Training embeds the samples with every body available and eligible, computes for each the out-of-fold ROC-AUC
it already reports (the same folds: they depend on the labels only), and keeps the best; a body within `TIE`
of the best that costs less wins instead, so a larger body is taken only for a real gain. A body that reads
only some languages is not a candidate for a model whose samples are mostly in others (docs/embedders.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.body_words import body_words
from core.embedders.base import Embedder
from core.embedders.languages import languages_read
from core.embedders.registry import short_name
from core.engine.types import Sample, TrainingResult, TraitSpec
from core.json_types import JsonObject

TIE = 0.005  # out-of-fold ROC-AUC: a smaller lead than this keeps the cheaper body
MOSTLY = 0.5  # share of the samples in languages a body reads for it to be a candidate


@dataclass(frozen=True)
class Candidate:
    """One body's figure: `roc_auc` is None when the samples give no folds (then the cheapest body wins)."""

    embedder_id: str
    roc_auc: float | None


def eligible(embedder_ids: Sequence[str], languages: Sequence[str | None]) -> tuple[list[str], list[str]]:
    """(the bodies that read most of the samples, those left out): `languages` are the samples' detected
    ISO 639-1 codes (None where detection could not tell, which counts for every body)."""
    known = [code for code in languages if code is not None]
    kept: list[str] = []
    left: list[str] = []
    for embedder_id in embedder_ids:
        read = languages_read(embedder_id)
        share = 1.0 if read is None or not known else sum(code in read for code in known) / len(known)
        (kept if share > MOSTLY else left).append(embedder_id)
    return kept, left


def choose(candidates: Sequence[Candidate], tie: float = TIE) -> Candidate:
    """The body to keep; `candidates` are ordered cheapest first (the order of their CPU per text). A body
    leading the cheaper ones by `tie` or less is not kept (benchmarks.body_choice tries larger margins)."""
    if not candidates:
        raise ValueError("no body to choose from")
    scored = [c for c in candidates if c.roc_auc is not None]
    if not scored:
        return candidates[0]
    best = max(c.roc_auc for c in scored if c.roc_auc is not None)
    return next(c for c in candidates if c.roc_auc is not None and c.roc_auc >= best - tie)


@dataclass(frozen=True)
class BodyChoice:
    """A training run on the best body: the kept body's result, and every candidate's figure."""

    result: TrainingResult
    chosen: str
    candidates: tuple[Candidate, ...]
    left_out: tuple[str, ...]  # bodies not offered: they do not read most of the samples' languages

    def as_json(self) -> JsonObject:
        """What a version records of its body choice."""
        return {
            "chosen": self.chosen,
            "tie": TIE,
            "candidates": [{"embedder": c.embedder_id, "roc_auc": c.roc_auc} for c in self.candidates],
            "left_out_for_language": list(self.left_out),
        }

    def describe(self) -> str:
        """The choice in words (`core.body_words`)."""
        figures = {short_name(c.embedder_id): c.roc_auc for c in self.candidates}
        return body_words(short_name(self.chosen), figures, [short_name(b) for b in self.left_out])


def model_roc_auc(result: TrainingResult) -> float | None:
    """A training run's out-of-fold ROC-AUC: the mean over its traits that have one (None if none has)."""
    aucs = [m.get("roc_auc") for m in result.metrics.values()]
    figures = [float(a) for a in aucs if isinstance(a, int | float)]
    return sum(figures) / len(figures) if figures else None


def train_on_best_body(
    traits: Sequence[TraitSpec],
    samples: Sequence[Sample],
    bodies: Sequence[Embedder],
    languages: Sequence[str | None],
    **options: Any,
) -> BodyChoice:
    """`train` on each of `bodies` (cheapest first) that reads most of the samples' `languages`, then keep
    the best by out-of-fold ROC-AUC (`choose`). The folds depend on the labels only, so every body is
    measured on the same folds. `options` go to `train` as they are."""
    from core.engine.training import train

    kept, left = eligible([b.id for b in bodies], languages)
    results = {b.id: train(traits, samples, embedder=b, **options) for b in bodies if b.id in kept}
    candidates = tuple(Candidate(body_id, model_roc_auc(r)) for body_id, r in results.items())
    chosen = choose(candidates).embedder_id
    return BodyChoice(results[chosen], chosen, candidates, tuple(left))
