"""A snapshot given as the path of its file: what `Client.export_snapshot(path=…)` wrote, read back."""

from __future__ import annotations

import os
from pathlib import Path

from core.engine.errors import SnapshotFormatError
from core.engine.types import JsonObject


def snapshot_source(snapshot: JsonObject | str | os.PathLike[str]) -> JsonObject | str:
    """The snapshot itself (a dict, or its JSON text) as given; a path (a `Path`, or a str that is no JSON
    object) read into its text, so `Scorer.from_snapshot("model.json")` takes the file it names."""
    if isinstance(snapshot, dict):
        return snapshot
    if isinstance(snapshot, str) and snapshot.lstrip().startswith("{"):
        return snapshot  # a JSON object's text: a path never starts with a brace in practice
    path = Path(snapshot)
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SnapshotFormatError(
            f"invalid snapshot: {str(path)!r} is neither a snapshot's JSON nor a file that can be read "
            f"({exc.strerror or exc})"
        ) from None
