"""Response models tolerate unknown and open fields; input models reject bad rows."""

from __future__ import annotations

import math

import pydantic
import pytest

from core.client.models import (
    CompareResult,
    LastOperation,
    Model,
    Page,
    SampleInput,
    ScoreResult,
    TraitInput,
    Version,
)


def test_model_accepts_unknown_fields_and_splits_handle() -> None:
    m = Model.model_validate(
        {"handle": "acme.tone", "state": "ready", "traits": ["Formality"], "brand_new_field": {"x": 1}}
    )
    assert (m.namespace, m.name) == ("acme", "tone")
    assert m.model_extra == {"brand_new_field": {"x": 1}}
    assert m.version_tags == [] and m.last_operation is None


def test_page_of_models() -> None:
    page = Page[Model].model_validate({"items": [{"handle": "a.b"}], "limit": 1, "next_cursor": "c1"})
    assert page.items[0].handle == "a.b" and page.next_cursor == "c1"


@pytest.mark.parametrize(
    ("progress", "fraction", "phase"),
    [
        ({"fraction": 0.25, "phase": "embedding", "message": "m"}, 0.25, "embedding"),
        (0.5, 0.5, None),  # a remote service reporting a bare number
        ({"fraction": 7}, 1.0, None),  # clamped
        ("halfway", None, None),
        (None, None, None),
    ],
)
def test_last_operation_progress_shapes(progress: object, fraction: float | None, phase: str | None) -> None:
    op = LastOperation.model_validate({"kind": "train", "status": "running", "progress": progress})
    assert op.fraction == fraction
    assert op.phase == phase


def test_last_operation_error_shapes() -> None:
    error = {"code": "trait_one_pole", "message": "m"}
    op = LastOperation.model_validate({"status": "failed", "error": error})
    assert (op.error_code, op.error_message, op.finished) == ("trait_one_pole", "m", True)
    op = LastOperation.model_validate({"status": "failed", "error": "boom"})
    assert (op.error_code, op.error_message) == (None, "boom")


def test_score_result_helpers() -> None:
    r = ScoreResult.model_validate(
        {
            "handle": "a.b",
            "version_no": 2,
            "scores": [
                {
                    "trait": "formality",
                    "name": "Formality",
                    "score": 0.7,
                    "positive_label": "formal",
                    "negative_label": "casual",
                    "label": "formal",
                    "future": True,
                },
                {"trait": "warmth", "score": 0.1},
            ],
        }
    )
    assert r.as_dict() == {"formality": 0.7, "warmth": 0.1}
    assert r.labels()["formality"] == ("casual", "formal")
    assert r["Formality"] == 0.7 and r["warmth"] == 0.1
    with pytest.raises(
        KeyError, match="no trait 'subjectvity' in this result; its traits .*'formality', 'warmth'"
    ):
        r["subjectvity"]  # a typo names the keys there are


def test_compare_result_sides_and_deltas() -> None:
    c = CompareResult.model_validate(
        {
            "handle": "a.b",
            "version_no": 1,
            "a": {"scores": [{"trait": "t", "score": 0.2}]},
            "b": {"scores": [{"trait": "t", "score": 0.9}]},
            "difference": [{"trait": "t", "name": "T", "delta": 0.7}],
        }
    )
    ra, rb = c.results()
    assert (ra.as_dict(), rb.as_dict(), c.deltas()) == ({"t": 0.2}, {"t": 0.9}, {"t": 0.7})
    assert ra.handle == "a.b"


def test_version_metrics_helpers() -> None:
    metrics = {"traits": {"t": {"roc_auc": 1}}}
    v = Version.model_validate({"version_id": 3, "version_no": 2, "metrics": metrics})
    assert v.label == "v2" and v.trait_metrics == {"t": {"roc_auc": 1}} and v.snapshot is None
    odd = Version.model_validate({"version_id": 1, "version_no": 1, "metrics": {"traits": []}})
    assert odd.trait_metrics == {}


def test_a_version_says_its_embedder_in_words_with_or_without_the_field() -> None:
    compared = {
        "embedder": "mpnet-base-qi8@78c0197b",
        "name": "mpnet-base",
        "candidates": [
            {"embedder": "e5-small-qi8@1571fc98", "name": "e5-small-qint8", "roc_auc": 0.8712},
            {"embedder": "mpnet-base-qi8@78c0197b", "name": "mpnet-base", "roc_auc": 0.9131},
        ],
    }
    v = Version.model_validate({"version_id": 1, "version_no": 1, "embedder": compared})
    assert v.embedder_words == "trained on mpnet-base: out-of-fold 0.91 against 0.87 on e5-small-qint8"
    # A service from before the field's name sends it as `body`: read the same.
    first = Version.model_validate({"version_id": 1, "version_no": 1, "body": compared})
    assert first.embedder == v.embedder and first.embedder_id == "mpnet-base-qi8@78c0197b"
    one = {"embedder": "e5-small-qi8@1571fc98", "name": "e5-small-qint8", "candidates": None}
    left = {**one, "left_out_for_language": [{"embedder": "mpnet-base-qi8@78c0197b", "name": "mpnet-base"}]}
    assert Version.model_validate({"version_id": 1, "version_no": 1, "body": one}).embedder_words == (
        "trained on e5-small-qint8"
    )
    assert Version.model_validate({"version_id": 1, "version_no": 1, "body": left}).embedder_words == (
        "trained on e5-small-qint8 (mpnet-base not tried: most samples are not in a language it reads)"
    )
    # A service from before the field: the id its metrics name; nothing to say when they name none.
    older = Version.model_validate(
        {"version_id": 1, "version_no": 1, "metrics": {"embedder": "hashing-v1-512"}}
    )
    assert older.body is None and older.embedder_words == "trained on hashing-v1-512"
    assert Version.model_validate({"version_id": 1, "version_no": 1, "body": None}).embedder_words == ""


def test_a_version_says_why_its_embedders_were_not_compared_and_on_how_many_samples() -> None:
    """A model whose training may choose its embedder: the version says which embedders were offered but not
    compared and why, in the service's words, and on how many samples compared figures were measured."""
    e5 = {"embedder": "e5-small-qi8@1571fc98", "name": "e5-small-qint8"}
    mpnet = {"embedder": "mpnet-base-qi8@78c0197b", "name": "mpnet-base"}
    short = {
        **e5,
        "candidates": None,
        "not_compared": [mpnet],
        "not_compared_because": "short texts: a median of 5 words, under 8",
        "compared_on": 40,
    }
    assert Version.model_validate({"version_id": 1, "version_no": 1, "body": short}).embedder_words == (
        "trained on e5-small-qint8 (mpnet-base not compared: short texts: a median of 5 words, under 8)"
    )
    # The cheap embedder's lone figure compared nothing and is not said; the reason and an embedder left out
    # for its languages share one parenthesis.
    few = {
        **e5,
        "candidates": [{**e5, "roc_auc": 0.8312}],
        "left_out_for_language": [{"embedder": "minilm-qi8v2@1", "name": "minilm-qint8v2"}],
        "not_compared": [mpnet],
        "not_compared_because": "few labels: 12 on the smallest pole, under 32",
        "compared_on": 30,
    }
    assert Version.model_validate({"version_id": 1, "version_no": 1, "body": few}).embedder_words == (
        "trained on e5-small-qint8 (mpnet-base not compared: few labels: 12 on the smallest pole, under 32; "
        "minilm-qint8v2 not tried: most samples are not in a language it reads)"
    )
    compared = {
        **mpnet,
        "candidates": [{**e5, "roc_auc": 0.87}, {**mpnet, "roc_auc": 0.9131}],
        "compared_on": 1400,
    }
    assert Version.model_validate({"version_id": 1, "version_no": 1, "body": compared}).embedder_words == (
        "trained on mpnet-base: out-of-fold 0.91 against 0.87 on e5-small-qint8 (measured on 1,400 samples)"
    )
    parsed = Version.model_validate({"version_id": 1, "version_no": 1, "body": {**e5, "candidates": None}})
    assert parsed.body is not None
    assert (parsed.body.not_compared, parsed.body.not_compared_because, parsed.body.compared_on) == (
        [],
        None,
        None,
    )


def test_sample_input_coerces_csv_strings_and_blank_urls() -> None:
    s = SampleInput.model_validate({"trait": "t", "text": "  hi  ", "quality": "0.25", "source_url": ""})
    assert (s.text, s.quality, s.source_url) == ("hi", 0.25, None)


@pytest.mark.parametrize(
    "row",
    [
        {"trait": "t", "text": "x", "quality": math.nan},
        {"trait": "t", "text": "x", "quality": math.inf},
        {"trait": "t", "text": "x", "quality": 1.5},
        {"trait": "t", "text": "x", "quality": -0.1},
        {"trait": "t", "text": "x", "quality": True},
        {"trait": "t", "text": "   ", "quality": 0.5},
        {"trait": "t", "text": "x" * 20_001, "quality": 0.5},
        {"trait": "", "text": "x", "quality": 0.5},
        {"trait": "t", "text": "x", "quality": 0.5, "label": "typo field"},
        {"trait": "t", "text": "x"},
    ],
)
def test_sample_input_rejects(row: dict) -> None:
    with pytest.raises(pydantic.ValidationError):
        SampleInput.model_validate(row)


def test_trait_input_rules() -> None:
    t = TraitInput(name="Formality", positive_label="formal", negative_label="casual")
    # What the client sends: a trait without a scale says nothing of one (an older service knows none).
    assert t.model_dump(exclude_none=True) == {
        "name": "Formality",
        "positive_label": "formal",
        "negative_label": "casual",
        "description": "",
        "aggregation": "mean",
    }
    with pytest.raises(pydantic.ValidationError):
        TraitInput(name="F", positive_label="a", negative_label="b", aggregation="median")
    with pytest.raises(pydantic.ValidationError):
        TraitInput.model_validate({"name": "F", "positive_label": "a", "negative_label": "b", "kind": "x"})


def test_null_in_place_of_a_default_means_absent() -> None:
    r = ScoreResult.model_validate({"handle": "a.b", "version_no": 1, "scores": None, "version_tags": None})
    assert r.scores == [] and r.version_tags == []
    m = Model.model_validate({"handle": "a.b", "traits": None, "state": "draft", "description": None})
    assert m.traits == [] and m.description == ""
    with pytest.raises(pydantic.ValidationError):
        Model.model_validate({"handle": None})


def test_sample_input_speaks_the_services_words_for_empty_missing_and_long_fields() -> None:
    from core.client.importing import _pydantic_message

    def message(**row: object) -> str:
        try:
            SampleInput.model_validate(row)
        except pydantic.ValidationError as exc:
            return _pydantic_message(exc)
        raise AssertionError("accepted")

    # An empty grid row: every field named, none as a type error.
    assert message(trait=None, text=None, quality=None) == (
        "trait is missing: give one of the model's trait keys; text is empty; "
        "quality is missing: give a number in [0, 1]"
    )
    assert message(trait="t", text=float("nan"), quality=1.0) == "text is empty"
    assert message(trait="t", text="   ", quality=1.0) == "text is empty"
    long = "  " + "x" * 20_001 + "  "
    assert message(trait="t", text=long, quality=1.0) == "text has 20,001 characters; the limit is 20,000"
    assert SampleInput(trait="t", text="  " + "x" * 20_000 + "    ", quality=1.0).text == "x" * 20_000
    assert message(trait="t", text="ok", quality=True) == "quality must be a number in [0, 1], not a boolean"


def test_addition_results_tolerate_unknown_fields_and_open_shapes() -> None:
    from core.client.results import (
        AnalyzeCommentResult,
        Evaluation,
        EvaluationComparison,
        EvaluationSet,
        Health,
        Threshold,
    )

    # An older or newer service: fields missing where the spec does not promise them, and unknown fields.
    assert Health.model_validate({"status": "ok", "build": "x"}).version is None
    summary = EvaluationSet.model_validate({"total": 3, "traits": {"t": {"positive": 2, "x": 0}}})
    counts = summary.traits["t"]
    assert (summary.handle, counts.positive, counts.negative, counts.model_extra) == (None, 2, 0, {"x": 0})
    ev = Evaluation.model_validate(
        {"items": 4, "traits": {"t": {"roc_auc": None, "f1": {"value": 0.5}, "mcc": {"value": 0.1}}}}
    )
    t = ev.traits["t"]
    assert t.metric("roc_auc") is None and t.metric("f1") is not None and t.metric("mcc") is None
    assert t.model_extra == {"mcc": {"value": 0.1}}
    assert Threshold.model_validate({"threshold": 0.4, "new": 1}).target is None
    cmp = EvaluationComparison.model_validate({"a": {"version_no": 1}, "b": {"version_no": 2}})
    assert (cmp.items, cmp.traits, cmp.disagreements) == (0, {}, [])
    with pytest.raises(pydantic.ValidationError):
        EvaluationComparison.model_validate({"a": {"version_no": 1}})  # both sides are promised
    out = AnalyzeCommentResult.model_validate(
        {"attributeScores": {"T": {"summaryScore": {"value": 0.7}}}, "languages": ["en"], "extra": True}
    )
    score = out.attribute_scores["T"]
    assert score.summary_score is not None and score.summary_score.value == 0.7 and score.span_scores == []
    # A scoreThreshold above the summary but below a sentence keeps the span alone (routes/perspective.py).
    spans_only = AnalyzeCommentResult.model_validate(
        {"attributeScores": {"T": {"spanScores": [{"begin": 0, "end": 9, "score": {"value": 0.9}}]}}}
    ).attribute_scores["T"]
    assert spans_only.summary_score is None and spans_only.span_scores[0].score.value == 0.9
    assert out.model_dump(by_alias=True, exclude_none=True)["attributeScores"]["T"]["summaryScore"] == {
        "value": 0.7
    }
