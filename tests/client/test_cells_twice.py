"""A notebook's cells run twice and end somewhere: an import again after training, an error that names the
client's call, a wait on a run the model never had or on a no-op train, and imports that never guess (labels,
one trait, a `quality` column beside the one named)."""

from __future__ import annotations

import pandas as pd
import pytest

from core.client import Client, ConflictError, NotFoundError, RunFailedError
from tests.support.checkpoints import on_progress
from tests.support.client import NEGATIVE, POSITIVE, Service, formality_rows, make_draft


def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        {"Sentence": POSITIVE + NEGATIVE, "Label": ["FORMAL"] * len(POSITIVE) + ["CASUAL"] * len(NEGATIVE)}
    )


def test_an_import_of_stored_rows_after_training_reports_duplicates(client: Client, service: Service) -> None:
    handle = make_draft(client, service.handle("twice"), samples=False)
    first = client.import_samples(handle, formality_rows())
    assert first.stored == 12
    client.wait(handle, client.train(handle, effort="low").run_id, timeout=120)
    again = client.import_samples(handle, formality_rows())  # the cell run again: no error, nothing stored
    assert again.stored == 0 and len(again.duplicates) == 12 and again.ok
    assert sorted(d.id for d in again.duplicates) == sorted(first.ids)
    assert len(list(client.list_samples(handle))) == 12
    assert client.get_model(handle).state == "ready"

    new = [*formality_rows(), {"trait": "formality", "text": "Yours faithfully, the board.", "quality": 1.0}]
    with pytest.raises(ConflictError) as refused:  # a new row needs a draft: said as the client's call
        client.import_samples(handle, new)
    assert refused.value.code == "model_not_draft"
    assert f"client.reopen({handle!r})" in str(refused.value) and "POST /v1" not in str(refused.value)
    assert "POST /v1/models" in refused.value.message  # the service's envelope, as it sent it
    assert len(list(client.list_samples(handle))) == 12


def test_wait_on_a_run_the_model_never_had_is_not_found(client: Client, service: Service) -> None:
    handle = make_draft(client, service.handle("norun"))
    with pytest.raises(NotFoundError, match="run_doesnotexist"):
        client.wait(handle, "run_doesnotexist", timeout=60)
    run = client.train(handle, effort="low").run_id
    assert client.wait(handle, run, timeout=120).state == "ready"
    with pytest.raises(NotFoundError, match=f"its last run is {run}"):
        client.wait(handle, "run_doesnotexist", timeout=60)

    # A no-op train's wait answers the model at once, whatever its last run did: it raised that run's failure
    # (and wait(h, run) run_not_found) where elsewhere it returned.
    def crash(phase: str) -> None:
        raise RuntimeError("injected engine crash")

    with on_progress(service.ctx.executor, crash), pytest.raises(RunFailedError):
        client.wait(handle, client.train(handle, effort="low", reoptimize_params=True).run_id, timeout=120)
    noop = client.train(handle)
    assert (noop.state, noop.run_id) == ("ready", None)
    for waited in (noop.run_id, noop):
        model = client.wait(handle, waited, timeout=120)
        assert model.state == "ready" and model.last_operation is not None
        assert model.last_operation.status == "failed"  # what the last run did: said, not raised
    with pytest.raises(TypeError, match="wait takes the run's id"):
        client.wait(handle, 7)  # type: ignore[arg-type]


def test_labels_map_to_qualities_and_one_trait_needs_no_column(client: Client, service: Service) -> None:
    handle = make_draft(client, service.handle("labels"), samples=False)
    frame = _frame()  # no trait column: the model has one trait
    report = client.import_samples(
        handle, frame, text="Sentence", quality="Label", labels={"FORMAL": 1, "CASUAL": 0}
    )
    assert report.stored == 12 and not report.errors
    stored = {s.text: s.quality for s in client.list_samples(handle)}
    assert stored[POSITIVE[0]] == 1.0 and stored[NEGATIVE[0]] == 0.0
    assert {s.trait for s in client.list_samples(handle)} == {"formality"}
    # A table's rows are a file's: stored as imported (nobody's votes), not as the importer's own.
    assert {(s.provenance, s.annotator) for s in client.list_samples(handle)} == {("imported", None)}
    with pytest.raises(ValueError, match="quality is a number in"):
        client.import_samples(handle, frame, text="Sentence", quality="Label", labels={"FORMAL": 5})


def test_labels_that_do_not_fit_the_column_raise_before_anything_is_sent(
    client: Client, service: Service
) -> None:
    # A mapping spelled for another file ({"SUB": 1} for "SUBJ") stored the rows it named and refused the
    # rest one by one, without raising; a label column without labels= came back as a report of refusals.
    handle = make_draft(client, service.handle("badlabels"), samples=False)
    frame = _frame()
    frame.loc[len(frame)] = ["A text labelled neither way.", "MAYBE"]
    with pytest.raises(ValueError, match=r"does not name every label .*: 'MAYBE' \(1 row\)"):
        client.import_samples(
            handle, frame, text="Sentence", quality="Label", labels={"FORMAL": 1, "CASUAL": 0}
        )
    with pytest.raises(ValueError, match=r"holds labels \('CASUAL', 'FORMAL'\), not numbers.*labels="):
        client.import_samples(handle, _frame(), text="Sentence", quality="Label")
    with pytest.raises(ValueError, match=r"holds labels"):
        client.add_evaluation_items(handle, _frame(), text="Sentence", quality="Label")
    assert not list(client.list_samples(handle)) and client.evaluation_set(handle).total == 0


def test_a_named_quality_column_beside_one_called_quality_is_an_error(
    client: Client, service: Service
) -> None:
    handle = make_draft(client, service.handle("twocols"), samples=False)
    frame = _frame().assign(Label=[1.0] * len(POSITIVE) + [0.0] * len(NEGATIVE), quality=0.5)
    with pytest.raises(ValueError, match="also has a column 'quality'"):
        client.import_samples(handle, frame, text="Sentence", quality="Label")
    assert list(client.list_samples(handle)) == []


def test_flags_from_the_client_with_the_one_progress_convention(client: Client, service: Service) -> None:
    handle = make_draft(client, service.handle("flags"), samples=False)
    rows = formality_rows() + [
        {
            "trait": "formality",
            "text": NEGATIVE[0],
            "quality": 1.0,
            "annotator": "bob",
            "provenance": "imported",
        }
    ]  # bob rates a casual text formal: votes on both poles of one text
    client.import_samples(handle, rows)
    seen: list[tuple[int, int]] = []
    flags = client.flags(handle, progress=lambda done, total: seen.append((done, total)))
    contested = [f for f in flags if f.flag == "contested"]
    assert [f.text for f in contested] == [NEGATIVE[0]]
    assert {v.annotator for v in contested[0].votes} >= {"bob"}
    assert seen and seen[-1] == (100, 100) and all(total == 100 for _, total in seen)
    assert list(flags.to_frame().columns)[:3] == ["id", "trait", "flag"]
    assert repr(flags).startswith(f"SampleFlags({len(flags)} flags")
