"""Every row of an import accounted for through `core`, against the real service: a file read by
`core.tables`, its rows imported with `Client.import_samples`. The file's lines = the header's + the rows' +
the refused records' + the blank ones; the rows = stored + duplicates of stored samples + errors; and the
model gains exactly `stored` samples."""

from __future__ import annotations

import csv
import io

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.client import Client
from core.tables import read_table
from tests.support.client import Service, formality_rows, make_draft


def test_duplicates_are_reported_apart_from_stored_rows(client: Client, service: Service) -> None:
    """A file holding rows identical to stored samples, and a row twice: the report separates them, so
    `stored` is what the model gained (it said 731 where 726 were stored)."""
    handle = make_draft(client, service.handle("dups"), samples=False)
    first = client.import_samples(handle, formality_rows()[:4])
    assert first.stored == 4 and first.duplicates == []
    fresh = {"trait": "formality", "text": "With kind regards, the board.", "quality": 1.0}
    rows = [*formality_rows()[2:6], fresh, fresh]  # rows 0-1 stored before, row 5 repeats row 4
    report = client.import_samples(handle, rows, batch_size=3)  # row 5 in another batch than row 4
    assert [d.index for d in report.duplicates] == [0, 1, 5]
    assert report.duplicates[2].id == report.ids[4]  # the sample it repeats
    assert report.stored == 3 and report.total == report.stored + len(report.duplicates) + len(report.errors)
    assert client.get_model(handle).sample_count == 4 + report.stored
    # Within one request too: the service lists the positions that stored nothing.
    again = client.import_samples(handle, [fresh, fresh, formality_rows()[7]])
    assert [d.index for d in again.duplicates] == [0, 1] and again.stored == 1


TEXT_CHARS = "abcdefgh KLM éü’…0123456789.,;!?'\"\t-"


@st.composite
def published_file(draw: st.DrawFn) -> bytes:
    """`id<TAB>rating<TAB>text` lines as published (no CSV quoting): quotes, tabs and commas inside texts,
    repeated lines, blank lines, CRLF or LF, UTF-8 with a BOM or Windows-1252."""
    texts = draw(st.lists(st.text(alphabet=TEXT_CHARS, min_size=1, max_size=30), min_size=2, max_size=12))
    lines = [f"{i}\t{draw(st.sampled_from([-1, 0, 1]))}\t{t}" for i, t in enumerate(texts)]
    lines += draw(st.lists(st.sampled_from(lines), max_size=3))  # duplicates
    lines.insert(draw(st.integers(1, len(lines))), "")
    text = draw(st.sampled_from(["\n", "\r\n"])).join(lines) + "\n"
    if draw(st.booleans()):
        return b"\xef\xbb\xbf" + text.encode()
    return text.encode("cp1252", errors="replace")


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=published_file())
def test_a_published_file_imports_with_every_line_accounted_for(
    data: bytes, client: Client, service: Service
) -> None:
    table = read_table("ratings.tsv", data)
    assert table.unaccounted_lines() == 0
    handle = make_draft(client, service.handle("published"), samples=False)
    text, rating = table.columns[2], table.columns[1]
    rows = [{"trait": "formality", "text": r[text], "quality": (int(r[rating]) + 1) / 2} for r in table.rows]
    report = client.import_samples(handle, rows, strict=False)  # a blank text is a refused row
    assert report.total == len(table.rows) == report.stored + len(report.duplicates) + len(report.errors)
    assert client.get_model(handle).sample_count == report.stored
    distinct = {(r["text"].strip(), r["quality"]) for r in rows if r["text"].strip()}
    assert report.stored == len(distinct)


def test_a_csv_record_over_several_lines_is_one_sample(client: Client, service: Service) -> None:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(
        [["text", "quality"], ["Dear Sir,\nplease find the report attached.", "1"], ["hey u", "0"]]
    )
    table = read_table("two.csv", out.getvalue().encode())
    assert table.multiline() == [(2, 3)] and table.unaccounted_lines() == 0
    handle = make_draft(client, service.handle("multiline"), samples=False)
    rows = [{"trait": "formality", "text": r["text"], "quality": float(r["quality"])} for r in table.rows]
    assert client.import_samples(handle, rows).stored == 2


def test_pool_and_evaluation_imports_name_the_texts_that_added_nothing(
    client: Client, service: Service
) -> None:
    """The pool and the evaluation set keep one copy of a text (item): the answer says which of those sent
    added nothing, so every text sent is added, a duplicate, or (the pool) left out as an evaluation text."""
    handle = make_draft(client, service.handle("pooldups"), samples=False)
    held = "To whom it may concern: the policy changed."
    items: list[dict[str, object]] = [
        {"trait": "formality", "text": held, "quality": 1.0},
        {"trait": "formality", "text": "sup", "quality": 0.0},
    ]
    first = client.add_evaluation_items(handle, items)
    assert first.added == 2 and first.duplicates == []
    again = client.add_evaluation_items(handle, [items[1], {**items[1], "text": "yo"}, items[1]])
    assert again.added == 1 and again.duplicates == [0, 2]
    client.import_pool(handle, ["one text", "two texts"])
    texts = ["two texts", "three texts", held, "three texts", "four texts"]
    report = client.import_pool(handle, texts, batch_size=2)  # "three texts" again in the next batch
    assert report.duplicates == [0, 3] and report.in_evaluation_set == 1 and report.added == 2
    assert report.added + len(report.duplicates) + report.in_evaluation_set == len(texts)
