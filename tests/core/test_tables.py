"""Reading tables from files as people publish them (core.tables), on the real published datasets: their CSVs
as they are, and copies in the other formats, with and without a header row, written to a temp dir."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from core.tables import (
    Refusal,
    UnreadableFile,
    first_row_is_data,
    format_problem,
    read_file,
    read_table,
    text_column,
)
from harness.datasets import find_datasets

DATASETS = find_datasets()
needs_datasets = pytest.mark.skipif(
    DATASETS is None, reason="the labelled datasets (../shared/datasets) are absent"
)
FILES = (
    "stanford_politeness/wikipedia.annotated.csv",
    "newssd_eng_subjectivity/test.csv",  # sentences with line breaks inside their quotes
    "convabuse/ConvAbuseEMNLPvalid.csv",  # 143 columns, many empty cells
)


def published(name: str) -> Path:
    assert DATASETS is not None
    return DATASETS / name


def expected(name: str) -> pd.DataFrame:
    """The file as pandas reads it: the independent count of its rows and columns."""
    return pd.read_csv(published(name), dtype=str, keep_default_na=False)


@needs_datasets
@pytest.mark.parametrize("name", FILES)
def test_a_published_csv_is_read_with_its_header_and_every_row(name: str) -> None:
    frame = expected(name)
    table = read_file(published(name))
    assert (table.header, table.first_row_is_data) == (True, False)
    assert table.columns == list(frame.columns)
    assert table.problems == [] and table.total == len(table.rows) == len(frame)
    assert table.frame().fillna("").equals(frame)


@needs_datasets
def test_each_row_keeps_the_line_it_starts_on_across_quoted_line_breaks() -> None:
    name = "newssd_eng_subjectivity/test.csv"
    frame = expected(name)
    spans = [1 + sum(cell.count("\n") for cell in row) for row in frame.itertuples(index=False)]
    starts = [2 + sum(spans[:i]) for i in range(len(spans))]  # line 1 is the header
    assert max(spans) > 1  # the file has records over several lines
    assert read_file(published(name)).lines == starts


@needs_datasets
@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize(
    ("suffix", "sep", "note"),
    [
        (".csv", ",", None),
        (".tsv", "\t", "Read as tab-separated values."),
        (".txt", "\t", "Read as tab-separated values."),
        (".txt", ";", "Read as semicolon-separated values."),
        (".csv", "|", "Read as pipe-separated values."),
    ],
)
def test_a_copy_without_its_header_row_is_read_whole(
    tmp_path: Path, name: str, suffix: str, sep: str, note: str | None
) -> None:
    frame = expected(name)
    for header in (True, False):
        copy = tmp_path / f"{'with' if header else 'without'}-header{suffix}"
        frame.to_csv(copy, sep=sep, index=False, header=header)
        table = read_file(copy)
        assert table.header is header and table.first_row_is_data is not header
        assert table.total == len(table.rows) == len(frame) and table.problems == []
        assert table.lines[0] == (2 if header else 1)
        names = list(frame.columns) if header else [f"column {i}" for i in range(1, frame.shape[1] + 1)]
        assert table.columns == names
        assert [table.rows[0][c] or "" for c in names] == list(frame.iloc[0])  # the first row is not lost
        assert (note in table.notes) if note else not any("separated" in n for n in table.notes)
    # The reader's answer can be overruled: the headerless copy read as if its first row named the columns.
    overruled = read_file(copy, header=True)
    assert overruled.columns[:2] == [str(v).strip() or "column 1" for v in frame.iloc[0][:2]]
    assert overruled.total == len(frame) - 1


@needs_datasets
@pytest.mark.parametrize("name", FILES)
def test_json_arrays_and_json_lines(tmp_path: Path, name: str) -> None:
    frame = expected(name)
    array, lines = tmp_path / "rows.json", tmp_path / "rows.jsonl"
    frame.to_json(array, orient="records", force_ascii=False)
    frame.to_json(lines, orient="records", lines=True, force_ascii=False)
    for path in (array, lines):
        table = read_file(path)
        assert table.columns == list(frame.columns) and table.first_row_is_data is None
        assert table.total == len(table.rows) == len(frame) and table.problems == []
        assert table.frame().equals(frame)
    assert read_file(lines).lines == list(range(1, len(frame) + 1))


@needs_datasets
def test_a_text_file_of_one_text_a_line() -> None:
    frame = expected("stanford_politeness/wikipedia.annotated.csv")
    texts = [t.replace("\n", " ") for t in frame["Request"][:200]]
    table = read_table("requests.txt", "\n".join(texts).encode())
    assert "No delimiter found: one value a line." in table.notes
    assert table.columns == ["column 1"] and [r["column 1"] for r in table.rows] == texts
    named = read_table("requests.txt", ("text\n" + "\n".join(texts)).encode())
    assert named.header and named.columns == ["text"] and named.total == 200


def test_the_analyst_s_headerless_tab_separated_text_file() -> None:
    """The first row is a text and a number where column names would be: a row of data, not the header."""
    data = (
        "How sweet to wait on a subway platform without a single announcement for forty minutes\t1.35\n"
        "Thank you so much for holding the door, that was kind\t4.2\n"
        "ok\t3\n"
    )
    table = read_table("ratings.txt", data.encode())
    assert not table.header and table.columns == ["column 1", "column 2"]
    assert table.rows[0] == {"column 1": data.split("\t")[0], "column 2": "1.35"}
    assert table.lines == [1, 2, 3] and table.total == 3
    assert text_column(table) == "column 1"
    assert any("The first row reads as data" in n for n in table.notes)


def test_a_tab_separated_lexicon_with_lists_of_ratings_splits_on_its_tabs() -> None:
    """A published lexicon as it comes: a word, its mean rating, their spread and the raters' ratings as a
    list, tab-separated, no header, CRLF. Every line also holds nine commas, and the csv module's sniffer
    (which prefers the comma) read ten columns of cut-up values: "$: -1.5 0.8 [-1" as the text."""
    rows = [
        ("$:", "-1.5", "0.80623", "[-1, -1, -1, -1, -3, -1, -3, -1, -2, -1]"),
        ("abandon", "-1.9", "0.53852", "[-2, -2, -2, -1, -2, -2, -3, -2, -1, -2]"),
        ("kind", "2.4", "0.66332", "[2, 3, 3, 2, 2, 1, 3, 3, 2, 3]"),
        ("meh", "-0.3", "0.45826", "[0, 0, -1, 0, 0, -1, 0, 0, 0, -1]"),
        ("so-so", "0.0", "0.44721", "[0, 1, 0, 0, -1, 0, 0, 0, 0, 0]"),
    ]
    data = "".join("\t".join(r) + "\r\n" for r in rows).encode()
    for name in ("lexicon.txt", "lexicon.tsv"):
        table = read_table(name, data)
        assert table.columns == ["column 1", "column 2", "column 3", "column 4"], name
        assert [tuple(r.values()) for r in table.rows] == rows and not table.problems
        assert text_column(table) == "column 1"  # the words, not the longer lists of ratings
    comma = read_table("ratings.csv", b'text,score\n"Thanks, truly",4\n"No.\tNever",1\n"Fine, ok",3\n')
    assert comma.columns == ["text", "score"] and comma.rows[1] == {"text": "No.\tNever", "score": "1"}


def test_the_first_row_is_compared_with_the_rows_under_it() -> None:
    texts = [f"a long enough text number {i}, written as people write" for i in range(6)]
    labels = ["OBJ", "SUBJ", "OBJ", "SUBJ", "OBJ", "OBJ"]
    rows = [[t, label] for t, label in zip(texts, labels, strict=True)]
    assert first_row_is_data(rows)  # a text over texts, a label over labels
    assert not first_row_is_data([["Sentence", "Label"], *rows])  # names over them
    # A survey's question is long, but the answers under it are a few repeated values: a header.
    answers = [["yes"], ["no"], ["yes"], ["yes"], ["no"], ["yes"]]
    assert not first_row_is_data([["How polite was the request, on the whole?"], *answers])
    assert not first_row_is_data([["score"], ["1"], ["2"]]) and first_row_is_data([["0.5"], ["1"], ["2"]])


def test_every_record_not_read_is_listed_with_its_line() -> None:
    data = (
        b"trait,text,quality\n"  # 1
        b'formality,"say ""hi""",1\n'  # 2
        b"formality,too,1,surplus\n"  # 3: one value too many
        b"formality,a trailing delimiter,1,\n"  # 4: an empty value past the header is no value
        b'formality,"stray"quote,0\n'  # 5: read as Excel reads it
        b"\n"  # 6: blank, not a record
        b'formality,"never closed,1\n'  # 7-8: the quote swallows the rest of the file
        b"formality,lost,0\n"
    )
    table = read_table("s.csv", data)
    assert table.lines == [2, 4, 5]
    assert [r["text"] for r in table.rows] == ['say "hi"', "a trailing delimiter", "strayquote"]
    assert table.problems == [
        Refusal(3, "1 more value(s) than the header has columns"),
        Refusal(7, 'a quote (") opened here is never closed, so lines 7–8 read as one value: close it', 2),
    ]
    assert table.total == 5 and table.blank_lines == 1 and table.unaccounted_lines() == 0


def test_json_problems_are_listed() -> None:
    lines = [json.dumps({"text": "a", "quality": 0.5}), "not json", "", json.dumps([1]), '"a string"']
    table = read_table("s.jsonl", "\n".join(lines).encode())
    assert table.lines == [1] and [p.line for p in table.problems] == [2, 4, 5]
    assert table.problems[1].reason == "not an object but list" and table.total == 4
    broken = read_table("s.json", b'[{"text": "a"},\n {"text": }]')
    assert broken.rows == [] and broken.problems[0].line == 2


def test_files_of_other_kinds_are_refused_saying_why() -> None:
    problem = format_problem("ratings.xlsx")
    assert problem is not None and "ratings.xlsx is a .xlsx file" in problem and "save it as CSV" in problem
    assert ".tsv" in problem and ".jsonl" in problem
    assert format_problem("notes") is not None and format_problem("DATA.TSV") is None
    with pytest.raises(UnreadableFile, match="ratings.xlsx"):
        read_table("ratings.xlsx", b"PK\x03\x04")


def test_a_file_that_is_not_utf8_is_read_as_excel_writes_it() -> None:
    table = read_table("s.csv", "text;quality\nCafé crème, s’il vous plaît;1\n".encode("cp1252"))
    assert table.rows == [{"text": "Café crème, s’il vous plaît", "quality": "1"}]
    assert table.notes[0].startswith("Not UTF-8: read as Windows-1252")
