"""What a finished discover or synthesize run added, said in a sentence with a link to where it is.

The API reports a run's status, not what it added, so the page notes the model's traits and sample counts when
it starts the run, and compares once the run has succeeded. The summary stays on the page (per model and run
kind) until the next run of that kind starts.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import streamlit as st

from app.ui.inert import escape_md
from app.ui.navigation import link_to
from core.client import Client, Model
from core.contract import Provenance

STARTED_KEY = "runs_started"  # session_state: (handle, kind) -> what the model held when the run started
SUMMARY_KEY = "run_summaries"  # session_state: (handle, kind) -> the finished run's summary
PROVENANCE: dict[str, Provenance] = {"discover": "discovered", "synthesize": "synthesized"}


def _counts(client: Client, handle: str, provenance: str) -> dict[str, int]:
    return dict(Counter(s.trait for s in client.list_samples(handle, provenance=provenance)))


def start_run(client: Client, handle: str, kind: str, start: Any) -> None:
    """Note the model's traits and `kind`'s samples, then start the run with `start()` (returns a RunRef)."""
    traits = {t.key: t.name for t in client.list_traits(handle)}
    before = {"traits": traits, "samples": _counts(client, handle, PROVENANCE[kind])}
    ref = start()
    st.session_state.setdefault(SUMMARY_KEY, {}).pop((handle, kind), None)
    st.session_state.setdefault(STARTED_KEY, {})[(handle, kind)] = {"run_id": ref.run_id, **before}


def summarise(client: Client, model: Model, kind: str) -> dict[str, Any] | None:
    """The summary of `kind`'s last run on `model` once it succeeded (None while running or when none)."""
    handle = model.handle
    started = st.session_state.get(STARTED_KEY, {}).get((handle, kind))
    op = model.last_operation
    run_id = op.run_id if op is not None else None
    if started and model.state != "busy" and run_id == started["run_id"]:
        st.session_state[STARTED_KEY].pop((handle, kind))
        if op is not None and op.status == "succeeded":
            summary = _compare(client, handle, kind, started)
            if kind == "synthesize":  # where the texts came from: the pool, or descriptions of the poles
                summary["note"] = op.progress_message
            st.session_state.setdefault(SUMMARY_KEY, {})[(handle, kind)] = summary
    shown: dict[str, Any] | None = st.session_state.get(SUMMARY_KEY, {}).get((handle, kind))
    return shown


def _compare(client: Client, handle: str, kind: str, before: dict[str, Any]) -> dict[str, Any]:
    traits = {t.key: t.name for t in client.list_traits(handle)}
    now = _counts(client, handle, PROVENANCE[kind])
    added = {k: n - before["samples"].get(k, 0) for k, n in now.items() if n > before["samples"].get(k, 0)}
    new_traits = [k for k in traits if k not in before["traits"]]
    total = sum(added.values())
    if kind == "discover":
        if not new_traits:
            message = "Discovery finished and found no new trait in these samples."
        else:
            names = ", ".join(f"**{traits[k]}** (`{k}`)" for k in new_traits)
            message = (
                f"Discovery added {len(new_traits)} trait{'s' if len(new_traits) != 1 else ''}: {names}, "
                f"with {total} exemplar sample{'s' if total != 1 else ''}."
            )
        return {"message": message, "added": bool(new_traits), "link": "See the exemplar samples"}
    if not total:
        message = "Synthesis finished without adding samples (every text it wrote was already stored)."
    else:
        per_trait = ", ".join(f"{n} to **{traits.get(k, k)}**" for k, n in sorted(added.items()))
        message = f"Synthesis added {total} sample{'s' if total != 1 else ''}: {per_trait}."
    return {"message": message, "added": bool(total), "link": "See the synthesized samples"}


def show_summary(summary: dict[str, Any] | None, kind: str) -> None:
    """The summary as a success (or info when nothing was added), and a link to the Samples page filtered."""
    if not summary:
        return
    if summary["added"]:
        st.success(summary["message"], icon=":material/check_circle:")
        if note := summary.get("note"):
            st.info(f"{escape_md(note)}. Review them before training.", icon=":material/rate_review:")
        link_to("samples", summary["link"], provenance=PROVENANCE[kind])
    else:
        st.info(summary["message"])
