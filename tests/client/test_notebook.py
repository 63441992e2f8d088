"""The shipped notebooks run top to bottom in a real kernel against a real local service: the quickstart with
the hashing embedder, the NewsSD job with the default one."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from harness.datasets import datasets_dir, find_datasets

pytestmark = pytest.mark.usefixtures("server_process")  # starts a service process of its own

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "quickstart.ipynb"


def test_quickstart_runs_twice_and_cleans_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not (ROOT / "sample_data" / "support_replies" / "model.json").exists():
        pytest.fail("sample_data/support_replies is missing: the notebook needs it")
    # The kernel spec runs `python`: make it this interpreter (the venv); its temp files go under tmp_path.
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.delenv("QUICKSTART_DATA_DIR", raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    # A user runs the setup cells again (service, model and traits, import) before going on: nothing doubles.
    setup = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"][1:4]
    again = [nbformat.v4.new_code_cell(nb.cells[i].source) for i in setup]
    check = nbformat.v4.new_code_cell(
        'assert len(client.list_traits(handle)) == len(spec["traits"]), client.list_traits(handle)\n'
        # The second import stores nothing new: every row is a duplicate of one stored the first time.
        "assert (report.stored, len(report.duplicates)) == (0, len(rows)) and report.ok\n"
        "assert svc.detached  # a kernel's service outlives a restart of the kernel\n"
        'print("ran twice:", svc)'
    )
    nb.cells[setup[-1] + 1 : setup[-1] + 1] = [*again, check]

    resources = {"metadata": {"path": str(ROOT / "notebooks")}}
    NotebookClient(nb, timeout=300, kernel_name="python3", resources=resources).execute()

    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    figures = [o for o in outputs if "application/vnd.plotly.v1+json" in o.get("data", {})]
    assert len(figures) >= 4  # score bars, text comparison, metrics, version comparison
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "ready version 1" in text and "samples stored" in text and "ran twice:" in text
    # A bar's saved output ends at its final count, never at the 0% it was drawn with: a text bar's last
    # line, or the widget's display updated when the bar closed (core/client/progress.py).
    for cell in [c for c in nb.cells if "import_samples(handle, rows, progress=True)" in c.source]:
        drawn = [o.get("text") or o.get("data", {}).get("text/plain", "") for o in cell.outputs]
        bar = [line for line in re.split(r"[\r\n]", "".join(drawn)) if "importing into" in line]
        assert bar and re.search(r"100%\|.*\| (\d+)/\1 ", bar[-1]), bar[-3:]
    assert not list(tmp_path.glob("scoring-quickstart*")), "the quickstart left its data directory behind"


def test_quickstart_names_the_default_embedder() -> None:
    """The notebook still called MiniLM the default after e5-small-qint8 became it."""
    from core.contract import DEFAULT_EMBEDDER

    prose = "".join("".join(c.source) for c in nbformat.read(NOTEBOOK, as_version=4).cells)
    assert f"default embedder, `{DEFAULT_EMBEDDER}`" in prose
    assert "default MiniLM" not in prose


NEWSSD = ROOT / "notebooks" / "newssd_subjectivity.ipynb"


@pytest.mark.slow  # the default embedder, e5-small in int8, on a real dataset
def test_newssd_notebook_runs_a_real_job_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if find_datasets() is None:
        pytest.fail("../shared/datasets is missing: the notebook reads NewsSD from there")
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.setenv("SCORING_DATASETS", str(datasets_dir()))
    monkeypatch.setenv("NEWSSD_TRAIN", "40")  # a balanced subset: the job, not the dataset's size
    monkeypatch.setenv("NEWSSD_TEST", "20")
    monkeypatch.delenv("NEWSSD_EMBEDDER", raising=False)  # the default embedder's path, once in the suite
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # where the notebook makes (and removes) its data directory
    nb = nbformat.read(NEWSSD, as_version=4)

    resources = {"metadata": {"path": str(ROOT / "notebooks")}}
    NotebookClient(nb, timeout=600, kernel_name="python3", resources=resources).execute()

    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "40 training rows, 20 test rows" in text
    assert "ScoreResults(20 texts × 1 traits: subjectivity" in text
    assert "ROC-AUC v1" in text and "40 samples;" in text
    assert not list(tmp_path.glob("scoring-newssd*")), "the notebook left its data directory behind"


Elsewhere = tuple[Path, list[nbformat.NotebookNode]]  # the folder without the data; the two runs of the cell


@pytest.fixture(scope="module")
def first_cell_elsewhere(tmp_path_factory: pytest.TempPathFactory) -> Elsewhere:
    """The NewsSD notebook's data cell, run unchanged in a kernel in a folder outside the checkout: first with
    SCORING_DATASETS naming a folder without the data, then the shared datasets. One kernel for both (each
    start imports the kernel, pandas and scikit-learn): the cell reads the variable when it runs. A folder
    without the data, named: unset, the notebook searches every folder above the kernel's, and on a machine
    with a shared/datasets above its temp folder it would find the data there."""
    tmp_path = tmp_path_factory.mktemp("newssd-elsewhere")
    empty = tmp_path / "no-data-here"
    empty.mkdir()
    elsewhere = tmp_path / "my-analysis"
    elsewhere.mkdir()
    with pytest.MonkeyPatch.context() as env:
        env.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
        env.setenv("PYTHONPATH", str(ROOT))
        env.setenv("NEWSSD_TRAIN", "20")
        env.setenv("NEWSSD_TEST", "10")
        nb = nbformat.read(NEWSSD, as_version=4)
        data_cell = nb.cells[1]
        found = datasets_dir() if find_datasets() is not None else tmp_path / "no-datasets-found"
        nb.cells = []
        for folder in (empty, found):
            point = f"import os\nos.environ['SCORING_DATASETS'] = {str(folder)!r}"
            nb.cells.append(nbformat.v4.new_code_cell(point))
            nb.cells.append(nbformat.v4.new_code_cell(data_cell.source))
        resources = {"metadata": {"path": str(elsewhere)}}
        NotebookClient(
            nb, timeout=120, kernel_name="python3", resources=resources, allow_errors=True
        ).execute()
    return empty, [nb.cells[1], nb.cells[3]]


def test_newssd_notebook_finds_its_data_outside_the_checkout(
    first_cell_elsewhere: Elsewhere,
) -> None:
    if find_datasets() is None:
        pytest.fail("../shared/datasets is missing: the notebook reads NewsSD from there")
    cell = first_cell_elsewhere[1][1]
    assert not [o for o in cell.outputs if o.output_type == "error"]
    assert "20 training rows, 10 test rows" in "".join(o.get("text", "") for o in cell.outputs)


def test_newssd_notebook_says_where_to_point_when_the_data_is_missing(
    first_cell_elsewhere: Elsewhere,
) -> None:
    empty, (cell, _) = first_cell_elsewhere
    (error,) = [o for o in cell.outputs if o.output_type == "error"]
    assert error.ename == "FileNotFoundError"
    assert "newssd_eng_subjectivity" in error.evalue and str(empty) in error.evalue
    assert "set SCORING_DATASETS" in error.evalue
    prose = "".join(nbformat.read(NEWSSD, as_version=4).cells[0].source)
    assert "**Where it is:**" in prose and "SCORING_DATASETS" in prose
