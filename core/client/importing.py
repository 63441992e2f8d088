"""Bulk sample import: validate every row here, send the good ones in batches, report the rest.

A batch is stored all-or-none by the service. When it rejects one (422) and its error
details point at rows (`loc: ["body", "samples", i, ...]`), those rows are reported and the
rest of the batch is sent once more, so one bad row does not cost 499 good ones. Resending
is harmless: the service returns the stored id for a sample it already has.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import pydantic

from core.client import errors
from core.client.models import ImportReport, RowError, SampleInput

if TYPE_CHECKING:
    from core.client.client import Client

MAX_BATCH = 500


def import_samples(
    client: Client,
    handle: str,
    samples: Iterable[SampleInput | Mapping[str, Any]],
    *,
    batch_size: int = MAX_BATCH,
    progress: Callable[[int, int], None] | None = None,
) -> ImportReport:
    from core.client.client import _path
    from core.client.retry import Safety

    batch_size = max(1, min(MAX_BATCH, int(batch_size)))
    rows = list(samples)
    total = len(rows)
    errs: list[RowError] = []
    valid: list[tuple[int, dict[str, Any]]] = []
    for index, row in enumerate(rows):
        try:
            item = row if isinstance(row, SampleInput) else SampleInput.model_validate(row)
        except pydantic.ValidationError as exc:
            errs.append(RowError(index=index, row=_plain(row), message=_pydantic_message(exc), stage="local"))
            continue
        valid.append((index, item.model_dump(exclude_none=True)))

    done = total - len(valid)
    if progress is not None:
        progress(done, total)

    stored: dict[int, int] = {}
    path = _path("models", handle, "samples")
    batches = 0

    def send(batch: list[tuple[int, dict[str, Any]]]) -> list[int]:
        nonlocal batches
        batches += 1
        body = {"samples": [payload for _, payload in batch]}
        response = client.request("POST", path, json=body, safety=Safety.ONCE)
        return [int(i) for i in response.json().get("ids", [])]

    for start in range(0, len(valid), batch_size):
        batch = valid[start : start + batch_size]
        processed = len(batch)
        try:
            ids = send(batch)
        except errors.ValidationError as exc:
            bad = _rows_in_details(exc.details, len(batch))
            for pos, message in bad.items():
                index = batch[pos][0]
                errs.append(RowError(index=index, row=_plain(rows[index]), message=message, stage="server"))
            rest = [item for pos, item in enumerate(batch) if pos not in bad]
            ids = []
            if bad and rest:
                try:
                    ids = send(rest)
                except errors.ValidationError as again:
                    errs.extend(_whole_batch(rest, rows, again))
                    rest = []
            elif not bad:
                errs.extend(_whole_batch(batch, rows, exc))
                rest = []
            batch = rest
        for (index, _), sample_id in zip(batch, ids, strict=False):
            stored[index] = sample_id
        done += processed
        if progress is not None:
            progress(done, total)

    errs.sort(key=lambda e: e.index)
    return ImportReport(
        total=total,
        ids=[stored[i] for i in sorted(stored)],
        errors=errs,
        batches=batches,
    )


def _whole_batch(
    batch: list[tuple[int, dict[str, Any]]], rows: list[Any], exc: errors.ApiError
) -> list[RowError]:
    message = f"batch rejected: {exc.code}: {exc.message}"
    return [RowError(index=i, row=_plain(rows[i]), message=message, stage="server") for i, _ in batch]


def _rows_in_details(details: list[Any], batch_len: int) -> dict[int, str]:
    """Map positions in the batch to messages, from 422 details like loc ["body","samples",3,"quality"]."""
    found: dict[int, list[str]] = {}
    for d in details:
        if not isinstance(d, Mapping):
            continue
        loc = list(d.get("loc") or [])
        for i, part in enumerate(loc[:-1]):
            nxt = loc[i + 1]
            if part == "samples" and isinstance(nxt, int) and 0 <= nxt < batch_len:
                field = ".".join(str(p) for p in loc[i + 2 :])
                msg = str(d.get("msg") or d.get("message") or d.get("type") or "invalid")
                found.setdefault(nxt, []).append(f"{field}: {msg}" if field else msg)
                break
    return {pos: "; ".join(msgs) for pos, msgs in found.items()}


def _pydantic_message(exc: pydantic.ValidationError) -> str:
    parts = []
    for e in exc.errors(include_url=False):
        loc, msg = ".".join(str(p) for p in e.get("loc", ())), str(e.get("msg"))
        parts.append(f"{loc}: {msg}" if loc and not msg.startswith(f"{loc} ") else msg)  # "text is empty"
    return "; ".join(parts)


def _plain(row: Any) -> Any:
    if isinstance(row, pydantic.BaseModel):
        return row.model_dump()
    if isinstance(row, Mapping):
        return dict(row)
    return row
