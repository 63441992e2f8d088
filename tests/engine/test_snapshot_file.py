"""`Scorer.from_snapshot` takes the file `Client.export_snapshot(path=…)` writes, named by a str or a Path."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from core.embedders.base import Embedder
from core.engine import Scorer, SnapshotFormatError, TrainingResult


def test_a_snapshot_file_is_read_from_its_path(
    trained: TrainingResult, hashing: Embedder, tmp_path: Path
) -> None:
    path = tmp_path / "model.json"
    path.write_text(json.dumps(trained.snapshot), encoding="utf-8")  # as export_snapshot(path=…) writes it
    text = "Please find the report attached."
    expected = Scorer.from_snapshot(trained.snapshot, hashing).score(text)
    for given in (path, str(path)):
        assert np.array_equal(Scorer.from_snapshot(given, hashing).score(text), expected)
    assert np.array_equal(Scorer.from_snapshot(json.dumps(trained.snapshot), hashing).score(text), expected)


def test_a_path_that_cannot_be_read_says_so(tmp_path: Path) -> None:
    for missing in (tmp_path / "nope.json", str(tmp_path / "nope.json")):
        with pytest.raises(SnapshotFormatError, match="neither a snapshot's JSON nor a file"):
            Scorer.from_snapshot(missing)
