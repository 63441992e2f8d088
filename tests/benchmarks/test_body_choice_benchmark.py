"""The body-choice benchmark's machinery on made-up figures: `auto` keeps the cheaper body on short texts,
compares the bodies on the figure of the compared subset when there is one, and the targets are checked per
cell; VADER's snippets split into balanced, disjoint pools without the middle ratings."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from benchmarks import body_choice, quality_vader


def _run(path: Path, cells: list[tuple[str, int, dict[str, list[float | None]]]]) -> Path:
    rows = [{"dataset": d, "per_pole": n, "per_split": split} for d, n, split in cells]
    path.write_text(json.dumps({"rows": rows}))
    return path


def test_auto_keeps_the_cheap_body_on_short_texts_and_reads_the_compared_figure(tmp_path: Path) -> None:
    e5 = _run(
        tmp_path / "e5.json",
        [
            (
                "abuse",
                32,
                {"prior": [0.9, 0.9], "logreg": [0.8, 0.8], "oof": [0.7, 0.7], "median_words": [4, 4]},
            ),
            (
                "movies",
                32,
                {
                    "prior": [0.80, 0.80],
                    "logreg": [0.7, 0.7],
                    "oof": [0.9, 0.7],
                    "oof_compared": [0.7, None],
                    "median_words": [18, 18],
                },
            ),
        ],
    )
    mpnet = _run(
        tmp_path / "mpnet.json",
        [
            (
                "abuse",
                32,
                {"prior": [0.8, 0.8], "logreg": [0.7, 0.7], "oof": [0.99, 0.99], "median_words": [4, 4]},
            ),
            (
                "movies",
                32,
                {
                    "prior": [0.90, 0.90],
                    "logreg": [0.8, 0.8],
                    "oof": [0.8, 0.8],
                    "oof_compared": [0.8, None],
                    "median_words": [18, 18],
                },
            ),
        ],
    )
    table = {c["dataset"]: c for c in body_choice.cells({"e5-small": e5, "mpnet-base": mpnet})}
    # Short texts: mpnet's better out-of-fold figure is never looked at.
    assert table["abuse"]["picked e5-small"] == 2 and table["abuse"]["auto"] == 0.9
    # Draw 0 compares the subset's figures (0.7 vs 0.8), not the full ones (0.9 vs 0.8); draw 1 the full ones.
    assert table["movies"]["picked mpnet-base"] == 2 and table["movies"]["auto"] == 0.9
    assert table["movies"]["best per draw"] == 0.9
    checks = body_choice.checks(list(table.values()), ["e5-small", "mpnet-base"])
    assert checks["movies_32_within_001"] and checks["never_below_first_by_001"]
    assert abs(checks["mean_32_vs_first"] - 0.05) < 1e-9 and checks["mean_32_lead_001"]


def test_vader_snippets_split_balanced_and_disjoint_without_the_middle(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ratings = [2.0, -2.0, 0.3, -0.4, 0.6, -0.6] * 20
    frame = pd.DataFrame({"rating": ratings, "text": [f"snippet {i}" for i in range(len(ratings))]})
    monkeypatch.setattr(quality_vader, "TEST_PER_POLE", 10)
    monkeypatch.setattr(quality_vader, "POOL_PER_POLE", 15)
    pool, test = quality_vader.split(frame, "movies")
    again = quality_vader.split(frame, "movies")
    assert (pool.y == 1).sum() == (pool.y == 0).sum() == 15
    assert (test.y == 1).sum() == (test.y == 0).sum() == 10
    assert not set(pool.text) & set(test.text)
    assert (pd.concat([pool, test]).rating.abs() > quality_vader.THRESHOLD).all()
    assert list(again[0].text) == list(pool.text)
