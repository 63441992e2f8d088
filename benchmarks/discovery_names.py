"""Discovery on two mixed corpora: does an axis separate them, and do its names come from its own end?

    python -m benchmarks.discovery_names [--per-corpus 300] [--effort medium] [--embedder default]
        [--corpora politeness subjectivity]

Texts drawn (seed 0) from two shared datasets' pools are the samples of one model (all of one placeholder
trait). For each discovered axis: the ROC-AUC with which a trait trained on its exemplars alone (effort low)
tells the two corpora apart over all the mixed texts (the better orientation), its name and pole labels, and
for each pole label's phrases the share of that end's exemplars holding it against the other end's, and how
much of each end its label describes: the share of its exemplars holding any of the label's phrases (against
the other end's). Target: one axis at ROC-AUC >= 0.9 whose labels are frequent at their own end and rare at
the other. Prints a markdown table and writes benchmarks/results/discovery_names.json.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from benchmarks.quality import LOADERS
from core.embedders import get_embedder
from core.engine import Sample, Scorer, discover, train
from harness.datasets import datasets_dir

RESULTS = Path(__file__).resolve().parent / "results"


def _holds(text: str, phrase: str) -> bool:
    """Whether `text` holds `phrase` as whole words ("work" is not in "workers")."""
    return re.search(rf"\b{re.escape(phrase)}\b", text, re.IGNORECASE) is not None


def _share(phrase: str, texts: list[str]) -> float:
    return sum(_holds(t, phrase) for t in texts) / max(1, len(texts))


def _covered(phrases: list[str], texts: list[str]) -> float:
    return sum(any(_holds(t, p) for p in phrases) for t in texts) / max(1, len(texts))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-corpus", type=int, default=300)
    parser.add_argument("--effort", default="medium")
    parser.add_argument("--embedder", default="default")
    parser.add_argument("--corpora", nargs=2, default=["politeness", "subjectivity"])
    args = parser.parse_args()
    base = datasets_dir()
    texts: list[str] = []
    corpus: list[int] = []
    for c, name in enumerate(args.corpora):
        pool = LOADERS[name](base).pool_texts
        chosen = np.random.default_rng(0).choice(
            len(pool), size=min(args.per_corpus, len(pool)), replace=False
        )
        texts += [pool[i] for i in chosen]
        corpus += [c] * len(chosen)
    embedder = get_embedder(args.embedder)
    found = discover([Sample("mixed", t, 1.0) for t in texts], embedder=embedder, effort=args.effort)
    rows = []
    for d in found:
        model = train([d.spec], d.samples, embedder=embedder, effort="low")
        scores = Scorer.from_snapshot(model.snapshot, embedder=embedder).score(texts)[:, 0]
        auc = float(roc_auc_score(corpus, scores))
        pos = [s.text for s in d.samples if s.quality == 1.0]
        neg = [s.text for s in d.samples if s.quality == 0.0]
        labels = []
        covered = []
        for label, own, other in ((d.spec.positive_label, pos, neg), (d.spec.negative_label, neg, pos)):
            phrases = [p.strip() for p in label.split(",") if p.strip()]
            covered.append(
                {"own": round(_covered(phrases, own), 3), "other": round(_covered(phrases, other), 3)}
            )
            for phrase in phrases:
                labels.append(
                    {
                        "phrase": phrase,
                        "own": round(_share(phrase, own), 3),
                        "other": round(_share(phrase, other), 3),
                    }
                )
        auc = round(max(auc, 1 - auc), 3)
        rows.append({"name": d.spec.name, "roc_auc": auc, "labels": labels, "covered": covered})
    print(
        f"| axis ({' vs '.join(args.corpora)}) | ROC-AUC | pole label phrase: share at own end / other end "
        "| label covers: positive end / negative end (other end) |"
    )
    print("|---|---|---|---|")
    for r in rows:
        shares = "; ".join(f"{x['phrase']} {x['own']}/{x['other']}" for x in r["labels"])  # type: ignore[attr-defined]
        cover = " / ".join(f"{c['own']} ({c['other']})" for c in r["covered"])  # type: ignore[attr-defined]
        print(f"| {r['name']} | {r['roc_auc']} | {shares} | {cover} |")
    RESULTS.mkdir(exist_ok=True)
    doc = {"corpora": args.corpora, "per_corpus": args.per_corpus, "embedder": embedder.id, "axes": rows}
    (RESULTS / "discovery_names.json").write_text(json.dumps(doc, indent=2) + "\n")


if __name__ == "__main__":
    main()
