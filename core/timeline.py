"""Version history (`Client.history`) as lanes over time: the active version, and where each tag pointed."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

import plotly.graph_objects as go

from core.client.models import HistoryEvent

ACTIVE = "active"
_COLORS = ("#3b7dd8", "#d9804a", "#5aa469", "#9a6fc4", "#c4a23a", "#4ab0b8")


@dataclass(frozen=True)
class Segment:
    lane: str  # "active" or a tag name
    version_no: int
    start: datetime
    end: datetime | None  # None: still so


def segments(events: Iterable[HistoryEvent | Mapping[str, object]]) -> list[Segment]:
    """Intervals during which a lane (the active version, or a tag) pointed at one version."""
    out: list[Segment] = []
    open_: dict[str, tuple[int, datetime]] = {}
    for raw in events:
        e = raw if isinstance(raw, HistoryEvent) else HistoryEvent.model_validate(raw)
        if e.kind not in ("activated", "tagged", "untagged"):
            continue  # `reopened` (and kinds added later) move neither the active version nor a tag
        lane = ACTIVE if e.kind == "activated" else str(e.tag)
        if lane in open_:
            no, since = open_.pop(lane)
            out.append(Segment(lane, no, since, e.at))
        if e.kind != "untagged":
            open_[lane] = (e.version_no, e.at)
    out += [Segment(lane, no, since, None) for lane, (no, since) in open_.items()]
    return sorted(out, key=lambda s: (s.lane != ACTIVE, s.lane, s.start))


def history_timeline(
    events: Iterable[HistoryEvent | Mapping[str, object]], now: datetime | None = None
) -> go.Figure:
    """A lane for the active version and one per tag; each bar is labelled with the version it pointed at."""
    now = now or datetime.now(UTC)
    parts = segments(events)
    lanes = list(dict.fromkeys(s.lane for s in parts))
    versions = sorted({s.version_no for s in parts})
    fig = go.Figure()
    for s in parts:
        end = s.end or now
        color = _COLORS[versions.index(s.version_no) % len(_COLORS)]
        fig.add_trace(
            go.Scatter(
                x=[s.start, end],
                y=[s.lane, s.lane],
                mode="lines+markers+text",
                line={"color": color, "width": 14},
                marker={"size": 6, "color": color},
                text=[f"v{s.version_no}", ""],
                textposition="top right",
                showlegend=False,
                hovertemplate=f"{s.lane}: v{s.version_no}<br>%{{x}}<extra></extra>",
            )
        )
    fig.update_yaxes(categoryorder="array", categoryarray=list(reversed(lanes)))
    fig.update_layout(title="History: active version and tags", height=max(220, 90 + 50 * len(lanes)))
    return fig
