"""Spreadsheet-bound CSV (core/spreadsheet.py): no cell a spreadsheet would run as a formula, and a guarded
file read back by `core.tables` gives every text exactly as exported."""

from __future__ import annotations

import csv
import io
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from app.samples.files import to_csv
from core.spreadsheet import FORMULA_START, guard_cell, unguard_cell
from core.tables import read_table

# Texts that start like formulas (and like our own guard), with quotes, line breaks and delimiters inside.
TEXT = st.lists(
    st.one_of(
        st.sampled_from(
            ["=", "+", "-", "@", "\t", "\r", "'", "''", '"', ",", ";", "\n", "1", "-1", "SUM(A1)"]
        ),
        st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=8),
    ),
    min_size=1,
    max_size=8,
).map("".join)
PLAIN_NUMBER = re.compile(r"[+-]?[0-9.]+([eE][+-]?[0-9]+)?")  # a value a spreadsheet reads, never a formula
NUMBER = st.one_of(
    st.integers(-(10**6), 10**6).map(str), st.floats(allow_nan=False, allow_infinity=False).map(repr)
)


@given(st.text())
@settings(max_examples=300, deadline=None)
def test_unguarding_a_guarded_cell_gives_it_back(text: str) -> None:
    guarded = guard_cell(text)
    assert isinstance(guarded, str) and unguard_cell(guarded) == text
    assert not FORMULA_START.fullmatch(guarded[:1]) or guarded == text


@given(st.lists(TEXT.filter(str.strip), min_size=1, max_size=6))
@settings(max_examples=150, deadline=None)
def test_a_sample_export_round_trips_every_text_and_runs_no_formula(texts: list[str]) -> None:
    samples = [{"id": i, "trait": "tone", "text": t, "quality": 1.0} for i, t in enumerate(texts, 1)]
    exported = to_csv(samples)
    cells = [cell for row in csv.reader(io.StringIO(exported)) for cell in row]
    assert not [
        c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r") and not PLAIN_NUMBER.fullmatch(c)
    ]
    table = read_table("samples.csv", exported.encode())
    assert not table.problems
    assert [row["text"] for row in table.rows] == texts


@given(NUMBER)
@settings(max_examples=100, deadline=None)
def test_a_number_stays_a_number(value: str) -> None:
    assert guard_cell(value) == value
