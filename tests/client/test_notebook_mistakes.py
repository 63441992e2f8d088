"""A notebook's mistakes end in a clear error, never in silence or Python's internals: texts without labels,
rows that cannot be stored, a series as evaluation items, an import cell re-run while the model trains, a
`labels=` hint copied as written, and a DataFrame's row ids (a wait on a no-op train: test_cells_twice.py)."""

from __future__ import annotations

import ast
import re

import pandas as pd
import pytest

from core.client import Client, ConflictError, ImportRowsError
from tests.support.client import NEGATIVE, POSITIVE, Service, formality_rows, make_draft


def _stored(client: Client, handle: str) -> list[tuple[str, float]]:
    return sorted((s.text, s.quality) for s in client.list_samples(handle))


def test_texts_without_labels_are_refused_before_anything_is_sent(client: Client, service: Service) -> None:
    # They came back as ImportReport(stored=0, errors=3) without raising, and the next training was zero-shot.
    handle = make_draft(client, service.handle("plaintexts"), samples=False)
    with pytest.raises(TypeError, match=r"each a labelled text: .*'quality'.*client\.import_pool") as err:
        client.import_samples(handle, POSITIVE[:3])
    assert "Nothing was sent" in str(err.value)
    with pytest.raises(TypeError, match="each a labelled text"):
        client.add_samples(handle, POSITIVE[:3])
    with pytest.raises(TypeError, match="got one dict: a row is one dict"):
        client.import_samples(handle, formality_rows()[0])
    assert _stored(client, handle) == []


def test_rows_that_cannot_be_stored_raise_with_the_report(client: Client, service: Service) -> None:
    handle = make_draft(client, service.handle("strict"), samples=False)
    rows = [*formality_rows(), {"trait": "formality", "text": "", "quality": 1.0}]
    refused = r"1 of 13 rows .*nothing was sent.*row 12: text is empty"
    with pytest.raises(ImportRowsError, match=refused) as err:
        client.import_samples(handle, rows)
    assert isinstance(err.value, ValueError) and [e.index for e in err.value.report.errors] == [12]
    assert _stored(client, handle) == []  # refused here: not one row sent

    orphan = {"trait": "no-such-trait", "text": "An orphan row.", "quality": 1.0}
    with pytest.raises(ImportRowsError, match=r"1 of 13 rows .*\(12 stored, 0 already there\)") as server:
        client.import_samples(handle, [*formality_rows(), orphan])  # only the service knows the trait
    assert server.value.report.stored == 12 and server.value.report.rejected[0].index == 12

    lenient = client.import_samples(handle, rows, strict=False)  # today's behaviour, asked for
    assert (lenient.stored, len(lenient.duplicates), len(lenient.errors)) == (0, 12, 1)
    assert len(_stored(client, handle)) == 12


def test_evaluation_items_of_another_shape_name_the_shapes_taken(client: Client, service: Service) -> None:
    # A Series raised "dictionary update sequence element #0 has length 1; 2 is required".
    handle = make_draft(client, service.handle("evalshape"))
    frame = pd.DataFrame({"Sentence": POSITIVE + NEGATIVE, "Label": [1.0] * 6 + [0.0] * 6})
    with pytest.raises(TypeError, match=r"add_evaluation_items takes evaluation items.*pandas Series") as err:
        client.add_evaluation_items(handle, frame["Sentence"])
    assert "add_evaluation_items(handle, df, text='Sentence', quality='Label')" in str(err.value)
    for wrong in (list(frame["Sentence"]), {"text": "Dear Sir.", "quality": 1.0}, [("Dear Sir.", 1.0)]):
        with pytest.raises(TypeError, match="add_evaluation_items takes evaluation items"):
            client.add_evaluation_items(handle, wrong)
    assert client.evaluation_set(handle).total == 0
    added = client.add_evaluation_items(handle, frame, text="Sentence", quality="Label")  # what it says
    assert added.added == 12


def test_an_import_run_again_while_the_model_trains_reports_duplicates(idle_service: Service) -> None:
    # It raised 409 model_busy though every row was stored already (no worker here: the run stays queued).
    with idle_service.client() as client:
        handle = make_draft(client, idle_service.handle("busyagain"), samples=False)
        first = client.import_samples(handle, formality_rows())
        run = client.train(handle, effort="low")
        assert client.get_model(handle).state == "busy"
        again = client.import_samples(handle, formality_rows())  # the import cell, run again
        assert (again.stored, again.ok) == (0, True)
        assert sorted(d.id for d in again.duplicates) == sorted(first.ids)
        new = {"trait": "formality", "text": "Yours faithfully, the board.", "quality": 1.0}
        with pytest.raises(ConflictError) as busy:
            client.import_samples(handle, [*formality_rows(), new])
        assert busy.value.code == "model_busy" and busy.value.run_id == run.run_id
        assert f"client.wait({handle!r}, {run.run_id!r}), then import again" in str(busy.value)
        assert len(_stored(client, handle)) == 12
        client.cancel(handle, str(run.run_id))


def test_the_labels_hint_copied_does_what_it_says(client: Client, service: Service) -> None:
    # It proposed labels={'OBJ': 1, 'SUBJ': 0}: copied, the trait's negative pole became its positive.
    handle = service.handle("hint")
    client.create_model(handle)
    trait = {"name": "Subjectivity", "positive_label": "subjective", "negative_label": "objective"}
    client.add_traits(handle, [trait])
    opinion, fact = "What a dreadful, shameful decision.", "The council met on Tuesday."
    frame = pd.DataFrame({"Sentence": [opinion, fact], "Label": ["SUBJ", "OBJ"]})
    with pytest.raises(ValueError, match="holds labels") as err:
        client.import_samples(handle, frame, text="Sentence", quality="Label")
    hint = re.search(r"labels=(\{[^}]*\})", str(err.value))
    assert hint is not None and "1 if the label means 'subjective'" in str(err.value)
    client.import_samples(handle, frame, text="Sentence", quality="Label", labels=ast.literal_eval(hint[1]))
    assert _stored(client, handle) == sorted([(opinion, 1.0), (fact, 0.0)])

    # Labels that name no pole: the hint leaves each quality to choose, and copied as it is, it is refused.
    vague = pd.DataFrame({"Sentence": ["Lovely!", "It rained."], "Label": ["yes", "no"]})
    with pytest.raises(ValueError, match=r"labels=\{'no': \.\.\., 'yes': \.\.\.\}") as unclear:
        client.import_samples(handle, vague, text="Sentence", quality="Label")
    copied = re.search(r"labels=(\{[^}]*\})", str(unclear.value))
    assert copied is not None
    with pytest.raises(ValueError, match="each label's quality is a number in"):
        client.import_samples(handle, vague, text="Sentence", quality="Label", labels=eval(copied[1]))  # noqa: S307
    assert len(_stored(client, handle)) == 2


def test_a_frame_s_rows_keep_their_ids(client: Client, service: Service) -> None:
    handle = make_draft(client, service.handle("frameids"), samples=False)
    frame = pd.DataFrame({"Sentence": POSITIVE, "Label": 1.0}, index=range(100, 100 + len(POSITIVE)))
    client.import_samples(handle, frame, text="Sentence", quality="Label")
    ids = {s.text: s.source_id for s in client.list_samples(handle)}
    assert ids == {text: str(100 + i) for i, text in enumerate(POSITIVE)}  # df.loc[int(source_id)]

    named = pd.DataFrame({"id": ["a-1", "a-2"], "Sentence": NEGATIVE[:2], "Label": 0.0})
    client.import_samples(handle, named, text="Sentence", quality="Label", source_id="id")
    ids = {s.text: s.source_id for s in client.list_samples(handle)}
    assert [ids[t] for t in NEGATIVE[:2]] == ["a-1", "a-2"]

    # A column named like an id is the rows' own ids unnamed, as the workbench's file import proposes it:
    # the index's 0, 1 were kept, and the file's ids lost. pandas reads a column of ids with gaps as floats.
    unnamed = pd.DataFrame({"Example_ID": [267.0, None], "Sentence": NEGATIVE[2:4], "Label": 0.0})
    client.import_samples(handle, unnamed, text="Sentence", quality="Label")
    ids = {s.text: s.source_id for s in client.list_samples(handle)}
    assert [ids[t] for t in NEGATIVE[2:4]] == ["267", None]  # a blank cell stays unset
