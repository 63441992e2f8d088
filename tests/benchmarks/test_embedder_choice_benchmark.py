"""The embedder-choice benchmark's machinery on made-up figures: `auto` keeps the cheaper embedder on short
texts, compares the embedders on the figure of the compared subset when there is one, and the targets are
checked per cell; the blend of both embedders is gated like `auto`; VADER's snippets split into balanced,
disjoint pools without the middle ratings."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchmarks import embedder_blend, embedder_choice, quality_vader


def _run(path: Path, cells: list[tuple[str, int, dict[str, list[float | None]]]]) -> Path:
    rows = [{"dataset": d, "per_pole": n, "per_split": split} for d, n, split in cells]
    path.write_text(json.dumps({"rows": rows}))
    return path


def test_auto_keeps_the_cheap_embedder_on_short_texts_and_reads_the_compared_figure(tmp_path: Path) -> None:
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
    table = {c["dataset"]: c for c in embedder_choice.cells({"e5-small": e5, "mpnet-base": mpnet})}
    # Short texts: mpnet's better out-of-fold figure is never looked at.
    assert table["abuse"]["picked e5-small"] == 2 and table["abuse"]["auto"] == 0.9
    # Draw 0 compares the subset's figures (0.7 vs 0.8), not the full ones (0.9 vs 0.8); draw 1 the full ones.
    assert table["movies"]["picked mpnet-base"] == 2 and table["movies"]["auto"] == 0.9
    assert table["movies"]["best per draw"] == 0.9
    checks = embedder_choice.checks(list(table.values()), ["e5-small", "mpnet-base"])
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


def test_the_gated_blend_blends_only_where_auto_would_compare_the_embedders(tmp_path: Path) -> None:
    """The blend's figure is the ROC-AUC of the two embedders' mean score; the gated blend takes it only on
    draws with a median of at least MIN_WORDS words and MIN_POLE samples a pole, else e5's figure alone; the
    targets are checked on each arm's column."""
    y = np.array([1, 1, 0, 0])
    # Each embedder misorders one pair; their mean orders every pair.
    assert (
        embedder_blend.blend_auc(y, [np.array([0.9, 0.4, 0.5, 0.1]), np.array([0.6, 0.9, 0.2, 0.7])]) == 1.0
    )
    split: dict[str, list[float | None]] = {"logreg": [0.5, 0.5], "oof": [0.8, 0.8]}
    e5 = _run(
        tmp_path / "e5.json",
        [
            ("abuse", 32, {**split, "prior": [0.90, 0.90], "median_words": [4, 4]}),
            ("movies", 32, {**split, "prior": [0.80, 0.80], "median_words": [18, 6]}),
            ("movies", 8, {**split, "prior": [0.70, 0.70], "median_words": [18, 18]}),
        ],
    )
    mpnet = _run(
        tmp_path / "mpnet.json",
        [
            ("abuse", 32, {**split, "prior": [0.85, 0.85], "median_words": [4, 4]}),
            ("movies", 32, {**split, "prior": [0.90, 0.90], "median_words": [18, 6]}),
            ("movies", 8, {**split, "prior": [0.75, 0.75], "median_words": [18, 18]}),
        ],
    )
    files = {"e5-small": e5, "mpnet-base": mpnet}
    blended = [
        {"dataset": "abuse", "per_pole": 32, "per_split": {"blend": [0.95, 0.95]}},
        {"dataset": "movies", "per_pole": 32, "per_split": {"blend": [0.96, 0.92]}},
        {"dataset": "movies", "per_pole": 8, "per_split": {"blend": [0.78, 0.78]}},
    ]
    table = embedder_blend.with_blend(embedder_choice.cells(files), blended, files)
    cell = {(c["dataset"], c["per_pole"]): c for c in table}
    assert cell[("abuse", 32)]["gated blend"] == 0.9  # short texts: e5 alone
    assert cell[("movies", 8)]["gated blend"] == 0.7  # 8 a pole: e5 alone
    # Draw 0 has 18 words (blended, 0.96), draw 1 six (e5 alone, 0.80).
    assert cell[("movies", 32)]["gated blend"] == pytest.approx(0.88)
    assert cell[("movies", 32)]["blend"] == pytest.approx(0.94)
    gated = embedder_choice.checks(table, list(files), "gated blend")
    assert gated["movies_32_vs_better_embedder"] == pytest.approx(-0.02) and not gated["movies_32_within_001"]
    assert embedder_choice.checks(table, list(files), "blend")["movies_32_within_001"]
    assert gated["mean_32_vs_first"] == pytest.approx(0.04) and gated["never_below_first_by_001"]
