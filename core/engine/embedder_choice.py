"""Which embedder a model's version is trained on when the model lets training choose (`auto`), and what the
version records of that choice.

`auto` trains on both embedders (the blend) unless `blend_refused_because` says why not, then on e5-small
alone; nothing is compared. An embedder that reads only some languages is not eligible for samples mostly in
others (docs/embedders-mpnet.md). Training on the best of several embedders by out-of-fold ROC-AUC, which the
benchmarks still measure, is harness/embedder_comparison.py's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from core.embedder_words import embedder_words
from core.embedders.languages import languages_read
from core.embedders.registry import short_name
from core.engine.blend_snapshot import is_blend_id, per_embedder
from core.engine.types import Sample, TrainingResult
from core.json_types import JsonObject

#: Out-of-fold ROC-AUC: a larger embedder must lead the cheaper ones by more than this to be kept. On the
#: quality benchmark a lead of 0.005 kept mpnet on draws where it trailed e5 on test by up to 0.045; from 0.02
#: no cell lost more than 0.009 (docs/benchmarks/quality.md, "Training on the best embedder").
TIE = 0.02
MOSTLY = 0.5  # share of the samples in languages an embedder reads for it to be a candidate
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


#: The key of a version's metrics that records how its embedder was chosen (`ChosenEmbedder.as_json`).
CHOICE = "embedder_choice"


def recorded_choice(metrics: Mapping[str, object]) -> dict[str, object] | None:
    """What a version's metrics record of its embedder's choice (`ChosenEmbedder.as_json`), None when training
    did not choose it. Reads the records versions stored before: under `body_choice`, and with a choice made
    without comparing (the blend, or one embedder's figure) recorded as `candidates` with a tie and a sample
    count, read as the version's `out_of_fold` figures."""
    found = metrics.get(CHOICE, metrics.get("body_choice"))
    if not isinstance(found, Mapping):
        return None
    record = dict(found)
    old = record.get("candidates")
    chosen = record.get("chosen")
    if isinstance(old, list) and (len(old) < 2 or (isinstance(chosen, str) and is_blend_id(chosen))):
        for key in ("candidates", "tie", "compared_on"):
            record.pop(key, None)
        record["out_of_fold"] = old
    return record


@dataclass(frozen=True)
class ChosenEmbedder:
    """Which embedder a training keeps. Embedders were compared when `result` is the kept embedder's training
    on the `compared_on` samples and `candidates` their figures; else (`result` None until `trained`) the
    cheapest or the blend was kept by rule, and `out_of_fold` holds the version's own figures."""

    result: TrainingResult | None
    chosen: str
    candidates: tuple[Candidate, ...]
    left_out: tuple[str, ...]  # embedders not offered: they do not read most of the samples' languages
    not_compared: tuple[str, ...] = ()  # embedders offered but not compared (`because` says why)
    because: str | None = None
    compared_on: int = 0  # how many samples the candidates' figures were measured on
    #: Not compared: the version's out-of-fold figure, then a blend's embedders' each alone (`trained`).
    out_of_fold: tuple[Candidate, ...] = ()

    @property
    def compared(self) -> bool:
        return bool(self.candidates)

    def as_json(self) -> JsonObject:
        """What a version records of its embedder choice: only what was done (no comparison's figures, tie
        or sample count when embedders were not compared)."""

        def figures(found: tuple[Candidate, ...]) -> list[JsonObject]:
            return [
                {"embedder": c.embedder_id, "roc_auc": c.roc_auc, "roc_auc_se": c.roc_auc_se} for c in found
            ]

        done: JsonObject = {"chosen": self.chosen}
        if self.compared:
            done |= {"tie": TIE, "candidates": figures(self.candidates), "compared_on": self.compared_on}
        else:
            done["out_of_fold"] = figures(self.out_of_fold)
        return done | {
            "left_out_for_language": list(self.left_out),
            "not_compared": list(self.not_compared),
            "not_compared_because": self.because,
        }

    def describe(self) -> str:
        """The choice in words (`core.embedder_words`)."""
        shown = self.candidates if self.compared else self.out_of_fold
        figures = {short_name(c.embedder_id): c.roc_auc for c in shown}
        se = next((c.roc_auc_se for c in shown if c.embedder_id == self.chosen), None)
        return embedder_words(
            short_name(self.chosen),
            figures,
            [short_name(b) for b in self.left_out],
            not_compared=[short_name(b) for b in self.not_compared],
            because=self.because,
            compared_on=self.compared_on if self.compared else None,
            tie=TIE if len(self.candidates) > 1 else None,
            se=se,
        )

    def trained(self, result: TrainingResult) -> ChosenEmbedder:
        """The choice with the kept embedder's training on all the samples: when embedders were not compared,
        its out-of-fold figures are the version's own."""
        if self.compared:
            return replace(self, result=result)
        own: tuple[Candidate, ...] = (
            Candidate(self.chosen, model_roc_auc(result), model_roc_auc(result, "roc_auc_se")),
        )
        if is_blend_id(self.chosen):  # the blend's figure, then each embedder's alone
            own += tuple(
                Candidate(
                    embedder,
                    model_embedder_figure(result, embedder),
                    model_embedder_figure(result, embedder, "roc_auc_se"),
                )
                for embedder in embedder_ids(result)
            )
        return replace(self, result=result, out_of_fold=own)


def model_roc_auc(result: TrainingResult, figure: str = "roc_auc") -> float | None:
    """A training run's out-of-fold ROC-AUC (or another figure of its traits): the mean over its traits that
    have one (None if none has)."""
    aucs = [m.get(figure) for m in result.metrics.values()]
    figures = [float(a) for a in aucs if isinstance(a, int | float)]
    return sum(figures) / len(figures) if figures else None


def embedder_ids(result: TrainingResult) -> list[str]:
    """The embedders of a blend's training (core.engine.blend), in its order."""
    for metrics in result.metrics.values():
        embedders = per_embedder(metrics)
        if embedders is not None:
            return [str(b["embedder"]) for b in embedders if isinstance(b, dict)]
    return []


def model_embedder_figure(result: TrainingResult, embedder: str, figure: str = "roc_auc") -> float | None:
    """One embedder's figure in a blend's training, the mean over its traits that have one."""
    found = []
    for metrics in result.metrics.values():
        for b in per_embedder(metrics) or []:
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
