"""Exports to a notebook or a file: the samples (with where each came from and who labelled it) and a
version's snapshot. The votes' export lives with the team (`export_votes`)."""

from __future__ import annotations

import csv
import io
import json
import os
from typing import TYPE_CHECKING, Literal

from core.client import progress as progress_mod
from core.client.calls.samples import SampleCalls
from core.client.calls.versions import VersionCalls
from core.client.models import Sample
from core.json_types import JsonObject

if TYPE_CHECKING:
    import pandas as pd

#: The samples export's columns, in order (DataFrame, CSV header, JSONL keys).
SAMPLE_COLUMNS = (
    "id",
    "trait",
    "text",
    "quality",
    "provenance",
    "annotator",
    "adjudicated",
    "source_id",
    "source_url",
    "created_at",
    "metadata",
)


class ExportCalls(VersionCalls, SampleCalls):
    def export_samples(
        self,
        handle: str,
        format: Literal["frame", "csv", "jsonl"] = "frame",
        *,
        trait: str | None = None,
        progress: progress_mod.Progress = None,
    ) -> pd.DataFrame | str:
        """Every stored sample (of `trait`, if given) with its `source_id`, `annotator` and `provenance`
        (`SAMPLE_COLUMNS`): a DataFrame, or a file's text (`csv` with a header, `jsonl`). Reading only:
        an interrupt loses nothing. `progress`: `True`/`"tqdm"` or `progress(done, total)`."""
        if format not in ("frame", "csv", "jsonl"):
            raise ValueError(f"format must be 'frame', 'csv' or 'jsonl', got {format!r}")
        total = self.get_model(handle).sample_count or 0
        reporter = progress_mod.resolve(progress, f"samples of {handle}", unit="samples")
        records: list[JsonObject] = []
        try:
            for sample in self.list_samples(handle, trait=trait):
                records.append(_record(sample))
                if len(records) % 100 == 0:
                    reporter.update(len(records), max(total, len(records)))
            reporter.update(len(records), len(records))
        finally:
            reporter.close(True)
        if format == "jsonl":
            return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
        if format == "csv":
            out = io.StringIO()
            writer = csv.DictWriter(out, fieldnames=SAMPLE_COLUMNS, lineterminator="\n")
            writer.writeheader()
            writer.writerows({k: _cell(v) for k, v in r.items()} for r in records)
            return out.getvalue()
        import pandas as pd

        return pd.DataFrame.from_records(records, columns=list(SAMPLE_COLUMNS))

    def export_snapshot(
        self, handle: str, version: str | int, path: str | os.PathLike[str] | None = None
    ) -> JsonObject:
        """Version `version`'s snapshot (`vN`, N or a tag; an authoring key's read), which
        `core.engine.Scorer.from_snapshot` scores with offline; written as JSON to `path` when given."""
        found = self.get_version(handle, version)
        if found.snapshot is None:
            raise ValueError(f"{handle} {version}: the answer has no snapshot (it needs an authoring key)")
        if path is not None:
            with open(path, "w", encoding="utf-8") as f:
                json.dump(found.snapshot, f)
        return found.snapshot


def _cell(value: object) -> object:
    """A CSV cell: blank for None, an object (metadata) as its JSON."""
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False) if isinstance(value, dict) else value


def _record(sample: Sample) -> JsonObject:
    created = sample.created_at.isoformat() if sample.created_at is not None else None
    values: JsonObject = {
        "id": sample.id,
        "trait": sample.trait,
        "text": sample.text,
        "quality": sample.quality,
        "provenance": sample.provenance,
        "annotator": sample.annotator,
        "adjudicated": sample.adjudicated,
        "source_id": sample.source_id,
        "source_url": sample.source_url,
        "created_at": created,
        "metadata": sample.metadata,
    }
    return values
