"""The clean bases of the flags benchmark: the texts of three datasets on which their raters agree.

Flags are measured by flipping labels at random and counting how many flips they find. On a base whose own
labels are contested (the politeness quartiles, all of NewsSD) a flag on a hard case counts as a
false alarm, so the base keeps only the texts whose raters agree:

- `politeness`: the Stanford requests (both communities) whose five ratings (1-25) all fall on the same side
  of the scale's middle, 13: all above (polite) or all below (impolite). A rating of exactly 13 is on neither
  side, so a request with a 13 among its ratings is not in the base: 13 is where a rater puts a request they
  find neither polite nor impolite (7,732 of the 10,956 requests have at least one), and counting it as polite
  would add 3,418 requests with a neutral rating to the polite pole.
- `abuse`: the ConvAbuse user turns (all three splits) whose annotators all give level 1 (not abusive:
  civil) or all give a level below 0 (abusive). Level 0 ("ambiguous") is on neither side, as politeness' 13
  is. A text typed in several conversations pools its annotations from every row.
- `subjectivity`: the NewsSD-ENG sentences (all three files) whose label is not a settled disagreement
  (`Solved conflict` False).

Each base is a `benchmarks.quality.Dataset` whose pool is the whole base (no test pool), so
`benchmarks.quality.embed_cached` caches its vectors under benchmarks/.cache/.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.quality import TRAITS, Dataset, _usable, abuse_votes

POLITENESS_MIDDLE = 13  # the middle of the 1-25 rating scale: on neither side


def _base(name: str, trait: str, sides: dict[str, float]) -> Dataset:
    """The usable texts with a side (1 positive, 0 negative; NaN: the raters disagree, left out)."""
    rows = [(t, y) for t, y in sides.items() if not np.isnan(y) and _usable(t)]
    return Dataset(
        name=name,
        trait=TRAITS[trait],
        pool_texts=[t for t, _ in rows],
        pool_y=np.array([y for _, y in rows], dtype=int),
        test_texts=[],
        test_y=np.zeros(0, dtype=int),
    )


def _side(values: list[float], positive: Callable[[float], bool], negative: Callable[[float], bool]) -> float:
    """1.0 when every value is positive, 0.0 when every value is negative, NaN otherwise."""
    if values and all(positive(v) for v in values):
        return 1.0
    if values and all(negative(v) for v in values):
        return 0.0
    return float("nan")


def _by_text(texts: pd.Series, values: list[list[float]]) -> dict[str, list[float]]:
    """Every rating of each (stripped) text: a text in several rows pools them."""
    pooled: dict[str, list[float]] = {}
    for text, row in zip(texts.astype(str).str.strip(), values, strict=True):
        pooled.setdefault(text, []).extend(row)
    return pooled


def load_politeness(base: Path) -> Dataset:
    files = ("wikipedia.annotated.csv", "stack-exchange.annotated.csv")
    df = pd.concat([pd.read_csv(base / "stanford_politeness" / f) for f in files], ignore_index=True)
    ratings = _by_text(df["Request"], df[[f"Score{i}" for i in range(1, 6)]].to_numpy(float).tolist())
    sides = {
        t: _side(r, lambda v: v > POLITENESS_MIDDLE, lambda v: v < POLITENESS_MIDDLE)
        for t, r in ratings.items()
    }
    return _base("politeness-agreed", "politeness", sides)


def load_abuse(base: Path) -> Dataset:
    files = ("ConvAbuseEMNLPtrain.csv", "ConvAbuseEMNLPvalid.csv", "ConvAbuseEMNLPtest.csv")
    df = pd.concat([pd.read_csv(base / "convabuse" / f, dtype=str) for f in files], ignore_index=True)
    levels = _by_text(df["user"], [[float(v) for v in row] for row in abuse_votes(df)])
    sides = {t: _side(v, lambda x: x == 1, lambda x: x < 0) for t, v in levels.items()}
    return _base("abuse-agreed", "abuse", sides)


def load_subjectivity(base: Path) -> Dataset:
    files = ("train.csv", "val.csv", "test.csv")
    df = pd.concat([pd.read_csv(base / "newssd_eng_subjectivity" / f) for f in files], ignore_index=True)
    # One value a row: 1 SUBJ, 0 OBJ, NaN when the row's label settled a disagreement (keeps the text out).
    settled = df["Solved conflict"].astype(str) == "True"
    values = np.where(settled, np.nan, (df["Label"] == "SUBJ").astype(float))
    labels = _by_text(df["Sentence"], [[v] for v in values.tolist()])
    sides = {t: _side(v, lambda x: x == 1, lambda x: x == 0) for t, v in labels.items()}
    return _base("subjectivity-settled", "subjectivity", sides)


LOADERS: dict[str, Callable[[Path], Dataset]] = {
    "politeness": load_politeness,
    "abuse": load_abuse,
    "subjectivity": load_subjectivity,
}
