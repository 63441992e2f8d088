"""The workbench section that migrates a Perspective user's thresholds from their logged scores.

Upload a CSV/JSONL of `text` plus attribute scores, give the old threshold; the logged scores become soft
labels of this model (traits named after the attributes), it trains, and the section shows how the new
version agrees with the logs on held-out rows and which threshold keeps the old flag rate
(`Client.migrate_from_perspective`; docs/perspective.md).
"""

from __future__ import annotations

from dataclasses import asdict

import pandas as pd
import streamlit as st

from app.ui.widgets import guard
from core.client import Client
from core.client.perspective_migration import read_log

STATE = "perspective_migration"


def render(client: Client, handle: str) -> None:
    st.caption(
        "Logged Perspective scores as soft labels: a CSV or JSONL with a `text` column and one column per "
        "attribute (`TOXICITY`, … between 0 and 1; JSONL may hold Perspective's own `attributeScores`). "
        "Missing traits are added under the attribute's name, the model trains on most rows, and the rest "
        "show how it agrees with your logs."
    )
    upload = st.file_uploader("Perspective log", type=["csv", "jsonl", "ndjson", "json"], key="pm_upload")
    left, right = st.columns(2)
    old = left.number_input("Your old threshold", 0.0, 1.0, 0.7, 0.05, key="pm_threshold")
    holdout = right.slider("Held out to compare", 0.1, 0.5, 0.2, 0.05, key="pm_holdout")
    if upload is not None and st.button("Import, train and compare", type="primary", key="pm_go"):
        with guard("Migrating from Perspective"), st.status("Migrating…") as status:
            rows = read_log(upload.getvalue(), filename=upload.name)
            report = client.migrate_from_perspective(
                handle, rows, old_threshold=float(old), holdout=float(holdout), progress=status.write
            )
            status.update(label=f"Trained v{report.version_no}", state="complete")
            st.session_state[STATE] = (handle, report)
            st.rerun()  # the page's header above still shows the model as it was before this version
    stored = st.session_state.get(STATE)
    if stored and stored[0] == handle:
        report = stored[1]
        st.write(
            f"v{report.version_no:d}: trained on {report.train_rows:,} comments, compared on "
            f"{report.holdout_rows:,} held out ({report.rejected_rows:,} samples refused)."
        )
        table = pd.DataFrame([asdict(a) for a in report.attributes]).rename(
            columns={
                "rows": "held-out rows",
                "old_threshold": "old threshold",
                "old_flag_rate": "flagged then",
                "roc_auc": "ROC-AUC at old threshold",
                "spearman": "rank correlation",
                "threshold": "threshold here (same flag rate)",
                "new_flag_rate": "flagged here",
            }
        )
        st.dataframe(table, hide_index=True, width="stretch", key="pm_table")
