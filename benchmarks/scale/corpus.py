"""The texts the scale benchmark posts: the politeness requests, or the demo models' for its own tests."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from typing import Any

from core.contract import pole_of
from core.demo import demo_slugs, read_demo_model
from harness.datasets import datasets_dir

POLITENESS = ("wikipedia.annotated.csv", "stack-exchange.annotated.csv")  # in stanford_politeness/


@dataclass(frozen=True)
class Corpus:
    """The politeness requests (~10,900) and their pole (normalised score >= 0), read from ../shared/datasets;
    text i is request i mod n with its number appended, so every i is a distinct text of realistic length."""

    texts: list[str]
    poles: list[float]

    @classmethod
    def load(cls, source: str = "politeness") -> Corpus:
        """`politeness` (needs the datasets); `demo`: the demo models' samples of sample_data/ (about 560
        texts, their quality as the pole), for the benchmark's own tests on a clone without the datasets."""
        texts, poles = [], []
        if source == "demo":
            for slug in demo_slugs():
                for row in read_demo_model(slug).samples:
                    pole = pole_of(float(row["quality"]))
                    if pole != "neutral":  # on neither pole
                        texts.append(str(row["text"]).strip())
                        poles.append(float(pole == "positive"))
            return cls(texts, poles)
        for name in POLITENESS:
            with (datasets_dir() / "stanford_politeness" / name).open(newline="", encoding="utf-8") as fh:
                for row in csv.DictReader(fh):
                    if row["Request"].strip():
                        texts.append(row["Request"].strip())
                        poles.append(1.0 if float(row["Normalized Score"]) >= 0 else 0.0)
        return cls(texts, poles)

    def text(self, i: int, kind: str = "sample") -> str:
        return f"{self.texts[i % len(self.texts)]} ({kind} {i})"

    def quality(self, i: int) -> float:
        return self.poles[i % len(self.poles)]

    def samples(self, start: int, n: int, traits: tuple[str, ...] = ("polite",)) -> list[dict[str, Any]]:
        """Samples start..start+n-1, their traits in turn: "polite" (the dataset's label) or "long" (the
        request is longer than 120 characters)."""
        out = []
        for i in range(start, start + n):
            trait = traits[i % len(traits)]
            long = len(self.texts[i % len(self.texts)]) > 120
            quality = (1.0 if long else 0.0) if trait == "long" else self.quality(i)
            out.append({"trait": trait, "text": self.text(i), "quality": quality})
        return out
