"""Calibration of the default model's scores: do they mean what they say, at 8, 32 and 256 labels a pole?

    python -m benchmarks.calibration --arm default [--datasets all] [--sizes 8 32 256] [--splits 5]
    python -m benchmarks.calibration --table-only

Each draw is the one `benchmarks.embedder_blend` makes for (dataset, labels a pole, split), on the datasets
capped as its runs were (300 labelled texts a pole, 400 held-out texts apart from every draw). The model is
the one `auto` trains by default: both embedders (the blend) where `blend_refused_because` lets it, else
e5-small alone, through the engine's `train_blend` / `train` and `Scorer` (no service). Each embedder's
vectors
are cached in benchmarks/.cache/ (`benchmarks.quality.embed_cached`), and each draw's held-out scores in
benchmarks/.cache/calibration/, so a re-run or `--table-only` costs seconds.

Per cell (dataset, size): the expected calibration error (10 bins, as the engine's metrics), the held-out
logit
slope b of P(positive) = sigmoid(a + b logit(score)) (1 is calibrated; above 1 the scores sit too close to
0.5), ROC-AUC, accuracy at 0.5 and the mean score of positives and of negatives, each the mean over the draws.
`--arm baseline` is stored from the engine before the calibration change; `--arm default` from the code here.
On VADER's snippets (movies, amazon) the scores of the held-out texts, the middle ones included, are ranked
against the raters' mean (Spearman) beside VADER's own compound score and logistic regression on frozen mpnet,
and a model trained on graded qualities (the ratings on a 5-point scale) beside one trained on the poles.
Writes benchmarks/results/calibration.json (every arm run so far).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import logit
from scipy.stats import spearmanr
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from benchmarks.embedder_blend import EMBEDDERS, POOL_PER_POLE, TEST, draw
from benchmarks.quality import CACHE, EFFORT, LOADERS, Dataset, LookupEmbedder, capped, embed_cached
from core.contract import nearer_pole_is_positive, pole_of
from core.embedders.blend import BlendEmbedder
from core.engine import Sample, Scorer, train
from core.engine.blend import train_blend
from core.engine.embedder_choice import BLEND_MIN_WORDS, blend_refused_because, detected_languages
from harness.datasets import datasets_dir

RESULTS = Path(__file__).resolve().parent / "results"
OUTPUT = RESULTS / "calibration.json"
SCORES = CACHE / "calibration"
SIZES = (8, 32, 256)
SPLITS = 5
#: The targets: per cell ECE at most this, the slope within SLOPE, ROC-AUC no lower than the baseline's by
#: more than AUC_LOSS.
ECE = 0.05
SLOPE = (0.8, 1.25)
AUC_LOSS = 0.003
VADER = ("movies", "amazon")
#: Middle snippets (|rating| <= 0.5, left out of the sides) added to the held-out texts for the ranking.
MIDDLE = 200
GRADED_POINTS = 5
_CLIP = 1e-6


def balanced(y: np.ndarray) -> np.ndarray:
    """Each item's weight so that both sides weigh the same: the model is trained on as many samples a pole,
    so
    its scores are probabilities at even odds, and a held-out set with another share of positives (ConvAbuse:
    80 % civil) is measured as if it had even odds."""
    return np.where(y == 1, 0.5 / max(int(y.sum()), 1), 0.5 / max(int(len(y) - y.sum()), 1)) * len(y)


def ece(scores: np.ndarray, y: np.ndarray, bins: int = 10) -> float:
    """The engine's ECE (10 equal-width bins, |sum of score - label| per bin over the items), class-
    balanced."""
    weight = balanced(y)
    which = np.minimum((scores * bins).astype(int), bins - 1)
    diff = weight * (scores - y)
    return float(sum(abs(diff[which == b].sum()) for b in range(bins)) / weight.sum())


def noise_floor(scores: np.ndarray, y: np.ndarray, draws: int = 20) -> float:
    """The ECE `ece` gives perfectly calibrated scores on as many items: labels drawn from the scores
    themselves (a fixed seed), the mean over `draws`. What no calibration can get under."""
    rng = np.random.default_rng(0)
    return float(
        np.mean([ece(scores, (rng.random(len(scores)) < scores).astype(int), 10) for _ in range(draws)])
    )


def slope(scores: np.ndarray, y: np.ndarray) -> float:
    """b of P(y = 1) = sigmoid(a + b logit(score)), fitted by maximum likelihood, class-balanced."""
    x = logit(np.clip(scores, _CLIP, 1.0 - _CLIP))[:, None]
    fit = LogisticRegression(C=1e6, max_iter=1000).fit(x, y, sample_weight=balanced(y))
    return float(fit.coef_[0, 0])


def figures(scores: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Figures of held-out scores (one draw's, or a cell's draws pooled)."""
    hits = (np.array([nearer_pole_is_positive(float(s)) for s in scores]) == (y == 1)).astype(float)
    return {
        "ece": ece(scores, y),
        "ece_floor": noise_floor(scores, y),
        "slope": slope(scores, y),
        "roc_auc": float(roc_auc_score(y, scores)),
        "accuracy": float(np.sum(hits * balanced(y)) / len(y)),
        "mean_positive": float(scores[y == 1].mean()),
        "mean_negative": float(scores[y == 0].mean()),
    }


class Lookups:
    """A dataset's cached vectors on each embedder, and the blend of both."""

    def __init__(self, ds: Dataset) -> None:
        self.parts = [embed_cached(ds, name) for name in EMBEDDERS.values()]
        self.blend = BlendEmbedder(self.parts)


def blends(samples: list[Sample], blend_id: str) -> bool:
    """Whether `auto` trains on both embedders for `samples` (as service/runs/train.py decides)."""
    languages = detected_languages(samples) if _median(samples) >= BLEND_MIN_WORDS else []
    return blend_refused_because(samples, languages, blend_id) is None


def trained_scores(
    ds: Dataset, lookups: Lookups, samples: list[Sample], texts: Sequence[str], blend: bool
) -> np.ndarray:
    """The held-out scores of `texts` of the model `auto` trains on `samples` (`blend`: on both embedders)."""
    if blend:
        result = train_blend([ds.trait], samples, embedder=lookups.blend, effort=EFFORT)
        scorer = Scorer.from_snapshot(result.snapshot, embedder=lookups.blend)
    else:
        result = train([ds.trait], samples, embedder=lookups.parts[0], effort=EFFORT)
        scorer = Scorer.from_snapshot(result.snapshot, embedder=lookups.parts[0])
    return np.asarray(scorer.score(list(texts))[:, 0])


def _median(samples: Sequence[Sample]) -> float:
    from core.engine.embedder_choice import median_words

    return median_words([s.text for s in samples])


def engine_digest() -> str:
    """What the cached scores of an arm were computed by: the engine's source (a changed engine scores
    anew)."""
    from core import engine

    sources = sorted(Path(engine.__file__).parent.glob("*.py"))
    return hashlib.sha256(b"".join(p.read_bytes() for p in sources)).hexdigest()[:16]


def _cached(key: str, make: Any) -> np.ndarray:
    path = SCORES / f"{hashlib.sha256(key.encode()).hexdigest()[:20]}.npy"
    if path.exists():
        return np.load(path)
    value = np.asarray(make(), dtype=np.float64)
    SCORES.mkdir(parents=True, exist_ok=True)
    np.save(path, value)
    return value


def with_middle(name: str, ds: Dataset) -> tuple[list[str], np.ndarray]:
    """VADER's held-out texts and MIDDLE middle snippets (fixed seed), with their raters' means."""
    from benchmarks import quality_vader

    frame = quality_vader.ground_truth(CACHE / "vader", name).drop_duplicates("text")
    frame = frame.assign(text=frame.text.str.strip())
    rating = dict(zip(frame.text, frame.rating, strict=True))
    middle = frame[frame.rating.abs() <= quality_vader.THRESHOLD]
    pool = set(ds.pool_texts)
    middle = middle[~middle.text.isin(pool)]
    rng = np.random.default_rng(sum(name.encode()) + 1)
    picked = middle.iloc[np.sort(rng.permutation(len(middle))[:MIDDLE])]
    texts = [*ds.test_texts, *picked.text]
    return texts, np.array([rating[t] for t in texts])


def graded(name: str, samples: list[Sample]) -> list[Sample]:
    """`samples` with each text's raters' mean as a quality on a GRADED_POINTS-point scale (-4..+4 spread
    over 0..1; a text rated into the middle point keeps its side's nearest point off 0.5)."""
    from benchmarks import quality_vader
    from core.contract import scale_quality

    frame = quality_vader.ground_truth(CACHE / "vader", name)
    rating = dict(zip(frame.text.str.strip(), frame.rating, strict=True))
    out = []
    for s in samples:
        r = rating[s.text]
        point = int(np.clip(np.rint((r + 4.0) / 8.0 * (GRADED_POINTS - 1)), 0, GRADED_POINTS - 1)) + 1
        middle = (GRADED_POINTS + 1) // 2
        if point == middle:
            point += 1 if pole_of(s.quality) == "positive" else -1
        out.append(Sample(s.trait, s.text, scale_quality(point, GRADED_POINTS)))
    return out


def vader_compound(texts: Sequence[str]) -> np.ndarray:
    """VADER's own compound score of each text (its analyser read from the sdist the ground truth is in)."""
    import importlib.util
    import tarfile

    from benchmarks import quality_vader

    folder = CACHE / "vader" / "analyser"
    source = folder / f"vaderSentiment-{quality_vader.VERSION}" / "vaderSentiment"
    if not source.is_dir():
        with tarfile.open(quality_vader.sdist(CACHE / "vader")) as sdist:
            members = [m for m in sdist.getmembers() if "/vaderSentiment/" in m.name]
            sdist.extractall(folder, members=members, filter="data")
    spec = importlib.util.spec_from_file_location("vader_analyser", source / "vaderSentiment.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    analyser = module.SentimentIntensityAnalyzer(lexicon_file=str(source / "vader_lexicon.txt"))
    return np.array([analyser.polarity_scores(t)["compound"] for t in texts])


def measure(arm: str, datasets: Sequence[str], sizes: Sequence[int], splits: int) -> list[dict[str, Any]]:
    rows = []
    # The baseline's scores were computed once, by the engine before the change; the default's by this one.
    tag = arm if arm == "baseline" else f"{arm}-{engine_digest()}"
    for name in datasets:
        ds = capped(LOADERS[name](datasets_dir()), POOL_PER_POLE, TEST)
        lookups = Lookups(ds)
        texts, ratings = with_middle(name, ds) if name in VADER else (ds.test_texts, None)
        sided = len(ds.test_texts)
        if ratings is not None:  # the middle texts embedded once too, beside the dataset's
            middle = texts[sided:]
            extra = Dataset(
                name + "-middle", ds.trait, [], np.zeros(0, int), middle, np.zeros(len(middle), int)
            )
            lookups = _with_extra(lookups, extra)
        for n in sizes:
            start = time.process_time()
            draws, blended, ranks, pooled = [], 0, [], []
            for s in range(splits):
                samples = draw(ds, n, s)
                both = blends(samples, lookups.blend.id)
                blended += both
                scores = _cached(
                    f"{tag}/{name}/{n}/{s}/{len(texts)}",
                    lambda: trained_scores(ds, lookups, samples, texts, both),  # noqa: B023
                )
                draws.append(figures(scores[:sided], ds.test_y))
                pooled.append(scores[:sided])
                if ratings is not None:
                    grade = _cached(
                        f"{tag}/{name}/{n}/{s}/{len(texts)}/graded",
                        lambda: trained_scores(ds, lookups, graded(name, samples), texts, both),  # noqa: B023
                    )
                    ranks.append(
                        {
                            "poles": float(spearmanr(scores, ratings).statistic),
                            "graded": float(spearmanr(grade, ratings).statistic),
                            "lr_mpnet": _lr_spearman(lookups, samples, texts, ratings),
                        }
                    )
            row: dict[str, Any] = {"dataset": name, "per_pole": n, "splits": splits, "blended_draws": blended}
            # The cell's figures on its draws' scores pooled: one draw's 400 texts put the ECE of perfectly
            # calibrated scores near 0.05 by sampling noise alone (`ece_floor`); the ROC-AUC is the draws'
            # mean.
            row.update(figures(np.concatenate(pooled), np.tile(ds.test_y, len(pooled))))
            row["roc_auc"] = float(np.mean([d["roc_auc"] for d in draws]))
            row["per_split"] = draws
            if ranks:
                row["spearman"] = {k: float(np.mean([r[k] for r in ranks])) for k in ranks[0]}
                row["spearman"]["vader_compound"] = float(spearmanr(vader_compound(texts), ratings).statistic)
                row["spearman"]["texts"] = len(texts)
            row["cpu_seconds"] = round(time.process_time() - start, 1)
            rows.append(row)
            print(
                f"{arm} {name} n={n}: ece {row['ece']:.3f} slope {row['slope']:.2f} auc {row['roc_auc']:.4f}",
                flush=True,
            )
    return rows


def _with_extra(lookups: Lookups, extra: Dataset) -> Lookups:
    """`lookups` whose embedders also serve `extra`'s texts from the cache."""
    more = [embed_cached(extra, name) for name in EMBEDDERS.values()]
    for part, added in zip(lookups.parts, more, strict=True):
        part._extra.update(zip(added._row, added._vectors, strict=True))  # noqa: SLF001
    return lookups


def _lr_spearman(lookups: Lookups, samples: list[Sample], texts: Sequence[str], ratings: np.ndarray) -> float:
    mpnet: LookupEmbedder = lookups.parts[1]
    lr = LogisticRegression(class_weight="balanced", max_iter=1000)
    lr.fit(mpnet.encode([s.text for s in samples]), [int(pole_of(s.quality) == "positive") for s in samples])
    return float(spearmanr(lr.decision_function(mpnet.encode(list(texts))), ratings).statistic)


def checks(document: dict[str, Any]) -> dict[str, Any]:
    """Per cell of the default arm: the targets met, against the baseline's ROC-AUC where it was run."""
    arms = document.get("arms", {})
    base = {(r["dataset"], r["per_pole"]): r for r in arms.get("baseline", [])}
    out = []
    for r in arms.get("default", []):
        b = base.get((r["dataset"], r["per_pole"]))
        loss = None if b is None else b["roc_auc"] - r["roc_auc"]
        out.append(
            {
                "dataset": r["dataset"],
                "per_pole": r["per_pole"],
                "ece_met": r["ece"] <= ECE,
                "slope_met": SLOPE[0] <= r["slope"] <= SLOPE[1],
                "auc_loss": loss,
                "auc_met": None if loss is None else loss <= AUC_LOSS,
            }
        )
    return {"cells": out, "all_met": all(c["ece_met"] and c["slope_met"] and c["auc_met"] for c in out)}


def markdown(document: dict[str, Any]) -> str:
    lines = [
        "| dataset | per pole | arm | ECE (floor) | slope | ROC-AUC | accuracy at 0.5 | mean score +/− |",
        "|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    arms = document.get("arms", {})
    keyed = {arm: {(r["dataset"], r["per_pole"]): r for r in rows} for arm, rows in arms.items()}
    cells = sorted({k for rows in keyed.values() for k in rows}, key=lambda k: (k[1], k[0]))
    for key in cells:
        for arm in ("baseline", "default"):
            r = keyed.get(arm, {}).get(key)
            if r is None:
                continue
            lines.append(
                f"| {key[0]} | {key[1]} | {arm} | {r['ece']:.3f} ({r['ece_floor']:.3f}) | {r['slope']:.2f} "
                f"| {r['roc_auc']:.3f} "
                f"| {r['accuracy']:.3f} | {r['mean_positive']:.2f} / {r['mean_negative']:.2f} |"
            )
    for n in sorted({k[1] for k in cells}):
        measured = {arm: {k[0] for k in keyed.get(arm, {}) if k[1] == n} for arm in ("baseline", "default")}
        # Arms are compared on the datasets both measured; the default's own mean covers all of its.
        common = measured["baseline"] & measured["default"]
        means = [(arm, common) for arm in ("baseline", "default") if common]
        if measured["default"] - common:
            means.append(("default", measured["default"]))
        for arm, datasets in means:
            rows = [keyed[arm][(d, n)] for d in sorted(datasets)]
            mean = {f: float(np.mean([r[f] for r in rows])) for f in ("ece", "slope", "roc_auc", "accuracy")}
            lines.append(
                f"| **mean of {len(rows)}** | {n} | {arm} | {mean['ece']:.3f} | {mean['slope']:.2f} "
                f"| {mean['roc_auc']:.3f} "
                f"| {mean['accuracy']:.3f} | |"
            )
    ranked = [(arm, r) for arm in ("baseline", "default") for r in arms.get(arm, []) if "spearman" in r]
    if ranked:
        lines += [
            "",
            "| dataset | per pole | arm | trained on poles | on graded qualities | LR on mpnet "
            "| VADER compound |",
            "|---|---:|---|---:|---:|---:|---:|",
        ]
        for arm, r in sorted(ranked, key=lambda x: (x[1]["per_pole"], x[1]["dataset"], x[0])):
            s = r["spearman"]
            lines.append(
                f"| {r['dataset']} | {r['per_pole']} | {arm} | {s['poles']:.3f} | {s['graded']:.3f} "
                f"| {s['lr_mpnet']:.3f} | {s['vader_compound']:.3f} |"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arm", choices=("baseline", "default"), default="default")
    parser.add_argument("--datasets", nargs="+", default=["all"], choices=["all", *LOADERS])
    parser.add_argument("--sizes", nargs="+", type=int, default=list(SIZES))
    parser.add_argument("--splits", type=int, default=SPLITS)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--table-only", action="store_true", help="print the stored results")
    args = parser.parse_args(argv)
    document: dict[str, Any] = json.loads(args.output.read_text()) if args.output.exists() else {}
    if not args.table_only:
        datasets = list(LOADERS) if "all" in args.datasets else args.datasets
        rows = measure(args.arm, datasets, args.sizes, args.splits)
        kept = [
            r
            for r in document.get("arms", {}).get(args.arm, [])
            if (r["dataset"], r["per_pole"]) not in {(x["dataset"], x["per_pole"]) for x in rows}
        ]
        document.setdefault("arms", {})[args.arm] = kept + rows
        document["effort"] = EFFORT
        document["targets"] = {"ece": ECE, "slope": list(SLOPE), "auc_loss": AUC_LOSS}
        document["checks"] = checks(document)
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(document, indent=2) + "\n")
    print(markdown(document))
    print(json.dumps(document.get("checks", {}), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
