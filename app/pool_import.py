"""The Label page's pool import: a file of texts into the model's unlabelled pool, resumable.

Reading the file (`parse_texts`) is plain Python; the section sends it through `Client.import_pool` (batches
that shrink on a slow service) with a progress bar. When an import stops, the page says how many texts are
stored and offers to resume from there; texts already in the pool are never added twice.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Callable
from typing import Any

import streamlit as st

from core.client import Client, PoolImportReport

STATE = (
    "pool_import_stopped"  # {"handle", "digest", "total", "stored", "error"} of the last import that stopped
)


def parse_texts(name: str, data: bytes) -> list[str]:
    """Texts of an uploaded file: CSV (a `text` column, else the first), JSONL (`text` field or a string), TXT
    (one a line). Blank entries are dropped; the service trims and de-duplicates the rest."""
    import pandas as pd

    lower = name.lower()
    if lower.endswith(".csv"):
        frame = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)
        column = "text" if "text" in frame.columns else frame.columns[0]
        values: list[Any] = frame[column].tolist()
    elif lower.endswith((".jsonl", ".ndjson", ".json")):
        values = []
        for line in data.decode("utf-8-sig").splitlines():
            if line.strip():
                item = json.loads(line)
                values.append(item.get("text", "") if isinstance(item, dict) else item)
    else:
        values = data.decode("utf-8-sig").splitlines()
    return [v for v in (str(x) for x in values) if v.strip()]


def outcome(report: PoolImportReport) -> str:
    """What an import did, with exact counts, in the user's words."""
    n = report.in_evaluation_set
    held = (
        f" {n:,} {'was' if n == 1 else 'were'} left out: {'it is' if n == 1 else 'they are'} in the "
        "evaluation set, which stays held out."
        if n
        else ""
    )
    if report.complete:
        return f"Imported {report.total:,} texts ({report.added:,} new to the pool).{held}"
    return (
        f"The import stopped: {report.stored:,} of {report.total:,} texts are stored, "
        f"{report.total - report.stored:,} are not ({report.error}). Resume to send the rest; "
        f"texts already stored are not added twice.{held}"
    )


def pool_import_section(client: Client, handle: str, on_change: Callable[[], None]) -> None:
    """Uploader, Import / Resume buttons and a progress bar; `on_change()` after texts were stored."""
    upload = st.file_uploader("Pool file", type=["csv", "jsonl", "ndjson", "json", "txt"], key="pool_upload")
    if upload is None:
        return
    data = upload.getvalue()
    digest = hashlib.sha256(data).hexdigest()
    stopped: dict[str, Any] = st.session_state.get(STATE) or {}
    resumable = bool(stopped) and stopped["handle"] == handle and stopped["digest"] == digest
    if resumable:
        st.warning(
            f"The last import of this file stopped with {stopped['stored']:,} of {stopped['total']:,} texts "
            f"stored ({stopped['error']}).",
            icon=":material/warning:",
        )
    b1, b2 = st.columns(2)
    start = 0
    if resumable and b1.button(
        f"Resume from text {stopped['stored'] + 1:,}", key="pool_resume", type="primary", width="stretch"
    ):
        start = int(stopped["stored"])
    elif not b2.button(
        "Import into the pool", key="pool_import", type="secondary" if resumable else "primary"
    ):
        return
    try:
        texts = parse_texts(upload.name, data)
    except (ValueError, UnicodeDecodeError) as exc:
        st.error(f"The file could not be read: {exc}")
        return
    bar = st.progress(start / len(texts) if texts else 0.0, text=f"Importing {len(texts):,} texts…")

    def _progress(done: int, total: int) -> None:
        bar.progress(done / total if total else 1.0, text=f"Stored {done:,} of {total:,} texts")

    report = client.import_pool(handle, texts, start=start, progress=_progress)
    if report.complete:
        st.session_state.pop(STATE, None)
        st.session_state["pool_flash"] = outcome(report)
    else:
        record = {"handle": handle, "digest": digest, "total": report.total}
        st.session_state[STATE] = record | {"stored": report.stored, "error": report.error}
        st.session_state["pool_flash_warning"] = outcome(report)
    if report.stored > start:
        on_change()
    st.rerun()
