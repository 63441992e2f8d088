"""Files as people publish them, through the pages that read them (samples, pool, batch scoring), against the
real local service: a headerless tab-separated .txt of a published dataset keeps its first row and its ids, a
file of another kind is refused on the page, saying why."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from app.samples.files import to_csv, to_jsonl
from app.samples.mapping import guess_mapping
from core.client import Client
from core.tables import read_table
from harness.datasets import find_datasets
from tests.support.apptest import by_label, no_exception, page, plain, run_label_page, shown, texts

pytestmark = pytest.mark.usefixtures("app_env")
DATASETS = find_datasets()
needs_datasets = pytest.mark.skipif(
    DATASETS is None, reason="the labelled datasets (../shared/datasets) are absent"
)


def politeness(rows: int) -> pd.DataFrame:
    """The first rows of the Wikipedia politeness corpus: its id, its request and its normalised score."""
    assert DATASETS is not None
    frame = pd.read_csv(DATASETS / "stanford_politeness" / "wikipedia.annotated.csv", dtype=str)
    return frame[["Id", "Request", "Normalized Score"]].head(rows)


@needs_datasets
def test_a_headerless_txt_imports_every_row_with_its_id_and_exports_it(
    client: Client, draft: str, tmp_path: Path
) -> None:
    frame = politeness(30)
    data = frame.to_csv(sep="\t", index=False, header=False).encode()
    at = page("samples", draft)
    at.run()
    at.file_uploader(key="samples_upload").set_value(("politeness.txt", data, "text/plain"))
    at.run()
    no_exception(at)
    assert by_label(at.radio, "First row").value == "data (no header row)"  # proposed from the data
    assert "30 row(s) in politeness.txt." in shown(at.caption)  # the file name as read
    assert by_label(at.selectbox, "Text column").value == "column 2"
    assert by_label(at.selectbox, "Id column").value == "column 1"  # its values are ids: proposed
    assert any("30 row(s) read, 0 unreadable" in t for t in texts(at.markdown)), texts(at.markdown)
    if scales := [r for r in at.radio if r.label == "Scale"]:  # the scores fit more than one: picked
        scales[0].set_value(scales[0].options[0]).run()
    at.button(key="samples_import").click()
    at.run()
    no_exception(at)
    assert any("Stored 30 of 30 rows." in t for t in texts(at.success)), texts(at.success)
    stored = {s.text: s.source_id for s in client.list_samples(draft) if s.source_id is not None}
    assert stored == dict(zip(frame["Request"].str.strip(), frame["Id"], strict=True))

    # The export writes each sample's source_id, and reading it back proposes that column as the id again.
    at.button(key="samples_export").click()
    at.run()
    exported = at.session_state["samples_export_rows"]
    for name, body in (("s.csv", to_csv(exported)), ("s.jsonl", to_jsonl(exported))):
        table = read_table(name, body.encode())
        assert guess_mapping(table).source_id == "source_id"
        back = {str(r["text"]): r["source_id"] for r in table.rows if r["source_id"] not in (None, "")}
        assert back == stored

    # The proposal can be changed: read with its first row as the header, that request names a column.
    at.file_uploader(key="samples_upload").set_value(("politeness.txt", data, "text/plain"))
    at.run()
    by_label(at.radio, "First row").set_value("column names")
    at.run()
    no_exception(at)
    assert "29 row(s) in politeness.txt after its header row." in shown(at.caption)
    assert frame["Request"][0] in by_label(at.selectbox, "Text column").options


def test_a_file_of_another_kind_is_refused_on_the_page_saying_why(draft: str) -> None:
    at = page("samples", draft)
    at.run()
    at.file_uploader(key="samples_upload").set_value(
        ("ratings.xlsx", b"PK\x03\x04", "application/octet-stream")
    )
    at.run()
    no_exception(at)
    errors = texts(at.error)
    assert any("ratings.xlsx is a .xlsx file" in e and "save it as CSV" in e for e in errors), errors
    assert [b for b in at.button if b.key == "samples_import"] == []  # nothing to import


@needs_datasets
def test_the_pool_takes_a_one_text_a_line_file(client: Client, draft: str) -> None:
    requests = [t.replace("\n", " ").strip() for t in politeness(12)["Request"]]
    at = page("label", draft)
    run_label_page(at)
    at.file_uploader(key="pool_upload").set_value(
        ("requests.txt", "\n".join(requests).encode(), "text/plain")
    )
    at.run()
    no_exception(at)
    assert by_label(at.radio, "First row").value == "data (no header row)"
    assert "12 text(s) to import from column 1." in texts(at.caption)
    at.button(key="pool_import").click()
    at.run()
    no_exception(at)
    assert sorted(p.text for p in client.list_pool(draft)) == sorted(requests)


def test_batch_scoring_reads_a_headerless_tab_separated_file(trained: str) -> None:
    rows = [
        ("Dear colleague, would you kindly review the attached report at your convenience?", "4.5"),
        ("lol see ya dude", "1.2"),
        ("", "3"),  # no text: listed, not scored
    ]
    data = "".join(f"{a}\t{b}\n" for a, b in rows).encode()
    at = page("score", trained)
    at.run()
    at.file_uploader(key="batch_upload").set_value(("texts.tsv", data, "text/tab-separated-values"))
    at.run()
    no_exception(at)
    at.button(key="batch_go").click()
    at.run()
    no_exception(at)
    out = at.session_state["batch_out"][1]
    assert list(out.columns) == ["column 1", "column 2", "formality", "sentiment"]
    assert out["column 1"][0] == rows[0][0]  # the first row is scored, not taken for column names
    assert out["formality"][0] > out["formality"][1] and out["formality"].isna().tolist() == [
        False,
        False,
        True,
    ]
    assert [(r.line, r.reason) for r in at.session_state["batch_out"][2]] == [(3, "no text in column 1")]


def test_samples_import_of_an_empty_file_says_what_to_upload(draft: str) -> None:
    at = page("samples", draft)
    at.run()
    at.file_uploader(key="samples_upload").set_value(("empty.csv", b"", "text/csv"))
    at.run()
    no_exception(at)
    shown = texts(at.error) + texts(at.warning) + texts(at.info) + texts(at.markdown)
    # Any columns import now (the analyst picks them), so the message asks for a header row, not given names.
    assert any("empty" in s.lower() and "header row" in s for s in shown), shown
    plain(shown)
