"""Plotly charts shared by the workbench and notebooks (no Streamlit here).

Every chart accepts a `ScoreResult` or a plain `{trait key: score}` mapping, so scores from
a local snapshot (`Scorer.score_dicts`) chart the same as the service's. For a plain
mapping, pass `traits` (the scorer's `TraitSpec`s, or `{key: (negative, positive)}`) to get
pole labels; without them the key stands in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go

from core.client.models import CompareResult, ScoreResult, Version
from core.contract import SCORE_MIDPOINT, nearer_pole_is_positive
from core.json_types import JsonObject

NEGATIVE_COLOR = "#d9804a"
POSITIVE_COLOR = "#3b7dd8"
SERIES_COLORS = ("#3b7dd8", "#d9804a", "#5aa469", "#9a6fc4")
LINE_DASHES = ("solid", "dash", "dot", "dashdot")
MARKER_SYMBOLS = ("circle", "square", "diamond", "triangle-up")
INSIDE_FROM = 0.8  # bars at least this long carry their value inside; shorter ones just past their end
# ... but a bar ending just short of the midline carries it inside too: past its end it would sit on the line.
INSIDE_BELOW_MIDPOINT = 0.38
UNIT_METRICS = frozenset({"roc_auc", "accuracy", "calibration_error"})

Scores = ScoreResult | Mapping[str, float]
TraitLabels = Mapping[str, tuple[str, str]] | Sequence[object] | None  # pairs, or traits / their JSON


@dataclass(frozen=True)
class _Row:
    key: str
    name: str
    negative: str
    positive: str
    score: float


def _label_table(traits: TraitLabels) -> dict[str, tuple[str, str, str]]:
    """{key: (name, negative, positive)} from a mapping of pole pairs or objects with those attributes."""
    table: dict[str, tuple[str, str, str]] = {}
    if traits is None:
        return table
    if isinstance(traits, Mapping):
        for key, value in traits.items():
            if isinstance(value, Sequence) and not isinstance(value, str) and len(value) >= 2:
                table[key] = (key, str(value[0]), str(value[1]))
            else:
                table[key] = (
                    str(getattr(value, "name", key)),
                    str(getattr(value, "negative_label", "")),
                    str(getattr(value, "positive_label", "")),
                )
        return table
    for t in traits:
        get = t.get if isinstance(t, Mapping) else lambda attr, default=None, t=t: getattr(t, attr, default)
        key = str(get("key") or get("trait") or get("name"))
        name = str(get("name") or key)
        table[key] = (name, str(get("negative_label") or ""), str(get("positive_label") or ""))
    return table


def _rows(result: Scores, traits: TraitLabels = None) -> list[_Row]:
    extra = _label_table(traits)
    if isinstance(result, ScoreResult):
        rows = []
        for s in result.scores:
            name, neg, pos = extra.get(s.trait, (s.name or s.trait, "", ""))
            neg, pos = s.negative_label or neg, s.positive_label or pos
            rows.append(_Row(s.trait, s.name or name, neg, pos, float(s.score)))
        return rows
    rows = []
    for key, score in result.items():
        name, neg, pos = extra.get(key, (key, "", ""))
        rows.append(_Row(key, name, neg, pos, float(score)))
    return rows


def _pole_axes(fig: go.Figure, rows: list[_Row]) -> None:
    """Trait name and negative label on the left axis, positive label on a mirrored right axis."""
    positions = list(range(len(rows)))
    left = [f"<b>{r.name}</b><br>{r.negative}" if r.negative else f"<b>{r.name}</b>" for r in rows]
    right = [r.positive for r in rows]
    span = [len(rows) - 0.5, -0.5]  # first trait on top
    fig.update_layout(
        yaxis={"tickvals": positions, "ticktext": left, "range": span, "automargin": True},
        yaxis2={
            "tickvals": positions,
            "ticktext": right,
            "range": span,
            "overlaying": "y",
            "side": "right",
            "showgrid": False,
            "automargin": True,
        },
        xaxis={"range": [0, 1], "title": "score", "tickvals": [0, 0.25, 0.5, 0.75, 1]},
    )
    # An invisible trace on y2 makes Plotly draw the right-hand axis.
    fig.add_trace(go.Scatter(x=[None], y=[None], yaxis="y2", showlegend=False, hoverinfo="skip"))
    fig.add_vline(x=SCORE_MIDPOINT, line_dash="dash", line_color="#888", line_width=1)


def _bar_text(scores: Sequence[float]) -> dict[str, object]:  # keyword arguments of go.Bar
    """Values upright and full size: inside the end of a long bar, just past the end of a short one.

    Plotly's "auto" rotates and shrinks a value that does not fit inside its bar (a score of 0.08 became a
    sideways speck); a short bar has room to its right instead.
    """
    return {
        "textposition": [
            "inside" if s >= INSIDE_FROM or INSIDE_BELOW_MIDPOINT <= s < SCORE_MIDPOINT else "outside"
            for s in scores
        ],
        "insidetextanchor": "end",
        "textangle": 0,
        "constraintext": "none",
        "cliponaxis": False,
    }


def _height(n_rows: int, per_row: int = 56) -> int:
    return max(240, 150 + per_row * n_rows)


def score_bars(result: Scores, title: str | None = None, *, traits: TraitLabels = None) -> go.Figure:
    """One horizontal bar per trait on [0, 1]: negative pole left, positive right, a line at 0.5."""
    rows = _rows(result, traits)
    fig = go.Figure(
        go.Bar(
            x=[r.score for r in rows],
            y=list(range(len(rows))),
            orientation="h",
            marker_color=[
                POSITIVE_COLOR if nearer_pole_is_positive(r.score) else NEGATIVE_COLOR for r in rows
            ],
            text=[f"{r.score:.2f}" for r in rows],
            **_bar_text([r.score for r in rows]),
            customdata=[[r.name, r.negative, r.positive] for r in rows],
            hovertemplate="%{customdata[0]}: %{x:.3f}<br>"
            "%{customdata[1]} ← → %{customdata[2]}<extra></extra>",
            showlegend=False,
        )
    )
    _pole_axes(fig, rows)
    fig.update_layout(title=title or _default_title(result), height=_height(len(rows)), bargap=0.35)
    return fig


def score_bars_compare(
    a: Scores | CompareResult,
    b: Scores | None = None,
    labels: tuple[str, str] = ("A", "B"),
    title: str | None = None,
    *,
    traits: TraitLabels = None,
) -> go.Figure:
    """Two score sets side by side per trait (two texts, or one text under two versions).

    Pass a `CompareResult` alone as `a` to chart both of its sides.
    """
    if isinstance(a, CompareResult):
        if b is not None:
            raise ValueError("pass either a CompareResult or two score sets")
        a, b = a.results()
    if b is None:
        raise ValueError("score_bars_compare needs two score sets")
    rows_a = _rows(a, traits)
    by_key_b = {r.key: r for r in _rows(b, traits)}
    # Traits of `a` in order, then any only `b` has (e.g. comparing versions with different traits).
    keys = [r.key for r in rows_a] + [k for k in by_key_b if k not in {r.key for r in rows_a}]
    by_key_a = {r.key: r for r in rows_a}
    rows = [by_key_a.get(k) or by_key_b[k] for k in keys]
    fig = go.Figure()
    for side, (label, table) in enumerate(((labels[0], by_key_a), (labels[1], by_key_b))):
        scores = [table[k].score if k in table else None for k in keys]
        fig.add_trace(
            go.Bar(
                name=label,
                x=scores,
                y=list(range(len(keys))),
                orientation="h",
                marker_color=SERIES_COLORS[side],
                text=[f"{s:.2f}" if s is not None else "" for s in scores],
                **_bar_text([s or 0.0 for s in scores]),
                hovertemplate=f"{label}: %{{x:.3f}}<extra></extra>",
            )
        )
    _pole_axes(fig, rows)
    fig.update_layout(
        barmode="group",
        title=title or f"{labels[0]} vs {labels[1]}",
        height=_height(len(rows), per_row=84),
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 1, "xanchor": "right"},
    )
    return fig


def metrics_across_versions(
    versions: Iterable[Version | Mapping[str, Any]],  # Any: a version's JSON, as the API gives it
    metric: str | Sequence[str] = "roc_auc",
    title: str | None = None,
) -> go.Figure:
    """Per-trait metric(s) (`roc_auc`, `accuracy`, `calibration_error`, …) by `version_no`."""
    from plotly.subplots import make_subplots

    metrics = [metric] if isinstance(metric, str) else list(metric)
    points = sorted(
        (_version_point(v) for v in versions),
        key=lambda p: p[0],
    )
    fig = make_subplots(
        rows=len(metrics),
        cols=1,
        shared_xaxes=True,
        subplot_titles=metrics,
        vertical_spacing=0.08 if len(metrics) > 1 else 0.0,
    )
    trait_keys = sorted({k for _, traits in points for k in traits})
    for row, name in enumerate(metrics, start=1):
        for i, key in enumerate(trait_keys):
            series = [(no, _number((traits.get(key) or {}).get(name))) for no, traits in points]
            xs = [no for no, value in series if value is not None]
            ys = [value for _, value in series if value is not None]
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=ys,
                    mode="lines+markers",
                    name=key,
                    legendgroup=key,
                    showlegend=row == 1,
                    # Traits often share a value (two ROC AUCs of 1.0): each gets its own dash, marker and
                    # width, the first drawn widest, so a line on top never hides the one below it.
                    line={
                        "color": SERIES_COLORS[i % len(SERIES_COLORS)] if len(trait_keys) <= 4 else None,
                        "dash": LINE_DASHES[i % len(LINE_DASHES)],
                        "width": max(1.5, 5.0 - 1.2 * i),
                    },
                    marker={"symbol": MARKER_SYMBOLS[i % len(MARKER_SYMBOLS)], "size": max(6, 13 - 2 * i)},
                    hovertemplate=f"{key} v%{{x}}: %{{y:.3f}}<extra>{name}</extra>",
                    cliponaxis=False,  # a marker on the axis' edge (an AUC of 1.0) shows whole
                ),
                row=row,
                col=1,
            )
    for row, name in enumerate(metrics, start=1):
        found = [_number(t.get(name)) for _, traits in points for t in traits.values()]
        values = [v for v in found if v is not None]
        if name in UNIT_METRICS and values:
            fig.update_yaxes(range=unit_axis_range(values), row=row, col=1)
    fig.update_xaxes(title_text="version", tickprefix="v", dtick=1, row=len(metrics), col=1)
    fig.update_layout(title=title or "Metrics across versions", height=max(300, 260 * len(metrics)))
    return fig


def unit_axis_range(values: Sequence[float]) -> list[float]:
    """A y range around the values of a metric bounded in [0, 1], never beyond [0, 1].

    Versions differ by hundredths (ROC AUC 0.91 vs 0.93): on a 0-1 axis their lines coincide, so the axis
    spans the values with a margin (at least 0.02) instead.
    """
    lo, hi = min(values), max(values)
    pad = max(0.02, 0.2 * (hi - lo))
    return [max(0.0, lo - pad), min(1.0, hi + pad)]


def _version_point(v: Version | Mapping[str, Any]) -> tuple[int, dict[str, JsonObject]]:  # Any: version JSON
    if isinstance(v, Version):
        return v.version_no, v.trait_metrics
    traits = (v.get("metrics") or {}).get("traits") or {}
    return int(v["version_no"]), traits if isinstance(traits, dict) else {}


def _number(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def _default_title(result: Scores) -> str | None:
    if isinstance(result, ScoreResult) and result.handle:
        return f"{result.handle} v{result.version_no}" if result.version_no is not None else result.handle
    return None
