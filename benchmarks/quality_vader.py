"""Long English texts for benchmarks.quality: VADER's rated movie-review and Amazon-review snippets.

The ground truth of Hutto & Gilbert (ICWSM 2014) ships in the sdist of `vaderSentiment==3.3.2` on PyPI (MIT):
`additional_resources/hutto_ICWSM_2014.tar.gz`, files `*_GroundTruth.txt`, one snippet a line: id, the mean of
about 20 raters' sentiment (-4 .. +4), text. The sdist is fetched once with pip into the benchmarks' cache
(`benchmarks/.cache/vader/`, git-ignored) and read in place: no text is copied into the repository.

A snippet rated above +0.5 is positive, below -0.5 negative; the middle is left out (the raters did not agree
on a side). The test pool is 200 snippets a pole, the labelled pool 600 a pole (the benchmark draws at most
256), both fixed by a seed: enough for every cell, and few enough for a 768-dimensional embedder to embed
quickly.
"""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
from pathlib import Path

import numpy as np
import pandas as pd

from core.engine import TraitSpec

VERSION = "3.3.2"
SDIST = f"vaderSentiment-{VERSION}.tar.gz"
INNER = f"vaderSentiment-{VERSION}/additional_resources/hutto_ICWSM_2014.tar.gz"
FILES = {"movies": "movieReviewSnippets_GroundTruth.txt", "amazon": "amazonReviewSnippets_GroundTruth.txt"}
THRESHOLD = 0.5  # |mean rating| above this is a side; the middle is left out
POOL_PER_POLE = 600
TEST_PER_POLE = 200

DESCRIPTION = (
    "Positive reviews praise, recommend or enjoy what they review. "
    "Negative reviews criticise, complain about or warn against it."
)
TRAITS = {
    "movies": TraitSpec("sentiment", "Sentiment", "positive", "negative", description=DESCRIPTION),
    "amazon": TraitSpec("sentiment", "Sentiment", "positive", "negative", description=DESCRIPTION),
}


def sdist(cache: Path) -> Path:
    """The sdist in `cache`, downloaded with pip (no dependencies, no build) the first time."""
    path = cache / SDIST
    if not path.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:"]
            + ["--disable-pip-version-check", f"vaderSentiment=={VERSION}", "-d", str(cache)],
            check=True,
        )
    return path


def ground_truth(cache: Path, name: str) -> pd.DataFrame:
    """One domain's snippets: columns `text` and `rating` (the raters' mean, -4 .. +4)."""
    with tarfile.open(sdist(cache)) as outer:
        member = outer.extractfile(INNER)
        if member is None:
            raise FileNotFoundError(f"{INNER} is not a file in {SDIST}")
        inner_bytes = member.read()
    with tarfile.open(fileobj=io.BytesIO(inner_bytes)) as inner:
        member = inner.extractfile(f"hutto_ICWSM_2014/{FILES[name]}")
        if member is None:
            raise FileNotFoundError(f"{FILES[name]} is not a file in {INNER}")
        raw = member.read().decode("utf-8", errors="replace")
    rows = [line.split("\t") for line in raw.splitlines() if line.strip()]
    return pd.DataFrame({"rating": [float(r[1]) for r in rows], "text": [r[2] for r in rows]})


def split(frame: pd.DataFrame, name: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(labelled pool, test pool): the sides by THRESHOLD, drawn with a fixed seed per domain."""
    frame = frame[frame.rating.abs() > THRESHOLD].drop_duplicates("text")
    frame = frame.assign(y=(frame.rating > 0).astype(int))
    rng = np.random.default_rng(sum(name.encode()))
    pools, tests = [], []
    for pole in (1, 0):
        side = frame[frame.y == pole]
        order = rng.permutation(len(side))
        tests.append(side.iloc[order[:TEST_PER_POLE]])
        pools.append(side.iloc[order[TEST_PER_POLE : TEST_PER_POLE + POOL_PER_POLE]])
    return pd.concat(pools), pd.concat(tests)
