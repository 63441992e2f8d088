"""Reading labelled files and mapping their labels to quality (app.samples.mapping): plain Python."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from app.samples.files import to_csv, to_jsonl
from app.samples.mapping import (
    LabelScale,
    Mapping,
    guess_mapping,
    guess_raters,
    guess_scale,
    label_span,
    map_rows,
    rules_summary,
    scale_candidates,
    threshold_neutral_default,
    which_scale,
)
from core.tables import Refusal, read_file, read_table
from harness.datasets import find_datasets

DATASETS = find_datasets()

SAMPLES = Mapping(text="text", label="quality", trait_column="trait")


def test_csv_rows_keep_their_file_lines_across_blank_lines_and_quoted_line_breaks() -> None:
    data = (
        b"trait,text,quality,source_url\n"  # line 1
        b"formality,Dear sir,1,https://example.org\n"  # 2
        b"\n"  # 3: blank
        b'formality,"two\nlines",0,\n'  # 4-5
        b"\n"  # 6: blank
        b"formality,,1,\n"  # 7: no text
        b"formality,text,high,\n"  # 8: not a number
        b"formality,too,1,,surplus\n"  # 9: more values than columns
    )
    table = read_table("s.csv", data)
    assert table.columns == ["trait", "text", "quality", "source_url"]
    assert table.lines == [2, 4, 7, 8]
    assert table.problems == [Refusal(9, "1 more value(s) than the header has columns")]
    mapped = map_rows(table, Mapping(**{**SAMPLES.__dict__, "source_url": "source_url"}))
    assert mapped.samples == [
        {"trait": "formality", "text": "Dear sir", "quality": 1.0, "source_url": "https://example.org"},
        {"trait": "formality", "text": "two\nlines", "quality": 0.0},
    ]
    assert mapped.lines == [2, 4]
    assert mapped.refused == [Refusal(7, "no text"), Refusal(8, "label 'high' is not a number")]


def test_jsonl_lines_arrays_and_the_delimiter() -> None:
    lines = [json.dumps({"trait": "t", "text": "a", "quality": 0.5}), "not json", "", json.dumps([1])]
    table = read_table("s.jsonl", "\n".join(lines).encode())
    assert table.lines == [1] and [p.line for p in table.problems] == [2, 4]
    assert table.problems[1].reason == "not an object but list"
    array = read_table("s.json", json.dumps([{"trait": "t", "text": "b", "quality": 1}]).encode())
    assert map_rows(array, SAMPLES).samples == [{"trait": "t", "text": "b", "quality": 1.0}]
    semi = read_table("s.csv", b"trait;text;quality\nformality;Dear sir, thanks;1\n")
    assert semi.notes == ["Read as semicolon-separated values."]
    assert map_rows(semi, SAMPLES).samples[0]["text"] == "Dear sir, thanks"
    assert "the file is empty" in read_table("s.csv", b"").problems[0].reason


def test_export_round_trips_through_the_reader() -> None:
    samples = [{"id": 1, "trait": "t", "text": 'say "hi", ok', "quality": 1.0, "provenance": "authored"}]
    again = map_rows(read_table("x.csv", to_csv(samples).encode()), SAMPLES)
    assert again.samples == [{"trait": "t", "text": 'say "hi", ok', "quality": 1.0}]
    assert map_rows(read_table("x.jsonl", to_jsonl(samples).encode()), SAMPLES).samples == again.samples


# A file shaped like the Stanford politeness CSV: no trait column, a `Request` text and a normalised score.
STANFORD = "Id,Request,Normalized Score\n" + "".join(
    f"{i},Request number {i},{score}\n" for i, score in enumerate([-1.5, -0.8, -0.2, 0.0, 0.3, 0.9, 1.2, 2.0])
)


def test_quantiles_keep_the_top_and_bottom_and_leave_out_the_middle() -> None:
    table = read_table("stanford.csv", STANFORD.encode())
    mapping = Mapping(
        text="Request", label="Normalized Score", trait="politeness", rule="quantiles", share=0.25
    )
    mapped = map_rows(table, mapping)
    by_text = {s["text"]: s["quality"] for s in mapped.samples}
    assert by_text == {
        "Request number 0": 0.0,
        "Request number 1": 0.0,
        "Request number 6": 1.0,
        "Request number 7": 1.0,
    }
    assert mapped.left_out == 4 and mapped.refused == []
    assert mapped.counts() == [
        {"trait": "politeness", "negative": 2, "neutral": 0, "positive": 2, "graded": 0}
    ]
    assert mapped.lines == [2, 3, 8, 9]

    flipped = map_rows(table, Mapping(**{**mapping.__dict__, "higher_is_positive": False}))
    assert {s["text"]: s["quality"] for s in flipped.samples}["Request number 7"] == 0.0


def test_threshold_and_as_is() -> None:
    table = read_table("stanford.csv", STANFORD.encode())
    mapped = map_rows(
        table, Mapping(text="Request", label="Normalized Score", trait="p", rule="threshold", threshold=0.0)
    )
    assert [s["quality"] for s in mapped.samples] == [0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    as_is = map_rows(table, Mapping(text="Request", label="Normalized Score", trait="p"))
    assert [s["quality"] for s in as_is.samples] == [0.0, 0.3, 0.9]
    assert as_is.refused[0] == Refusal(
        2, "label -1.5 is outside 0–1: map it from its scale or with a threshold"
    )
    assert as_is.counts() == [{"trait": "p", "negative": 2, "neutral": 0, "positive": 1, "graded": 2}]


def test_quantiles_per_trait_and_ties_left_out() -> None:
    rows = (
        "trait,text,score\n"
        + "".join(f"a,a{i},{i}\n" for i in range(4))
        + "".join(f"b,b{i},{100 + i}\n" for i in range(4))
    )
    mapped = map_rows(read_table("t.csv", rows.encode()), Mapping("text", "score", "trait", rule="quantiles"))
    assert mapped.counts() == [
        {"trait": "a", "negative": 1, "neutral": 0, "positive": 1, "graded": 0},
        {"trait": "b", "negative": 1, "neutral": 0, "positive": 1, "graded": 0},
    ]
    ties = "text,score\n" + "".join(f"t{i},1\n" for i in range(5))
    tied = map_rows(read_table("t.csv", ties.encode()), Mapping("text", "score", trait="x", rule="quantiles"))
    assert tied.samples == [] and tied.left_out == 5
    with pytest.raises(ValueError, match="at most 0.5"):
        map_rows(
            read_table("t.csv", ties.encode()),
            Mapping("text", "score", trait="x", rule="quantiles", share=0.7),
        )


def test_defaults_follow_the_data() -> None:
    """`id,score,review` has its review as the text; a -3..+3.6 rating is a -4..+4 scale."""
    rows = [("213_32", "-3", "Broke after a week, useless."), ("214_1", "3.6", "Great kettle, boils fast.")]
    table = read_table(
        "r.csv", ("id,score,review\n" + "".join(f'{a},{b},"{c}"\n' for a, b, c in rows)).encode()
    )
    guess = guess_mapping(table)
    assert (guess.text, guess.label, guess.trait_column) == ("review", "score", None)
    scale = guess_scale(table, "score")
    assert scale == LabelScale("scale", -4.0, 4.0) and scale.middle == 0.0
    # The workbench's own files: the `text` column, a quality as is.
    own = read_table("s.csv", b"trait,text,quality\nformality,yo,0\nformality,Dear Sir,1\n")
    assert (guess_mapping(own).text, guess_mapping(own).label) == ("text", "quality")
    assert guess_scale(own, "quality").rule == "as_is"
    # Star ratings: 1..5, middle 3; a numbered series of raters is not the label when a summary exists.
    stars = read_table("x.csv", b"Id,Request,Score1,Score2,Normalized Score\n7,Could you help?,2,5,0.4\n")
    assert guess_mapping(stars).label == "Normalized Score" and guess_mapping(stars).text == "Request"
    assert guess_scale(read_table("x.csv", b"text,stars\na,1\nb,5\n"), "stars") == LabelScale("scale", 1, 5)


def test_the_scale_rule_keeps_graded_labels_and_refuses_what_is_off_the_scale() -> None:
    table = read_table("stanford.csv", (STANFORD + "9,Off the scale,7\n").encode())
    mapping = Mapping(text="Request", label="Normalized Score", trait="p", rule="scale", low=-4, high=4)
    mapped = map_rows(table, mapping)
    assert [s["quality"] for s in mapped.samples] == [0.3125, 0.4, 0.475, 0.5, 0.5375, 0.6125, 0.65, 0.75]
    assert mapped.refused == [Refusal(10, "label 7 is outside the scale -4 to 4")]
    # The rating 0 lands on quality 0.5: neutral, counted toward neither pole (core.contract.pole_of).
    assert mapped.counts() == [{"trait": "p", "negative": 3, "neutral": 1, "positive": 4, "graded": 8}]
    flipped = map_rows(table, Mapping(**{**mapping.__dict__, "higher_is_positive": False}))
    assert flipped.samples[0]["quality"] == 0.6875


def test_traits_are_named_by_key_or_name_and_others_refused_with_the_model_s_keys() -> None:
    table = read_table("t.csv", b"trait,text,quality\nFormality,a,1\nformality,b,0\nTone,c,1\n")
    mapped = map_rows(table, Mapping("text", "quality", "trait"), {"formality": "formality"})
    assert [s["trait"] for s in mapped.samples] == ["formality", "formality"]
    assert mapped.refused == [Refusal(4, "unknown trait 'Tone' (this model's: formality)")]


# A file shaped like the politeness CSV's raters: Score1..Score3 on 1-25, TurkId1..TurkId3 beside them.
RATERS = (
    "Id,Request,Score1,Score2,Score3,TurkId1,TurkId2,TurkId3,Normalized Score\n"
    "1,Could you please have a look?,25,19,,A1,A2,,1.2\n"  # the third rater did not rate it
    "2,Fix it now.,1,7,13,A2,A3,A1,-1.1\n"
    "3,Why would you do that?,13,x,4,A1,A2,bad id!,-0.4\n"  # a rating that is no number, a bad rater id
)


def test_several_raters_become_one_vote_each_through_the_same_scale() -> None:
    table = read_table("raters.csv", RATERS.encode())
    raters = guess_raters(table)
    assert raters == [("Score1", "TurkId1"), ("Score2", "TurkId2"), ("Score3", "TurkId3")]
    assert guess_scale(table, *(c for c, _ in raters)) == LabelScale("scale", 1, 25)  # middle 13
    mapping = Mapping("Request", "Normalized Score", trait="politeness", rule="scale", low=1, high=25,
                      raters=tuple(raters))  # fmt: skip
    mapped = map_rows(table, mapping)
    votes = [(s["text"][:9], s["annotator"], s["quality"]) for s in mapped.samples]
    assert votes == [
        ("Could you", "A1", 1.0), ("Could you", "A2", 0.75),
        ("Fix it no", "A2", 0.0), ("Fix it no", "A3", 0.25), ("Fix it no", "A1", 0.5),
        ("Why would", "A1", 0.5),
    ]  # fmt: skip
    assert mapped.refused == [
        Refusal(4, "label 'x' (Score2) is not a number"),
        Refusal(4, "Score3: rater id 'bad id!' is not a name"),
    ]
    summary = mapped.votes()
    assert (summary["texts"], summary["votes"], summary["raters"]) == (3, 6, 3)
    assert summary["votes_per_text"] == (1, 2, 3) and summary["by_rater"][0] == ("A1", 3)
    assert mapped.texts_with_votes(1)[0]["by rater"] == "A1: 1, A2: 0.75"
    # Without rater columns each label column is a rater, named after it.
    by_column = map_rows(
        table, Mapping(**{**mapping.__dict__, "raters": (("Score1", None), ("Score2", None))})
    )
    assert {s["annotator"] for s in by_column.samples} == {"Score1", "Score2"}


def test_a_rater_column_without_values_is_a_mapping_error() -> None:
    table = read_table("e.csv", b"Id,Request,Score1,Blank\n1,Hello there,4,\n2,Hi,9,\n")
    mapping = Mapping(
        "Request", "Score1", trait="t", rule="scale", low=1, high=25, raters=(("Score1", "Blank"),)
    )
    with pytest.raises(ValueError, match="The rater column 'Blank' \\(beside 'Score1'\\) has no values"):
        map_rows(table, mapping)


def test_a_row_no_rater_rated_is_refused_not_dropped() -> None:
    table = read_table("r.csv", (RATERS + "4,Nobody rated this one,,,,,,,0.1\n").encode())
    mapping = Mapping("Request", "Normalized Score", trait="politeness", rule="scale", low=1, high=25,
                      raters=tuple(guess_raters(table)))  # fmt: skip
    assert Refusal(5, "no label in any rater's column") in map_rows(table, mapping).refused


def test_chosen_extra_columns_are_kept_as_each_text_s_metadata() -> None:
    rows = "score,review,community,year\n-3,Broke after a week.,kitchen,2019\n3.6,Great kettle.,, \n"
    table = read_table("r.csv", rows.encode())
    mapping = Mapping(
        "review", "score", trait="quality", rule="scale", low=-4, high=4, keep=("community", "year")
    )
    samples = map_rows(table, mapping).samples
    # As the file has them (a CSV cell is text: "007" stays "007"); a blank cell left out, and a row with
    # nothing left has no metadata.
    assert [s.get("metadata") for s in samples] == [{"community": "kitchen", "year": "2019"}, None]
    # The Samples page's export writes it: an object in JSONL, its JSON in a CSV cell.
    assert json.loads(to_jsonl(samples).splitlines()[0])["metadata"] == {
        "community": "kitchen",
        "year": "2019",
    }
    assert (
        json.loads(read_table("s.csv", to_csv(samples).encode()).rows[0]["metadata"])["community"]
        == "kitchen"
    )


def test_the_id_column_is_proposed_and_kept_as_source_id() -> None:
    rows = "id,score,review\n213_32,-3,Broke after a week.\n17,3.6,Great kettle.\n,1,No id here.\n"
    table = read_table("r.csv", rows.encode())
    guess = guess_mapping(table)
    assert guess.source_id == "id"
    mapping = Mapping("review", "score", trait="quality", rule="scale", low=-4, high=4, source_id="id")
    assert [s.get("source_id") for s in map_rows(table, mapping).samples] == ["213_32", "17", None]
    too_long = read_table("r.csv", f"id,score,review\n{'x' * 201},1,Long id.\n".encode())
    assert map_rows(too_long, mapping).refused == [
        Refusal(2, "id 'xxxxxxxxxxxxxxxxxxxx'… has 201 characters; at most 200")
    ]
    # The workbench's own export: `source_id` is the file's id, not `id` (the sample's id in the service).
    exported = to_csv([{"id": 5, "trait": "t", "text": "a", "quality": 1.0, "source_id": "213_32"}])
    assert guess_mapping(read_table("x.csv", exported.encode())).source_id == "source_id"


@pytest.mark.skipif(DATASETS is None, reason="the labelled datasets (../shared/datasets) are absent")
def test_a_headerless_published_file_maps_every_row_it_holds(tmp_path: Path) -> None:
    """The politeness corpus as a tab-separated .txt without its header row: its first request is a sample,
    its Id is kept, and samples + refused + left out are the file's rows."""
    assert DATASETS is not None
    frame = pd.read_csv(DATASETS / "stanford_politeness" / "wikipedia.annotated.csv", dtype=str)
    frame.loc[3, "Request"] = ""  # a row without its text
    copy = tmp_path / "politeness.txt"
    frame.to_csv(copy, sep="\t", index=False, header=False)
    table = read_file(copy)
    guess = guess_mapping(table)
    assert (guess.text, guess.label) == ("column 3", "column 14")  # Request, Normalized Score
    mapping = Mapping(guess.text, guess.label, trait="politeness", rule="quantiles", source_id="column 2")
    mapped = map_rows(table, mapping)
    assert mapped.samples[0]["source_id"] == frame["Id"][0] and mapped.lines[0] == 1
    assert mapped.refused == [Refusal(4, "no text")]
    assert len(mapped.samples) + len(mapped.refused) + mapped.left_out == table.total == len(frame)


@pytest.mark.parametrize(
    ("ratings", "scales"),
    [
        ((-2.8, 0.0, 2.8), [(-3, 3), (-4, 4)]),  # mean ratings that never reach an end: a guess
        ((-3.0, 1.2, 2.6), [(-3, 3), (-4, 4)]),  # one end reached: still a guess, and it stays symmetric
        ((-3.0, 3.6), [(-4, 4), (-5, 5)]),
        ((1, 3, 5), [(1, 5)]),  # whole stars at both ends name their scale
        ((1.2, 4.6), [(1, 5), (0, 6)]),  # one further out at each end, never across 0
        ((1, 4.6), [(1, 5), (1, 6)]),
        ((0.0, 3.7), [(0, 4), (0, 5)]),  # 0 is an end already: not widened past it
        ((-4.2, -1.5), [(-5, -1), (-6, 0)]),  # all below 0: as far as 0, not past it
        ((0.2, 0.9), [(0, 1)]),  # already a quality: nothing to ask
    ],
)
def test_a_scale_the_labels_fall_short_of_comes_with_the_next_one_out(
    ratings: tuple[float, ...], scales: list[tuple[float, float]]
) -> None:
    table = read_table(
        "r.csv", ("text,rating\n" + "".join(f"t{i},{r}\n" for i, r in enumerate(ratings))).encode()
    )
    found = scale_candidates(guess_scale(table, "rating"), label_span(table, "rating"))
    assert [(c.low, c.high) for c in found] == scales
    assert which_scale(*scales[0], found) == 0 and which_scale(-3.5, 3.5, found) is None


MEANS = "text,rating\n" + "".join(
    f"request {i},{r}\n" for i, r in enumerate([-2.8, -1.2, 0, 0.6, 2.8, 0, 1.4, -0.4], start=1)
)


def test_the_summary_states_every_rule_and_the_neutral_rows() -> None:
    table = read_table("m.csv", MEANS.encode())
    scale = Mapping("text", "rating", trait="p", rule="scale", low=-4, high=4)
    mapped = map_rows(table, scale)
    assert mapped.neutral() == 2
    assert rules_summary(scale, mapped) == "−4..+4 → quality 0..1; middle 0 → 0.5, neutral; 2 rows neutral"
    flipped = Mapping(**{**scale.__dict__, "higher_is_positive": False, "low": 1, "high": 5})
    table_15 = read_table("s.csv", b"text,rating\na,1\nb,3\nc,5\n")
    assert rules_summary(flipped, map_rows(table_15, flipped), "vote") == (
        "1..5 → quality 1..0; middle 3 → 0.5, neutral; 1 vote neutral"
    )
    threshold = Mapping("text", "rating", trait="p", rule="threshold", threshold=0.2)
    assert rules_summary(threshold, map_rows(table, threshold)) == (
        "≥ 0.2 → 1.0 (positive), below → 0.0 (negative); no row neutral"
    )
    middle = Mapping("text", "rating", trait="p", rule="threshold", threshold=0, neutral_at_threshold=True)
    assert rules_summary(middle, map_rows(table, middle)) == (
        "> 0 → 1.0 (positive), < 0 → 0.0 (negative), 0 → 0.5 (neutral); 2 rows neutral"
    )
    assert threshold_neutral_default(LabelScale("scale", -4, 4))
    assert not threshold_neutral_default(LabelScale("scale", 1, 5))
    quantiles = Mapping("text", "rating", trait="p", rule="quantiles", share=0.25)
    assert rules_summary(quantiles, map_rows(table, quantiles)) == (
        "top 25% of each trait's labels → 1.0 (positive), bottom 25% → 0.0 (negative); 4 rows between "
        "left out; no row neutral"
    )
    as_is = read_table("q.csv", b"text,quality\na,0.5\nb,0.9\n")
    plain = Mapping("text", "quality", trait="p")
    assert (
        rules_summary(plain, map_rows(as_is, plain))
        == "label = quality (0..1); 0.5 is neutral; 1 row neutral"
    )


def test_neutral_rows_are_left_out_only_when_asked_and_each_says_why() -> None:
    table = read_table("m.csv", MEANS.encode())
    mapping = Mapping("text", "rating", trait="p", rule="scale", low=-4, high=4, drop_neutral=True)
    mapped = map_rows(table, mapping)
    assert len(mapped.samples) == 6 and mapped.refused == [] and mapped.neutral() == 2
    assert mapped.dropped == [
        Refusal(4, "neutral: label 0 → quality 0.5, neither pole; left out as asked"),
        Refusal(7, "neutral: label 0 → quality 0.5, neither pole; left out as asked"),
    ]
    assert rules_summary(mapping, mapped).endswith("; 2 rows neutral, left out as asked")
    assert mapped.counts() == [{"trait": "p", "negative": 3, "neutral": 0, "positive": 3, "graded": 6}]
