"""Parsing and checking of form input before anything is sent to the service."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from core.contract import HANDLE_RE


def check_handle(handle: str, owned: tuple[str, ...]) -> str | None:
    """Why `handle` cannot be created with this key, or None when it can."""
    match = HANDLE_RE.match(handle)
    if not match:
        return (
            "A handle is `<namespace>.<name>`: lowercase letters, digits, `_` and `-`, "
            "each part starting with a letter or digit, one dot."
        )
    if match.group(1) not in owned:
        return f"Namespace `{match.group(1)}` is not one this key owns ({', '.join(owned)})."
    return None


def parse_sources(text: str) -> list[dict[str, str]] | None:
    """One source a line: `url | title | license` (title and license optional)."""
    sources: list[dict[str, str]] = []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split("|")]
        if not parts or not parts[0]:
            continue
        source = {"url": parts[0]}
        if len(parts) > 1 and parts[1]:
            source["title"] = parts[1]
        if len(parts) > 2 and parts[2]:
            source["license"] = parts[2]
        sources.append(source)
    return sources or None


def create_fields(values: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments for Client.create_model from the form, leaving out what is empty."""
    fields: dict[str, Any] = {
        "description": values.get("description", ""),
        "scoring_method": values.get("scoring_method", "balanced_cosine"),
        "kind": values.get("kind", "scoring"),
        "max_depth": int(values.get("max_depth", 1)),
        "zero_data_retention": bool(values.get("zero_data_retention", False)),
    }
    if values.get("additional_terms"):
        fields["additional_terms"] = values["additional_terms"]
    sources = parse_sources(values.get("upstream_sources", ""))
    if sources:
        fields["upstream_sources"] = sources
    if values.get("readme_markdown"):
        fields["readme_markdown"] = values["readme_markdown"]
    if values.get("embedder"):
        fields["embedder"] = values["embedder"]
    return fields


def trait_edits(
    before: pd.DataFrame, after: pd.DataFrame, columns: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """{trait key: changed fields} between the trait table as shown and as edited (rows keep their order)."""
    edits: dict[str, dict[str, Any]] = {}
    for (_, old), (_, new) in zip(before.iterrows(), after.iterrows(), strict=True):
        fields = {c: (str(new[c]).strip() if pd.notna(new[c]) else "") for c in columns}
        changed = {c: v for c, v in fields.items() if v != (str(old[c]) if pd.notna(old[c]) else "")}
        if changed:
            edits[str(old["key"])] = changed
    return edits
