"""What the load benchmarks score: a demo model of sample_data/ to train, and texts it never saw.

The texts come from the other demo models, topped up with Stanford politeness requests from
`../shared/datasets` (`harness.datasets`) when a run needs more than sample_data holds (about 560 texts).
"""

from __future__ import annotations

import csv

from core.demo import DemoModel, read_demo_model
from core.demo import demo_slugs as _manifest_slugs
from harness.datasets import find_datasets

POLITENESS = "stanford_politeness/wikipedia.annotated.csv"


def demo_slugs() -> list[str]:
    """The demo models in name order: the first is the default model to train."""
    return sorted(_manifest_slugs())


def score_texts(model: DemoModel, limit: int) -> list[str]:
    """Up to `limit` distinct texts never seen while training `model`, in a fixed order."""
    others = [read_demo_model(slug) for slug in demo_slugs() if slug != model.slug] or [model]
    texts = dict.fromkeys(s["text"].strip() for m in others for s in m.samples if s["text"].strip())
    datasets = find_datasets()
    if len(texts) < limit and datasets is not None:
        with (datasets / POLITENESS).open(newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                if len(texts) >= limit:
                    break
                if row["Request"].strip():
                    texts.setdefault(row["Request"].strip(), None)
    return list(texts)[:limit]
