"""Plotly figures from service results and from plain local scores."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go
import pytest

from core.charts import metrics_across_versions, score_bars, score_bars_compare
from core.client.models import CompareResult, ScoreResult, Version
from core.timeline import ACTIVE, segments

RESULT = ScoreResult.model_validate(
    {
        "handle": "acme.tone",
        "version_no": 3,
        "scores": [
            {
                "trait": "formality",
                "name": "Formality",
                "score": 0.71,
                "positive_label": "formal",
                "negative_label": "casual",
            },
            {
                "trait": "warmth",
                "name": "Warmth",
                "score": 0.2,
                "positive_label": "warm",
                "negative_label": "cold",
            },
        ],
    }
)


@dataclass
class Spec:  # shaped like core.engine.TraitSpec
    key: str
    name: str
    positive_label: str
    negative_label: str


def _bars(fig: go.Figure) -> list[go.Bar]:
    return [t for t in fig.data if isinstance(t, go.Bar)]


def test_score_bars_poles_and_midline() -> None:
    fig = score_bars(RESULT)
    (bar,) = _bars(fig)
    assert list(bar.x) == [0.71, 0.2] and bar.orientation == "h"
    assert fig.layout.xaxis.range == (0, 1)
    assert fig.layout.yaxis.ticktext == ("<b>Formality</b><br>casual", "<b>Warmth</b><br>cold")
    assert fig.layout.yaxis2.ticktext == ("formal", "warm") and fig.layout.yaxis2.side == "right"
    assert any(s.x0 == 0.5 and s.x1 == 0.5 for s in fig.layout.shapes)
    assert fig.layout.title.text == "acme.tone v3"
    assert bar.marker.color[0] != bar.marker.color[1]  # pole-coloured


def test_score_bars_from_plain_dict_with_trait_specs() -> None:
    specs = [Spec("formality", "Formality", "formal", "casual")]
    fig = score_bars({"formality": 0.4}, title="local", traits=specs)
    assert fig.layout.yaxis.ticktext == ("<b>Formality</b><br>casual",)
    assert fig.layout.yaxis2.ticktext == ("formal",)
    fig = score_bars({"formality": 0.4}, traits={"formality": ("casual", "formal")})
    assert fig.layout.yaxis2.ticktext == ("formal",)
    fig = score_bars({"formality": 0.4})  # no labels: still a chart
    assert fig.layout.yaxis.ticktext == ("<b>formality</b>",)


def test_compare_two_results_grouped() -> None:
    fig = score_bars_compare(RESULT, {"formality": 0.1, "warmth": 0.9, "extra": 0.5}, labels=("v1", "v2"))
    a, b = _bars(fig)
    assert fig.layout.barmode == "group"
    assert (a.name, b.name) == ("v1", "v2")
    assert list(a.x) == [0.71, 0.2, None] and list(b.x) == [0.1, 0.9, 0.5]
    assert len(fig.layout.yaxis.tickvals) == 3


def test_compare_from_compare_result() -> None:
    cmp = CompareResult.model_validate(
        {"a": {"scores": [{"trait": "t", "score": 0.3}]}, "b": {"scores": [{"trait": "t", "score": 0.8}]}}
    )
    a, b = _bars(score_bars_compare(cmp))
    assert (list(a.x), list(b.x)) == ([0.3], [0.8])
    with pytest.raises(ValueError):
        score_bars_compare(RESULT)


def test_metrics_across_versions_orders_by_version() -> None:
    versions: list[Version | dict[str, Any]] = [
        Version(version_id=9, version_no=2, metrics={"traits": {"t": {"roc_auc": 0.9, "accuracy": 0.8}}}),
        {"version_no": 1, "metrics": {"traits": {"t": {"roc_auc": 0.7}, "u": {"roc_auc": 0.6}}}},
    ]
    fig = metrics_across_versions(versions, ["roc_auc", "accuracy"])
    lines = {(t.name, t.yaxis): (list(t.x), list(t.y)) for t in fig.data}
    assert lines[("t", "y")] == ([1, 2], [0.7, 0.9])
    assert lines[("u", "y")] == ([1], [0.6])
    assert lines[("t", "y2")] == ([2], [0.8])  # v1 had no accuracy


def test_metrics_across_versions_unit_axis_and_overlapping_traits_stay_visible() -> None:
    same = {"roc_auc": 1.0}
    versions = [{"version_no": n, "metrics": {"traits": {"a": same, "b": same}}} for n in (1, 2)]
    fig = metrics_across_versions(versions, "roc_auc")
    assert list(fig.layout.yaxis.range) == [0.98, 1.0]  # ROC AUC lives in [0, 1], not plotly's 0-2
    a, b = fig.data
    assert list(a.y) == list(b.y)  # the two lines coincide…
    assert a.line.dash != b.line.dash and a.marker.symbol != b.marker.symbol  # …and both show
    assert a.line.width > b.line.width  # the one drawn first is wider, so it shows around the other


def test_history_segments_leave_reopen_events_out() -> None:
    events = [
        {"at": "2026-01-01T00:00:00Z", "kind": "activated", "version_no": 1},
        {"at": "2026-01-02T00:00:00Z", "kind": "reopened", "version_no": 1},
        {"at": "2026-01-03T00:00:00Z", "kind": "activated", "version_no": 2, "previous_version_no": 1},
    ]
    parts = segments(events)
    assert {s.lane for s in parts} == {ACTIVE}  # a reopen moves neither the active version nor a tag
    assert [(s.version_no, s.end is None) for s in parts] == [(1, False), (2, True)]
    assert parts[0].end == parts[1].start  # v1 served through the reopened draft until v2


def test_metrics_across_versions_axis_shows_the_differences() -> None:
    # Two versions 0.02 apart: on a 0-1 axis their points are 2% of the height apart and look the same.
    versions = [
        {"version_no": 1, "metrics": {"traits": {"t": {"roc_auc": 0.91}}}},
        {"version_no": 2, "metrics": {"traits": {"t": {"roc_auc": 0.93}}}},
    ]
    low, high = metrics_across_versions(versions, "roc_auc").layout.yaxis.range
    assert 0.85 <= low < 0.91 and 0.93 < high <= 0.97
    assert (0.93 - 0.91) / (high - low) > 0.3  # the difference fills a good part of the axis


def test_bar_values_stay_upright_and_outside_a_short_bar() -> None:
    low = ScoreResult.model_validate(
        {**RESULT.model_dump(mode="json"), "scores": [{**RESULT.scores[0].model_dump(), "score": 0.06}]}
    )
    for fig in (score_bars(low), score_bars_compare(low, RESULT)):
        bar = fig.data[0]
        assert bar.textangle == 0  # "auto" drew a value that does not fit inside its bar rotated
        assert list(bar.textposition)[0] == "outside"
    assert list(score_bars(RESULT).data[0].textposition) == ["outside", "outside"]
    near = ScoreResult.model_validate(  # past its end a value just under 0.5 would sit on the midline
        {**RESULT.model_dump(mode="json"), "scores": [{**RESULT.scores[0].model_dump(), "score": 0.47}]}
    )
    assert list(score_bars(near).data[0].textposition)[0] == "inside"
