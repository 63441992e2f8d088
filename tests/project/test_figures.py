"""The figures README.md and docs/ quote are rendered from benchmarks/results
(`python -m benchmarks.figures`): a result file re-measured, or a figure edited by hand, fails here until the
pages are rendered again."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchmarks.figures import ROOT, headlines, pages, render


def test_every_generated_block_agrees_with_its_result_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert Path(ROOT / "README.md") in pages(), "the README's headline figures are a generated block"
    assert render(check=True) == 0, (
        f"{capsys.readouterr().out}\nrun `python -m benchmarks.figures` and commit the pages it changed"
    )


def test_a_figure_edited_by_hand_is_found(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    readme = tmp_path / "README.md"
    table = headlines()
    first_figure = table.splitlines()[2].rsplit("|", 2)[1].strip()
    edited = readme.read_text(encoding="utf-8").replace(first_figure, first_figure + " (rounded up)", 1)
    readme.write_text(edited, encoding="utf-8")
    assert render(check=True, root=tmp_path) != 0
    assert "README.md" in capsys.readouterr().out
    assert render(check=False, root=tmp_path) == 0  # rendering puts the result file's figure back
    assert first_figure + " (rounded up)" not in readme.read_text(encoding="utf-8")
