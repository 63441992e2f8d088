"""A notebook's habits against the real service: cells run twice, pandas in and out, one progress
convention, one-line reprs, and errors that stay in the client's tree and say what to do."""

from __future__ import annotations

import io
import json
import pydoc
from collections.abc import Callable
from pathlib import Path

import httpx
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import core
import core.engine
from core.client import (
    Client,
    ClientClosedError,
    ConflictError,
    ImportReport,
    NotFoundError,
    PermissionDeniedError,
    RowError,
    ScoringClientError,
)
from core.client.tabular import rows, texts
from core.engine import Scorer
from core.tables import read_file
from tests.support.client import NEGATIVE, POSITIVE, Service, formality_rows, make_draft

FORMALITY = {"name": "Formality", "positive_label": "formal", "negative_label": "casual"}


def test_a_trait_cell_run_twice_answers_what_exists(client: Client, service: Service) -> None:
    handle = service.handle("twice")
    client.create_model(handle)
    first = client.add_traits(handle, [FORMALITY])
    again = client.add_traits(handle, [FORMALITY])  # the same cell, run again
    assert [t.key for t in again] == [t.key for t in first] == ["formality"]
    by_name = client.add_traits(handle, [{**FORMALITY, "name": "FORMALITY"}])  # the name in another case
    assert [t.key for t in by_name] == ["formality"]
    with pytest.raises(ValueError, match="already has trait 'formality'"):
        client.add_traits(handle, [FORMALITY], if_exists="error")
    both = client.add_traits(handle, [FORMALITY, {**FORMALITY, "name": "Politeness"}])
    assert [t.key for t in both] == ["formality", "politeness"]  # only the new one added
    assert [t.key for t in client.add_traits(handle, [FORMALITY], if_exists="add")][-1] == "formality_2"


def test_get_or_create_model_runs_twice(client: Client, service: Service) -> None:
    handle = service.handle("goc")
    made = client.get_or_create_model(handle, description="first")
    again = client.get_or_create_model(handle, description="second")
    assert made.handle == again.handle == handle and again.description == "first"


def test_pandas_in_and_out(client: Client, service: Service) -> None:
    handle = make_draft(client, service.handle("pandas"), samples=False)
    frame = pd.DataFrame(
        {
            "Sentence": POSITIVE + NEGATIVE,
            "Label": [1.0] * len(POSITIVE) + [0.0] * len(NEGATIVE),
            "Solved conflict": [False] * (len(POSITIVE) + len(NEGATIVE)),  # not a sample's field: left out
        }
    )
    frame["trait"] = "formality"
    report = client.import_samples(handle, frame, text="Sentence", quality="Label")
    assert report.stored == 12 and report.ok
    assert (
        repr(report)
        == "ImportReport(total=12, stored=12, duplicates=0, errors=0, batches=1, in_evaluation_set=0)"
    )
    client.wait(handle, client.train(handle, effort="low").run_id, timeout=120)

    series = pd.Series(["Dear Sir, kindly reply.", "yo lol", "Please find attached."], index=[10, 20, 30])
    scored = client.score_many(handle, series)
    table = scored.to_frame()
    assert list(table.columns) == ["formality"] and list(table.index) == [10, 20, 30]
    assert scored.to_numpy().shape == (3, 1)
    assert np.allclose(scored.to_numpy()[:, 0], [r["formality"] for r in scored])
    assert repr(scored).startswith("ScoreResults(3 texts × 1 traits: formality")
    assert "<table" in scored._repr_html_()
    for kind in (tuple(series), series.to_numpy(), list(series)):
        assert np.allclose(client.score_many(handle, kind).to_numpy(), scored.to_numpy())

    with pytest.raises(TypeError, match="score_many"):
        client.score(handle, list(series))  # type: ignore[arg-type]  # the misuse under test
    with pytest.raises(TypeError, match="not one text"):
        client.score_many(handle, "one text")


def test_one_progress_convention(client: Client, service: Service) -> None:
    handle = make_draft(client, service.handle("progress"), samples=False)
    seen: dict[str, list[tuple[int, int]]] = {"import": [], "wait": [], "score": [], "eval": []}
    client.import_samples(handle, formality_rows(), progress=lambda d, t: seen["import"].append((d, t)))
    run = client.train(handle, effort="low")
    client.wait(
        handle, run.run_id, timeout=120, poll_interval=0.05, progress=lambda d, t: seen["wait"].append((d, t))
    )
    client.score_many(handle, POSITIVE, progress=lambda d, t: seen["score"].append((d, t)))
    items = [{"trait": "formality", "text": f"{t} (held out)", "quality": 1.0} for t in POSITIVE]
    client.add_evaluation_items(handle, items, progress=lambda d, t: seen["eval"].append((d, t)))
    assert seen["import"][-1] == (12, 12) and seen["wait"][-1] == (100, 100)
    assert seen["score"] == [(0, 6), (6, 6)] and seen["eval"][-1] == (6, 6)
    for progress in (True, "tqdm"):  # a bar: a text one outside Jupyter
        assert len(client.score_many(handle, NEGATIVE, progress=progress)) == len(NEGATIVE)
    with pytest.raises(ValueError, match="callable"):
        client.score_many(handle, NEGATIVE, progress="bar")


def test_errors_stay_in_the_tree_and_say_what_to_do(service: Service) -> None:
    client = service.client()
    with pytest.raises(NotFoundError, match=r"a handle is `<namespace>.<name>`, e.g. 'local.subjectivity'"):
        client.get_model("subjectivity")
    client.close()
    with pytest.raises(ClientClosedError, match="closed"):
        client.health()
    assert issubclass(ClientClosedError, ScoringClientError)


def test_the_package_describes_itself() -> None:
    assert isinstance(core.__version__, str) and core.__version__
    assert {"train", "Scorer", "count_votes", "load_snapshot"} <= set(dir(core.engine))
    manual = pydoc.plain(pydoc.render_doc(core.engine))  # what help(core.engine) shows
    assert "train(traits" in manual and "count_votes(votes" in manual
    long = ImportReport(total=731, ids=list(range(731)), errors=[RowError(index=0, row={}, message="x")])
    assert (
        repr(long)
        == "ImportReport(total=731, stored=731, duplicates=0, errors=1, batches=0, in_evaluation_set=0)"
    )
    front = pydoc.plain(pydoc.render_doc(core))  # help(core): where to start, not every class in full
    assert len(front) < 8_000 and "help(core.Client)" in front and "start_local_service" in front
    assert core.Client is Client and core.NotFoundError is NotFoundError  # still reachable from the top


def test_a_read_file_shows_as_one_line(tmp_path: Path) -> None:
    path = tmp_path / "big.csv"
    pd.DataFrame({"Sentence": [f"sentence number {i} " * 8 for i in range(2_000)], "Label": 1}).to_csv(
        path, index=False
    )
    table = read_file(path)
    assert repr(table) == "Table(2,000 rows × 2 columns: Sentence, Label; .frame() for a DataFrame)"
    assert "<table" in table._repr_html_() and len(table._repr_html_()) < 5_000


_cell = st.one_of(st.none(), st.floats(allow_nan=True), st.text(min_size=1, max_size=5))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.text(min_size=1, max_size=20), _cell), min_size=1, max_size=8))
def test_a_frame_gives_the_same_rows_as_its_dicts(pairs: list[tuple[str, object]]) -> None:
    """Each frame row becomes a dict with the named columns renamed, other columns dropped, blanks unset."""
    frame = pd.DataFrame({"Sentence": [p[0] for p in pairs], "source_url": [p[1] for p in pairs], "junk": 1})
    got = rows(frame, ("text", "source_url"), text="Sentence", quality=None)
    for (text, cell), row in zip(pairs, got, strict=True):
        assert row["text"] == text and "junk" not in row
        blank = cell is None or (isinstance(cell, float) and np.isnan(cell))
        assert ("source_url" not in row) if blank else (row["source_url"] == cell)
    assert texts(frame["Sentence"], "t") == [p[0] for p in pairs]


def test_exports_from_python(client: Client, service: Service, tmp_path: Path) -> None:
    handle = make_draft(client, service.handle("export"), samples=False)
    frame = pd.DataFrame({"text": POSITIVE + NEGATIVE, "quality": [1.0] * 6 + [0.0] * 6})
    frame["trait"], frame["source_id"], frame["annotator"] = (
        "formality",
        [f"row{i}" for i in range(12)],
        "ann",
    )
    frame["community"], frame["year"] = ["north", "south"] * 6, [2019] * 11 + [None]
    client.import_samples(handle, frame, provenance="imported", keep=["community", "year"])
    samples = client.export_samples(handle)
    assert isinstance(samples, pd.DataFrame) and len(samples) == 12
    assert list(samples.columns)[:4] == ["id", "trait", "text", "quality"]
    assert set(samples.source_id) == set(frame.source_id) and set(samples.provenance) == {"imported"}
    assert set(samples.annotator) == {"ann"}
    # The kept columns travel as each text's metadata (a blank cell left out), and out with the export.
    by_id = dict(zip(samples.source_id, samples.metadata, strict=True))
    assert by_id["row0"] == {"community": "north", "year": 2019} and by_id["row11"] == {"community": "south"}
    csv_text = client.export_samples(handle, "csv")
    assert isinstance(csv_text, str) and csv_text.startswith("id,trait,text,quality,provenance,annotator")
    read = pd.read_csv(io.StringIO(csv_text))
    assert len(read) == 12 and json.loads(read.metadata[read.source_id == "row1"].item()) == {
        "community": "south",
        "year": 2019,
    }

    client.wait(handle, client.train(handle, effort="low").run_id, timeout=120)
    snapshot = client.export_snapshot(handle, 1, tmp_path / "v1.json")
    local = Scorer.from_snapshot((tmp_path / "v1.json").read_text())
    assert local.keys == ["formality"] and snapshot["traits"][0]["key"] == "formality"
    assert repr(local).startswith("Scorer(1 traits: formality; embedder ")
    with pytest.raises(ValueError, match="format"):
        client.export_samples(handle, "xlsx")  # type: ignore[arg-type]  # the misuse under test


def test_a_purged_handle_can_be_created_again(client: Client, service: Service) -> None:
    handle = make_draft(client, service.handle("purge"))
    client.add_pool_texts(handle, ["an unlabelled text"])
    client.wait(handle, client.train(handle, effort="low").run_id, timeout=120)
    assert set(client.score(handle, "Dear Sir").as_dict()) == {"formality"}  # its scorer is cached now
    client.delete_model(handle)  # archived: the handle stays taken
    with pytest.raises(ConflictError, match="handle_taken"):
        client.create_model(handle)
    with pytest.raises(PermissionDeniedError):
        service.client("scorer").delete_model(handle, purge=True)
    assert client.delete_model(handle, purge=True).deleted is True
    with pytest.raises(NotFoundError):
        client.get_model(handle)

    client.create_model(handle)  # the same handle, a new model from the top
    client.add_traits(handle, [{"name": "Warmth", "positive_label": "warm", "negative_label": "cold"}])
    rows = [{**r, "trait": "warmth"} for r in formality_rows()]
    client.import_samples(handle, rows)
    assert [s.trait for s in client.list_samples(handle)] == ["warmth"] * 12  # nothing of the old model
    client.wait(handle, client.train(handle, effort="low").run_id, timeout=120)
    assert client.get_model(handle).version_no == 1
    assert set(client.score(handle, "Dear Sir").as_dict()) == {"warmth"}  # never the purged version's scorer


def _interrupt_after(calls: int) -> Callable[[int, int], None]:
    """A progress callback that raises KeyboardInterrupt at its `calls`-th call: Ctrl-C arriving mid-call."""
    seen = [0]

    def progress(done: int, total: int) -> None:
        seen[0] += 1
        if seen[0] == calls:
            raise KeyboardInterrupt

    return progress


class _StopAfterStoring(httpx.BaseTransport):
    """The service's transport, with Ctrl-C arriving while the `nth` sample batch's answer is on its way back:
    the service stored the batch, the client never read that it did."""

    def __init__(self, inner: httpx.BaseTransport, nth: int) -> None:
        self.inner, self.nth, self.posts = inner, nth, 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.method == "POST" and request.url.path.endswith("/samples"):
            self.posts += 1
            if self.posts == self.nth:
                raise KeyboardInterrupt
        return response


def test_an_interrupt_mid_request_counts_the_batch_the_service_stored(service: Service) -> None:
    # The import said 80 rows were stored where 85 were: the batch in flight had reached the service.
    with service.client(transport=_StopAfterStoring(service.app_transport, 2)) as client:
        handle = make_draft(client, service.handle("midflight"), samples=False)
        rows = [{"trait": "formality", "text": f"in flight {i}", "quality": float(i % 2)} for i in range(25)]
        with pytest.raises(
            KeyboardInterrupt, match="10 of 25 rows were checked and sent .*, and 10 of the 10 rows"
        ):
            client.import_samples(handle, rows, batch_size=10)
        assert len(list(client.list_samples(handle))) == 20


def test_an_interrupt_says_what_was_stored(client: Client, service: Service) -> None:
    handle = make_draft(client, service.handle("interrupt"), samples=False)
    rows = [{"trait": "formality", "text": f"text number {i}", "quality": float(i % 2)} for i in range(30)]
    # Calls: after validation (0 sent), after batch 1 (10 sent), after batch 2: interrupted there.
    with pytest.raises(KeyboardInterrupt, match="20 of 30 rows were checked and sent"):
        client.import_samples(handle, rows, batch_size=10, progress=_interrupt_after(3))
    assert len(list(client.list_samples(handle))) == 20
    again = client.import_samples(handle, rows)  # run again: the rest, nothing twice
    assert (again.stored, len(again.duplicates)) == (10, 20)
    assert len(list(client.list_samples(handle))) == 30

    client.wait(handle, client.train(handle, effort="low").run_id, timeout=120)
    texts = [f"score me {i}" for i in range(250)]
    with pytest.raises(KeyboardInterrupt, match="after 100 of 250 texts"):
        client.score_many(handle, texts, progress=_interrupt_after(2))
    with pytest.raises(KeyboardInterrupt, match=r"goes on in the service; wait again with client.wait\("):
        client.wait(handle, progress=_interrupt_after(1))


def test_a_busy_model_is_not_purged(idle_service: Service) -> None:
    """A run in flight (no worker takes it here) would write its result to nothing: 409, nothing deleted."""
    with idle_service.client() as c:
        handle = make_draft(c, idle_service.handle("busy-purge"))
        c.train(handle, effort="low")
        with pytest.raises(ConflictError, match="model_busy"):
            c.delete_model(handle, purge=True)
        assert c.get_model(handle).state == "busy" and len(list(c.list_samples(handle))) == 12


def test_an_evaluation_reads_as_a_table(client: Client, service: Service) -> None:
    handle = make_draft(client, service.handle("evaluation-table"))
    client.wait(handle, client.train(handle, effort="low").run_id, timeout=120)
    items = pd.DataFrame(
        {"text": [f"{t} (held out)" for t in POSITIVE + NEGATIVE], "quality": [1.0] * 6 + [0.0] * 6}
    )
    client.add_evaluation_items(handle, items.assign(trait="formality"))
    client.wait(handle, client.evaluate(handle, 1).run_id, timeout=120)
    evaluation = client.get_evaluation(handle, 1)
    table = evaluation.to_frame()
    assert list(table.index) == ["formality"] and table.loc["formality", "items"] == 12
    auc = evaluation.traits["formality"].roc_auc
    assert auc is not None and table.loc["formality", "roc_auc"] == auc.value
    assert repr(evaluation) == f"Evaluation(v1, 12 items: formality ROC-AUC {auc.value:.3f})"
    assert "<table" in evaluation._repr_html_()
