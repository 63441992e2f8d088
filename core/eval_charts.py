"""Plotly charts of evaluation-set results: a precision-recall curve, reliability diagrams (no Streamlit)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from core.charts import SERIES_COLORS
from core.client.results import PrPoint, ReliabilityBin, Threshold


def pr_curve_chart(
    points: Sequence[PrPoint], chosen: Threshold | None = None, title: str | None = None
) -> go.Figure:
    """Precision against recall, one point per threshold (hover shows it); `chosen` is marked."""
    fig = go.Figure(
        go.Scatter(
            x=[p.recall for p in points],
            y=[p.precision for p in points],
            customdata=[p.threshold for p in points],
            mode="lines+markers",
            name="PR curve",
            line={"color": SERIES_COLORS[0], "shape": "hv"},
            marker={"size": 5},
            hovertemplate="threshold %{customdata:.3f}<br>recall %{x:.3f}<br>precision %{y:.3f}"
            "<extra></extra>",
        )
    )
    if chosen:
        fig.add_trace(
            go.Scatter(
                x=[chosen.recall],
                y=[chosen.precision],
                mode="markers+text",
                name="threshold",
                text=[f"threshold {chosen.threshold:.3f}"],
                textposition="bottom left",
                marker={"color": SERIES_COLORS[1], "size": 14, "symbol": "x"},
            )
        )
    fig.update_xaxes(title_text="recall", range=[0, 1.02])
    fig.update_yaxes(title_text="precision", range=[0, 1.04])
    fig.update_layout(title=title or "Precision-recall on the evaluation set", height=360, showlegend=False)
    return fig


def reliability_chart(series: Mapping[str, Sequence[ReliabilityBin]], title: str | None = None) -> go.Figure:
    """Reliability diagram: mean label against mean score per score bin, one line per version, and the
    diagonal a perfectly calibrated version would follow. Marker size follows the bin's item count."""
    fig = go.Figure(
        go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="calibrated", line={"color": "#999", "dash": "dot"})
    )
    for i, (label, bins) in enumerate(series.items()):
        counts = [b.count for b in bins]
        top = max(counts, default=1)
        fig.add_trace(
            go.Scatter(
                x=[b.mean_score for b in bins],
                y=[b.mean_quality for b in bins],
                customdata=counts,
                mode="lines+markers",
                name=label,
                line={"color": SERIES_COLORS[i % len(SERIES_COLORS)], "dash": ("solid", "dash")[i % 2]},
                marker={"size": [6 + 10 * c / top for c in counts]},
                hovertemplate=f"{label}: mean score %{{x:.3f}}, mean label %{{y:.3f}}, %{{customdata}} items"
                "<extra></extra>",
            )
        )
    fig.update_xaxes(title_text="mean score", range=[0, 1])
    fig.update_yaxes(title_text="mean label (quality)", range=[0, 1.04])
    fig.update_layout(
        title=title or "Reliability", height=340, legend={"orientation": "h", "y": -0.3}, margin={"b": 90}
    )
    return fig
