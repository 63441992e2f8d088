"""The Team progress section: per person and trait, what the service's `GET …/team` says, and a download of
every vote (docs/workbench.md), on the Team page."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
import streamlit as st

from app.shell.backend import Backend
from app.shell.signin_config import signin_config
from app.ui.figures import seconds, share
from app.ui.inert import escape_md
from app.ui.widgets import guard
from core.client import Model, TeamProgress
from core.client.team import votes_csv

#: The table's columns, as the API names them (shares and durations shown as a person reads them).
COLUMNS = {
    "annotator": "person",
    "trait": "trait",
    "labels_today": "labels today",
    "labels": "labels",
    "unsure": "unsure",
    "median_seconds": "median time per label",
    "agreement_others": "agreement with others",
    "compared_others": "pairs compared",
    "agreement_settled": "agreement with settled",
    "compared_settled": "settled compared",
    "wanting": "texts wanting their vote",
}


POINTS = "points used"  # a trait rated on a scale: how the person's labels spread over its points


def points_used(points: dict[str, int] | None) -> str:
    """A person's labels per point of a scale, lowest first ("1: 3 · 4: 7"); "" for a pole trait."""
    if points is None:
        return ""
    return " · ".join(f"{k}: {n}" for k, n in sorted(points.items(), key=lambda kn: int(kn[0]))) or "—"


def progress_frame(progress: TeamProgress, names: dict[str, str] | None = None) -> pd.DataFrame:
    """One row per person and trait, the API's counts (trait keys shown by name, agreement as a percentage,
    the median time in whole seconds); with a trait rated on a scale, how each person's labels spread over its
    points."""
    scaled = any(p.points is not None for p in progress.people)
    rows = [
        {COLUMNS[k]: getattr(p, k) for k in COLUMNS}
        | {"trait": (names or {}).get(p.trait, p.trait)}
        | {"median time per label": seconds(p.median_seconds)}
        | {"agreement with others": share(p.agreement_others)}
        | {"agreement with settled": share(p.agreement_settled)}
        | ({POINTS: points_used(p.points)} if scaled else {})
        for p in progress.people
    ]
    return pd.DataFrame(rows, columns=[*COLUMNS.values(), *([POINTS] if scaled else [])])


def nobody_yet(environ: Mapping[str, str] | None = None) -> str:
    """The empty table in the team's words: people who sign in through the provider are named by it; a
    key's labels are a person's only when the key has a name."""
    try:
        people = signin_config(environ) is not None
    except ValueError:  # a half-done configuration: said at start
        people = False
    if people:
        return "Nobody has labelled this model yet: each person's progress shows here once they label."
    return "Nobody has labelled this model with a named key yet: each person's progress shows here."


def team_progress(backend: Backend, model: Model) -> None:
    """The section: the table, what each number means, and the vote export (CSV or JSON Lines)."""
    client = backend.client
    found: TeamProgress | None = None
    with guard("Reading the team's progress"):
        found = client.team_progress(model.handle)
    if found is None:
        return
    st.subheader("Team progress")
    if not found.people:
        st.caption(nobody_yet())
    else:
        st.dataframe(
            progress_frame(found),
            hide_index=True,
            width="stretch",
            key="team_progress_table",
        )
        wanting = ", ".join(f"{escape_md(k)}: {t.wanting:,}" for k, t in found.traits.items())
        gap = int(found.session_gap_seconds or 0)
        st.caption(
            f"Labels today: {escape_md(str(found.day))} (UTC). "
            "Median seconds between one person's consecutive "
            f"labels and unsure marks, pauses over {gap // 60:,} minutes left out. Agreement: the share of "
            "vote pairs on a shared text that fall on the same pole (neutral votes are on none), and of "
            f"votes that match a settled text's pole. Texts still wanting votes per trait — {wanting}."
        )
    c1, c2, _ = st.columns([1, 1, 2])
    fmt = c1.radio("Export format", ["csv", "jsonl"], horizontal=True, key="team_export_format")
    if c2.button("Prepare the vote export", key="team_export_prepare"):
        with guard("Exporting the votes"):
            # The CSV is for a spreadsheet: its cells are guarded against formulas; the JSON Lines stay exact.
            if fmt == "csv":
                text = votes_csv(client.votes(model.handle), spreadsheet=True)
            else:
                text = client.export_votes(model.handle, fmt)
            st.session_state["team_export"] = (model.handle, fmt, text)
    ready = st.session_state.get("team_export")
    if ready and ready[0] == model.handle and ready[1] == fmt:
        st.download_button(
            f"Download every vote ({escape_md(fmt.upper())})",
            ready[2],
            file_name=f"{model.handle}-votes.{fmt}",
            mime="text/csv" if fmt == "csv" else "application/jsonl",
            key="team_export_download",
        )
