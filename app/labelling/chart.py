"""The Label page's AUC chart: out-of-fold ROC-AUC against the labels given this session.

Altair and pandas are imported when a chart is drawn, not with the page: the chart appears only after the
analyst asks for a point, and those imports cost seconds of a cold page's first paint.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def curve_chart(curve: Sequence[tuple[int, float]]) -> Any:
    """An Altair line chart of `(labels given, AUC)` points, its axes fitted so no point is clipped."""
    import altair as alt
    import pandas as pd

    frame = pd.DataFrame(list(curve), columns=["labels given", "out-of-fold AUC"])
    low = min(0.5, float(frame["out-of-fold AUC"].min()) - 0.05)
    return (
        alt.Chart(frame)
        .mark_line(point=True, clip=False)
        .encode(
            # From 0 to one past the last count: a single point is not a degenerate axis ("4.000000").
            x=alt.X(
                "labels given:Q",
                scale=alt.Scale(domain=[0, int(frame["labels given"].max()) + 1], nice=False),
                axis=alt.Axis(format="d", tickMinStep=1),
            ),
            y=alt.Y("out-of-fold AUC:Q", scale=alt.Scale(domain=[low, 1.0], nice=False)),
        )
        .properties(height=200)
    )
