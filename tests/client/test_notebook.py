"""notebooks/quickstart.ipynb runs top to bottom (a real local service, the hashing embedder)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "quickstart.ipynb"


def test_quickstart_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not (ROOT / "sample_data" / "support_replies" / "model.json").exists():
        pytest.fail("sample_data/support_replies is missing: the notebook needs it")
    # The kernel spec runs `python`: make it this interpreter (the venv), and keep the data dir here.
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("QUICKSTART_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    nb = nbformat.read(NOTEBOOK, as_version=4)

    resources = {"metadata": {"path": str(ROOT / "notebooks")}}
    NotebookClient(nb, timeout=300, kernel_name="python3", resources=resources).execute()

    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    figures = [o for o in outputs if "application/vnd.plotly.v1+json" in o.get("data", {})]
    assert len(figures) >= 4  # score bars, text comparison, metrics, version comparison
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "ready version 1" in text and "samples stored" in text
    assert (tmp_path / "data" / "local_key.txt").exists()


def test_quickstart_names_the_default_embedder() -> None:
    """The notebook still called MiniLM the default after e5-small-qint8 became it."""
    from core.contract import DEFAULT_EMBEDDER

    prose = "".join("".join(c.source) for c in nbformat.read(NOTEBOOK, as_version=4).cells)
    assert f"default embedder, `{DEFAULT_EMBEDDER}`" in prose
    assert "default MiniLM" not in prose
