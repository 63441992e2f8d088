"""Bulk imports: samples (validated here, sent in batches, the rest reported) and pool texts (resumable).

A batch is stored all-or-none by the service. When it rejects one (422) and its error
details point at rows (`loc: ["body", "samples", i, ...]`), those rows are reported and the
rest of the batch is sent once more, so one bad row does not cost 499 good ones. Resending
is harmless: the service returns the stored id for a sample it already has. Such a row stores nothing: the
report lists it apart (`ImportReport.duplicates`, from the service's `duplicates`), so `stored` counts the
rows the model gained and every input row is stored, a duplicate, or an error.

Pool texts go in batches that shrink when the service is slow (a timeout, a 5xx or a 429 halves the batch,
after the client's own retries), so an import on a busy service finishes instead of failing whole. If it must
stop, the report says how many texts (from the start) are stored and the import resumes from there; the pool
keeps one copy of a text, so a resent batch adds nothing twice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Protocol

import httpx
import pydantic

from core.client import errors
from core.client.models import Duplicate, ImportReport, PoolImportReport, RowError, SampleInput, Trait
from core.client.paths import path as _path
from core.client.retry import NOT_SENT_ERRORS, Safety
from core.contract import MAX_POOL_TEXTS_PER_REQUEST, MAX_SAMPLES_PER_REQUEST, InputProvenance
from core.json_types import JsonObject


class Client(Protocol):
    """What an import needs of `core.client.Client`, said here so this module never imports the client
    (which calls it): its requests, with their retries, and its pause (replaced in tests to observe it)."""

    _sleep: Callable[[float], None]

    def request(
        self, method: str, path: str, *, safety: Safety = ..., json: object = ...
    ) -> httpx.Response: ...


POOL_BATCH = (
    250  # pool texts a request: the service embeds each one, a 1,000-text batch can outlast a timeout
)
MIN_POOL_BATCH = 10  # below this a failing batch is not the batch's size: the import stops and says so
POOL_FAILURES = 4  # failed batches in a row (each after the client's retries) before the import stops


def import_samples(
    client: Client,
    handle: str,
    samples: Iterable[SampleInput | Mapping[str, object]],
    *,
    batch_size: int = MAX_SAMPLES_PER_REQUEST,
    progress: Callable[[int, int], None] | None = None,
    provenance: InputProvenance | None = None,
    labels: Mapping[object, float] | None = None,
    twins: Callable[[list[JsonObject]], list[int | None]] | None = None,
    strict: bool = False,
) -> ImportReport:
    """`labels` maps a row's `quality` cell (a label such as "SUBJ") to its quality; a cell it does not name
    is the row's error. `twins` finds the stored sample each row repeats (None: none): when the model takes
    no samples now (409 `model_not_draft` after training, `model_busy` while it trains) and every row repeats
    a stored sample, the import stores nothing and reports them as duplicates, so an import cell runs twice
    whenever; a new row raises the 409. `strict`: a row refused here raises `ImportRowsError` before anything
    is sent, a row the service refused raises it after the rest is stored."""
    batch_size = max(1, min(MAX_SAMPLES_PER_REQUEST, int(batch_size)))
    rows = list(samples)
    total = len(rows)
    errs: list[RowError] = []
    valid: list[tuple[int, JsonObject]] = []
    for index, row in enumerate(rows):
        try:
            if labels is not None and isinstance(row, Mapping) and "quality" in row:
                row = {**row, "quality": label_quality(row["quality"], labels)}
            item = row if isinstance(row, SampleInput) else SampleInput.model_validate(row)
        except pydantic.ValidationError as exc:
            errs.append(RowError(index=index, row=_plain(row), message=_pydantic_message(exc), stage="local"))
            continue
        except UnknownLabel as exc:
            errs.append(RowError(index=index, row=_plain(row), message=str(exc), stage="local"))
            continue
        if provenance is not None and item.provenance is None:
            item = item.model_copy(update={"provenance": provenance})
        valid.append((index, item.model_dump(exclude_none=True)))

    if strict and errs:
        raise errors.ImportRowsError(handle, ImportReport(total=total, errors=errs), sent=False)
    done = total - len(valid)
    if progress is not None:
        progress(done, total)

    stored: dict[int, int] = {}
    seen: set[int] = set()  # ids answered so far
    duplicates: list[Duplicate] = []
    path = _path("models", handle, "samples")
    batches = 0
    in_evaluation_set = 0

    repeats: set[int] = set()  # positions of the batch last sent that stored nothing (duplicates)

    def send(batch: list[tuple[int, JsonObject]]) -> list[int]:
        nonlocal batches, in_evaluation_set, repeats
        batches += 1
        body = {"samples": [payload for _, payload in batch]}
        answer = client.request("POST", path, json=body, safety=Safety.ONCE).json()
        in_evaluation_set += int(answer.get("in_evaluation_set") or 0)  # absent from older services
        repeats = {int(i) for i in answer.get("duplicates") or ()}  # absent from older services
        return [int(i) for i in answer.get("ids", [])]

    for start in range(0, len(valid), batch_size):
        batch = valid[start : start + batch_size]
        processed = len(batch)
        try:
            ids = send(batch)
        except KeyboardInterrupt:  # Ctrl-C while the batch was on its way: the service may have stored it
            raise Interrupted([payload for _, payload in batch]) from None
        except errors.ConflictError as exc:
            if exc.code not in ("model_not_draft", "model_busy") or start or twins is None:
                raise
            found = twins([payload for _, payload in valid])
            if not all(found):  # a new row: it needs a draft (client.reopen names it) or the run's end
                if exc.code == "model_busy":
                    run = f", {exc.run_id!r}" if exc.run_id else ""
                    exc.hint = (
                        "Some rows are new, and a model takes samples only between runs: "
                        f"client.wait({handle!r}{run}), then import again (nothing of this import was "
                        "stored)."
                    )
                raise
            return ImportReport(
                total=total,
                ids=[int(i) for i in found if i is not None],
                duplicates=[
                    Duplicate(index=index, id=int(i)) for (index, _), i in zip(valid, found, strict=True) if i
                ],
                errors=sorted(errs, key=lambda e: e.index),
                batches=0,
            )
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
        for pos, ((index, _), sample_id) in enumerate(zip(batch, ids, strict=False)):
            # A duplicate stored nothing: the service says so; an older one only by repeating an id.
            if pos in repeats or sample_id in seen:
                duplicates.append(Duplicate(index=index, id=sample_id))
            seen.add(sample_id)
            stored[index] = sample_id
        done += processed
        if progress is not None:
            progress(done, total)

    errs.sort(key=lambda e: e.index)
    report = ImportReport(
        total=total,
        ids=[stored[i] for i in sorted(stored)],
        duplicates=duplicates,
        errors=errs,
        batches=batches,
        in_evaluation_set=in_evaluation_set,
    )
    if strict and errs:
        raise errors.ImportRowsError(handle, report, sent=True)
    return report


class Interrupted(KeyboardInterrupt):
    """Ctrl-C while a batch was being sent: `in_flight` holds its rows, which the service may have stored."""

    def __init__(self, in_flight: list[JsonObject]) -> None:
        super().__init__()
        self.in_flight = in_flight


class UnknownLabel(ValueError):
    """A `quality` cell that `labels=` does not name."""


def label_quality(cell: object, labels: Mapping[object, float]) -> float:
    if cell in labels:
        return labels[cell]
    if isinstance(cell, str) and cell.strip() in labels:
        return labels[cell.strip()]
    raise UnknownLabel(f"quality {cell!r} is none of the labels given ({', '.join(map(repr, labels))})")


def label_map(labels: Mapping[object, object]) -> dict[object, float]:
    """`labels=` checked: each label's quality a number in [0, 1] (`{"SUBJ": 1, "OBJ": 0}`)."""
    out: dict[object, float] = {}
    for label, quality in labels.items():
        if isinstance(quality, bool) or not isinstance(quality, int | float) or not 0.0 <= quality <= 1.0:
            raise ValueError(
                f"labels: {label!r} maps to {quality!r}; each label's quality is a number in [0, 1]"
            )
        out[label] = float(quality)
    return out


def check_quality_cells(
    rows: Sequence[object],
    labels: Mapping[object, float] | None,
    traits: Callable[[], Sequence[Trait]] = list,
) -> None:
    """A `ValueError` before anything is sent when the quality column cannot be what was meant: `labels=`
    leaves some of its labels out (a mapping written for another file's spelling, `{"SUB": 1}` for "SUBJ",
    would refuse every such row one by one), or it holds labels, no number, and `labels=` is not given.
    `traits` (asked only then) gives the poles the hint's example follows."""
    cells = [row["quality"] for row in rows if isinstance(row, Mapping) and row.get("quality") is not None]
    if labels is not None:
        unknown: dict[object, int] = {}
        for cell in cells:
            if not _named(cell, labels):
                unknown[cell] = unknown.get(cell, 0) + 1
        if unknown:
            found = ", ".join(f"{label!r} ({n} row{'s' if n != 1 else ''})" for label, n in unknown.items())
            raise ValueError(
                f"labels= does not name every label of the quality column: {found} "
                f"(labels given: {', '.join(map(repr, labels))}); nothing was sent: map every label, or "
                "leave those rows out first"
            )
        return
    words = sorted({str(c) for c in cells if not _number(c)})
    if cells and len(words) == len({str(c) for c in cells}):  # labels only, not a number among them
        named = {str(row["trait"]) for row in rows if isinstance(row, Mapping) and row.get("trait")}
        raise ValueError(
            f"the quality column holds labels ({', '.join(map(repr, words[:5]))}), not numbers in [0, 1]: "
            f"map them to qualities with labels=: {_labels_hint(words, named, traits)}"
        )


def _labels_hint(words: list[str], named: set[str], traits: Callable[[], Sequence[Trait]]) -> str:
    """How to write `labels=` for these labels: 1 is a trait's positive pole, 0 its negative. The example is
    filled in only when the labels name the one trait's poles (`SUBJ` for "subjective"), so copied it does
    what it says; otherwise its qualities are `...`, which `labels=` refuses until each is chosen."""
    found = [t for t in traits() if t.key in named or t.name.casefold() in {n.casefold() for n in named}]
    trait = found[0] if len(found) == 1 else None
    blank = f"labels={{{', '.join(f'{w!r}: ...' for w in words[:4])}}}, writing for each ..."
    if trait is None:
        return f"{blank} 1 if the label means its trait's positive pole, 0 if its negative"
    ones = [w for w in words if _pole_word(w, trait.positive_label)]
    zeros = [w for w in words if _pole_word(w, trait.negative_label)]
    poles = f"1 if the label means {trait.positive_label!r}, 0 if it means {trait.negative_label!r}"
    if len(words) == 2 and (len(ones), len(zeros)) in ((1, 0), (0, 1), (1, 1)) and set(ones) != set(zeros):
        one = ones[0] if ones else next(w for w in words if w not in zeros)
        zero = next(w for w in words if w != one)
        return f"labels={{{one!r}: 1, {zero!r}: 0}} ({poles}: the poles of trait {trait.key!r})"
    return f"{blank} {poles} (the poles of trait {trait.key!r})"


def _pole_word(label: str, pole: str) -> bool:
    """Whether a file's label names a pole: the same word, or one cut short of the other ("SUBJ" and
    "subjective", "pos" and "positive"), in any case."""
    a, b = label.strip().casefold(), pole.strip().casefold()
    return bool(a and b) and (a == b or (min(len(a), len(b)) >= 3 and (a.startswith(b) or b.startswith(a))))


def _named(cell: object, labels: Mapping[object, float]) -> bool:
    return cell in labels or (isinstance(cell, str) and cell.strip() in labels)


def _number(cell: object) -> bool:
    if isinstance(cell, bool):
        return False
    if isinstance(cell, int | float):
        return True
    try:
        float(str(cell))
    except ValueError:
        return False
    return True


def import_pool(
    client: Client,
    handle: str,
    texts: Sequence[str],
    *,
    start: int = 0,
    batch_size: int = POOL_BATCH,
    progress: Callable[[int, int], None] | None = None,
    metadata: Sequence[JsonObject | None] | None = None,
) -> PoolImportReport:
    """Add `texts[start:]` to the pool; `progress(stored, total)` after each batch (counted from index 0).
    `metadata` (one per text, None: none) is kept beside each new text.

    Slow-service errors (timeouts, 5xx, 429) halve the batch down to `MIN_POOL_BATCH` and try again after a
    pause (a batch that goes through doubles it again, up to `batch_size`). After `POOL_FAILURES` failures in
    a row at the smallest size, a service that cannot be reached at all (the client's own retries of the
    connection done: no smaller batch would help), or any other refusal (422, 404, 409), the import stops and
    the report carries the error and `stored`, the index to resume from.
    """
    total = len(texts)
    initial = size = max(1, min(MAX_POOL_TEXTS_PER_REQUEST, int(batch_size)))
    report = PoolImportReport(total=total, stored=max(0, min(int(start), total)))
    path = _path("models", handle, "pool")
    failures = 0
    if progress is not None:
        progress(report.stored, total)
    while report.stored < total:
        batch = list(texts[report.stored : report.stored + size])
        sent: JsonObject = {"texts": batch}
        if metadata is not None:
            sent["metadata"] = list(metadata[report.stored : report.stored + size])
        report.batches += 1
        try:
            body = client.request("POST", path, json=sent).json()
        except (errors.TransportError, errors.ServerError, errors.RateLimitError) as exc:
            if isinstance(
                exc.__cause__, NOT_SENT_ERRORS
            ):  # nothing listens there: stop in seconds, not minutes
                report.error = _stopped(report.stored, total, exc)
                break
            failures += 1
            if failures >= POOL_FAILURES and size <= MIN_POOL_BATCH:
                report.error = _stopped(report.stored, total, exc)
                break
            size = max(MIN_POOL_BATCH, size // 2)
            client._sleep(min(2.0**failures, 30.0))  # the client's own sleep (observable in tests)
            continue
        except errors.ApiError as exc:
            report.error = _stopped(report.stored, total, exc)
            break
        failures = 0
        size = min(initial, size * 2)  # the service recovered: grow back toward the requested size
        report.ids += [int(i) for i in body.get("ids", [])]
        report.added += int(body.get("added", 0))
        report.in_evaluation_set += int(body.get("in_evaluation_set") or 0)  # absent from older services
        report.duplicates += [report.stored + int(i) for i in body.get("duplicates") or ()]  # idem
        report.labelled += int(body.get("labelled") or 0)  # idem
        report.stored += len(batch)
        if progress is not None:
            progress(report.stored, total)
    return report


def _stopped(stored: int, total: int, exc: Exception) -> str:
    """Why an import stopped, naming the text (1-based, in the whole input) when the service did."""
    index = stored
    if isinstance(exc, errors.ValidationError):  # per-text errors sit under loc ["body", "texts", i]
        for d in exc.details:
            loc = list(d.get("loc") or []) if isinstance(d, Mapping) else []
            if len(loc) > 2 and loc[1] == "texts" and isinstance(loc[2], int):
                index = stored + loc[2]
                break
    return f"stopped at text {index + 1} of {total}: {exc}"


def _whole_batch(
    batch: list[tuple[int, JsonObject]], rows: Sequence[object], exc: errors.ApiError
) -> list[RowError]:
    message = f"batch rejected: {exc.code}: {exc.message}"
    return [RowError(index=i, row=_plain(rows[i]), message=message, stage="server") for i, _ in batch]


def _rows_in_details(details: list[object], batch_len: int) -> dict[int, str]:
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


def _plain(row: object) -> object:
    if isinstance(row, pydantic.BaseModel):
        return row.model_dump()
    if isinstance(row, Mapping):
        return dict(row)
    return row
