"""Where the benchmarks find the labelled datasets (harness.datasets), and what a clone without them hears."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import datasets


def test_the_environment_names_the_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCORING_DATASETS", str(tmp_path))
    assert datasets.find_datasets() == tmp_path == datasets.datasets_dir()


def test_the_first_folder_beside_the_checkout_that_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SCORING_DATASETS", raising=False)
    beside, worktree_root = tmp_path / "beside", tmp_path / "root"
    worktree_root.mkdir()
    monkeypatch.setattr(datasets, "CANDIDATES", (beside, worktree_root))
    assert datasets.find_datasets() == worktree_root
    beside.mkdir()
    assert datasets.find_datasets() == beside


def test_without_the_folder_a_benchmark_stops_saying_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SCORING_DATASETS", raising=False)
    monkeypatch.setattr(datasets, "CANDIDATES", (tmp_path / "absent",))
    assert datasets.find_datasets() is None
    with pytest.raises(SystemExit, match=r"\.\./shared/datasets .*SCORING_DATASETS"):
        datasets.datasets_dir()
