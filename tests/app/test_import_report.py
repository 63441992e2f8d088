"""What an import says before it stores anything, without Streamlit (app/samples/import_report.py,
app/samples/mapping.py), and on the Samples page's Import tab (AppTest, real local service): texts a file
labels both ways are listed with their lines and labels, and a column of ids is proposed as the id column."""

from __future__ import annotations

import json

import pytest

from app.evaluation.frames import overlap_note
from app.samples.import_report import contradictions
from app.samples.mapping import Mapped, Mapping, guess_mapping, map_rows
from core.client import Client
from core.local import LocalService
from core.tables import read_table
from tests.support.app import make_draft, new_handle
from tests.support.apptest import by_label, no_exception, page, texts

TWICE = "We will circle back on the numbers whenever."
FILE = (
    "text,label\n"
    f"{TWICE},1\n"
    "Kindly find the minutes attached.,1\n"
    f"{TWICE},0\n"
    "see u there lol,0\n"
    "Please confirm receipt of this letter.,1\n"
)


def _mapped(data: str) -> Mapped:
    table = read_table("file.csv", data.encode())
    mapping = Mapping(text="text", label="label", trait="formality", rule="as_is")
    return map_rows(table, mapping, {"formality": "formality"})


def test_a_text_labelled_both_ways_is_listed_with_its_lines_and_labels() -> None:
    mapped = _mapped(FILE)
    assert contradictions(mapped) == [
        {"lines": "2, 4", "labels": "1, 0", "trait": "formality", "text": TWICE}
    ]
    agreed = _mapped(FILE.replace(f"{TWICE},0", f"{TWICE},1"))
    assert contradictions(agreed) == []
    # Graded rows a hair either side of the middle are noise, not two ways (training does not contest them).
    near = _mapped(FILE.replace(f"{TWICE},1", f"{TWICE},0.51").replace(f"{TWICE},0", f"{TWICE},0.49"))
    assert contradictions(near) == []


def test_a_column_of_ids_is_proposed_as_the_id_column() -> None:
    headerless = "".join(f"{1000 + i}\tA request number {i} here?\t0.{i}\n" for i in range(6))
    table = read_table("file.txt", headerless.encode())
    guess = guess_mapping(table)
    assert (guess.text, guess.label, guess.source_id) == ("column 2", "column 3", "column 1")
    # Words, or numbers with a decimal point, are not ids.
    scores = "text,score,group\n" + "".join(f"Text {i},0.{i},g\n" for i in range(6))
    assert guess_mapping(read_table("f.csv", scores.encode())).source_id is None


@pytest.mark.usefixtures("app_env")
def test_the_import_tab_lists_a_files_contradictions_before_storing(
    local_service: LocalService, client: Client
) -> None:
    handle = make_draft(client, new_handle(local_service, "both"))
    at = page("samples", handle)
    at.run()
    at.file_uploader(key="samples_upload").set_value(("file.csv", FILE.encode(), "text/csv")).run()
    no_exception(at)
    assert "**Texts this file labels both ways** (1)" in texts(at.markdown)
    listed = [d.value for d in at.dataframe if "labels" in d.value.columns]
    assert listed and listed[0].to_dict("records") == [
        {"lines": "2, 4", "labels": "1, 0", "trait": "formality", "text": TWICE}
    ]
    by_label(at.radio, "Label → quality").set_value("as_is").run()
    at.button(key="samples_import").click().run()
    no_exception(at)
    assert any("labelled both ways" in t and "Disagreements" in t for t in texts(at.success)), texts(
        at.success
    )


def test_evaluation_texts_of_the_pool_and_the_samples_are_said_when_added() -> None:
    assert overlap_note(0, 0) is None
    pool = overlap_note(1, 0)
    assert pool is not None and pool.startswith("Of this file's texts, 1 is a text of the unlabelled pool")
    both = overlap_note(1_037, 19)
    assert both is not None and "1,037 are texts of the unlabelled pool: left out of labelling" in both
    assert "19 are texts of the samples: kept, but no training takes them in" in both


@pytest.mark.usefixtures("app_env")
def test_the_samples_grid_shows_qualities_to_five_decimals(
    local_service: LocalService, client: Client
) -> None:
    """The grid's quality column shows five significant digits (0.50625, not "0.50"): neither its format nor
    its step rounds a stored quality."""
    handle = make_draft(client, new_handle(local_service, "grid"))
    at = page("samples", handle)
    at.run()
    no_exception(at)
    quality = json.loads(at.dataframe[0].proto.columns)["quality"]
    assert quality["type_config"]["format"] == "%.5g" and quality["type_config"]["step"] <= 0.00001


@pytest.mark.usefixtures("app_env")
def test_word_labels_are_given_a_number_each_by_the_analyst(
    local_service: LocalService, client: Client
) -> None:
    """SUBJ/OBJ labels: each word gets the number the analyst types (none guessed), then the rule maps it."""
    handle = new_handle(local_service, "words")
    client.create_model(handle)
    client.add_traits(
        handle, [{"name": "Subjectivity", "positive_label": "subjective", "negative_label": "objective"}]
    )
    data = "sentence,label\n" + "".join(
        f"Sentence {i} of the file.,{'SUBJ' if i % 2 else 'OBJ'}\n" for i in range(6)
    )
    at = page("samples", handle)
    at.run()
    at.file_uploader(key="samples_upload").set_value(("subj.csv", data.encode(), "text/csv")).run()
    no_exception(at)
    subj, obj = by_label(at.number_input, "SUBJ"), by_label(at.number_input, "OBJ")
    assert subj.value is None and obj.value is None  # never guessed
    subj.set_value(1.0).run()
    by_label(at.number_input, "OBJ").set_value(0.0).run()
    by_label(at.radio, "Label → quality").set_value("as_is").run()
    at.button(key="samples_import").click().run()
    no_exception(at)
    stored = sorted((s.text, s.quality) for s in client.list_samples(handle))
    assert stored == [(f"Sentence {i} of the file.", float(i % 2)) for i in range(6)]

    # The other part of the split, after a reload (a new session): the numbers and the rule of the last import
    # of these columns into the model, not asked again (the words' boxes came back empty).
    rest = "sentence,label\n" + "".join(f"Sentence {i} again.,{'SUBJ' if i % 2 else 'OBJ'}\n" for i in (1, 2))
    again = page("samples", handle)
    again.run()
    again.file_uploader(key="samples_upload").set_value(("rest.csv", rest.encode(), "text/csv")).run()
    no_exception(again)
    words = {n.label: n.value for n in again.number_input if n.label in ("SUBJ", "OBJ")}
    assert words == {"SUBJ": 1.0, "OBJ": 0.0}
    assert by_label(again.radio, "Label → quality").value == "as_is"
    assert not again.button(key="samples_import").disabled
