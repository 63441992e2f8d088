"""Migrating thresholds from Perspective logs: logged scores become soft labels of a model of your own.

A Perspective user has logged scores (`TOXICITY`, …) for their comments but few labels. Each logged score is
taken as a soft label (quality = the score) of the trait named after the attribute; most rows train the
model, the held-out rest measure how well it agrees with the logged scores: ROC-AUC against "flagged at the
old threshold", Spearman's rank correlation, and the threshold here that flags the same share of held-out
comments as the old threshold flagged there. Decisions: docs/perspective.md ("A migration, end to end").
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from core.json_types import JsonObject

if TYPE_CHECKING:
    import numpy as np

    from core.client.models import ImportReport, Model, RunRef, ScoreResult, Trait


class Client(Protocol):
    """What a migration needs of `core.client.Client`, said here so this module never imports the client
    (whose `migrate_from_perspective` calls it)."""

    def list_traits(self, handle: str) -> list[Trait]: ...

    def add_traits(self, handle: str, traits: Iterable[Mapping[str, object]]) -> list[Trait]: ...

    def import_samples(
        self, handle: str, samples: Iterable[Mapping[str, object]], *, strict: bool = ...
    ) -> ImportReport: ...

    def train(self, handle: str, effort: str | None = ...) -> RunRef: ...

    def wait(self, handle: str, run_id: str | None = ..., *, timeout: float = ...) -> Model: ...

    def score_many(
        self, handle: str, contents: list[str], *, version: str | int | None = ...
    ) -> list[ScoreResult]: ...


@dataclass(frozen=True)
class LoggedComment:
    """One logged comment: its text and the attribute scores Perspective gave it."""

    text: str
    scores: dict[str, float]


@dataclass(frozen=True)
class AttributeAgreement:
    """How a trait trained on one attribute's logged scores agrees with them on the held-out rows."""

    attribute: str
    trait: str
    rows: int  # held-out rows with this attribute
    old_threshold: float
    old_flag_rate: float  # share of held-out rows whose logged score is ≥ old_threshold
    roc_auc: float | None  # new scores vs "flagged by the old threshold"; None without both sides
    spearman: float | None  # rank correlation of new and logged scores; None when either is constant
    threshold: float  # here: flags (score ≥ threshold) the same share of held-out rows, as near as ties allow
    new_flag_rate: float  # the share it does flag


@dataclass
class MigrationReport:
    handle: str
    version_no: int
    train_rows: int
    holdout_rows: int
    samples_added: int
    rejected_rows: int  # samples the service refused (e.g. a text over its limit)
    attributes: list[AttributeAgreement] = field(default_factory=list)


def _score(value: Any, where: str) -> float:  # Any: a log's cell or JSON field, as it came
    if isinstance(value, Mapping):  # a logged Perspective response: {"summaryScore": {"value": …}}
        value = (value.get("summaryScore") or {}).get("value")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: {value!r} is not a score") from None
    if not 0.0 <= number <= 1.0 or math.isnan(number):
        raise ValueError(f"{where}: {number} is not a score between 0 and 1")
    return number


def read_log(
    data: bytes | str,
    *,
    filename: str = "",
    text_column: str = "text",
    attributes: Sequence[str] | None = None,
) -> list[LoggedComment]:
    """Rows of a CSV or JSONL log: a text column plus one column per attribute score (0–1).

    JSONL rows may also hold a logged Perspective response under `attributeScores`. Without `attributes`,
    every other column is an attribute (in CSV, the columns that hold scores). Empty cells are skipped.
    """
    text = data.decode("utf-8-sig") if isinstance(data, bytes) else data
    jsonl = filename.lower().endswith((".jsonl", ".ndjson", ".json")) or text.lstrip().startswith("{")
    records: list[tuple[int, JsonObject]] = []
    if jsonl:
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                row = json.loads(line)
                if not isinstance(row, dict):
                    raise ValueError(f"line {number}: not a JSON object")
                nested = row.pop("attributeScores", None)
                records.append((number, {**row, **(nested or {})}))
    else:
        reader = csv.DictReader(io.StringIO(text))
        records = [(number, dict(row)) for number, row in enumerate(reader, start=2)]
    if attributes is None:
        names = {k for _, row in records for k in row if k != text_column}
        attributes = sorted(n for n in names if all(_is_score(row.get(n)) for _, row in records))
    if not attributes:
        raise ValueError("no attribute columns: name them, or add columns of scores between 0 and 1")
    out = []
    for number, row in records:
        content = row.get(text_column)
        if not isinstance(content, str) or not content.strip():
            raise ValueError(f"row {number}: no {text_column!r}")
        scores = {a: _score(row[a], f"row {number}, {a}") for a in attributes if row.get(a) not in (None, "")}
        if scores:
            out.append(LoggedComment(content, scores))
    return out


def _is_score(value: object) -> bool:
    if value in (None, ""):
        return True
    try:
        _score(value, "")
    except ValueError:
        return False
    return True


def matched_threshold(scores: Sequence[float] | np.ndarray, rate: float) -> float:
    """The threshold flagging (score ≥ threshold) `rate` of `scores`, as near as ties allow."""
    import numpy as np

    ordered = np.sort(np.asarray(scores, dtype=float))[::-1]
    k = int(round(rate * len(ordered)))
    if k <= 0:
        return float(min(1.0, np.nextafter(ordered[0], np.inf)))  # above every score: flags none
    return float(ordered[k - 1])


def agreement(
    attribute: str, trait: str, logged: Sequence[float], new: Sequence[float], old_threshold: float
) -> AttributeAgreement:
    import numpy as np
    from scipy.stats import spearmanr
    from sklearn.metrics import roc_auc_score

    old = np.asarray(logged, dtype=float)
    here = np.asarray(new, dtype=float)
    flagged = old >= old_threshold
    rate = float(flagged.mean())
    auc = float(roc_auc_score(flagged, here)) if 0 < flagged.sum() < len(flagged) else None
    rho = None
    if np.ptp(old) > 0 and np.ptp(here) > 0:
        rho = float(spearmanr(old, here).statistic)
    threshold = matched_threshold(here, rate)
    return AttributeAgreement(
        attribute=attribute,
        trait=trait,
        rows=len(old),
        old_threshold=old_threshold,
        old_flag_rate=round(rate, 6),
        roc_auc=None if auc is None else round(auc, 6),
        spearman=None if rho is None else round(rho, 6),
        threshold=round(threshold, 6),
        new_flag_rate=round(float((here >= round(threshold, 6)).mean()), 6),
    )


def _trait_keys(client: Client, handle: str, attributes: Sequence[str]) -> dict[str, str]:
    """Each attribute's trait key, matched as the service does (key or name, any case); adds missing ones."""

    def find(traits: Sequence[Trait]) -> dict[str, str]:
        by = {t.key.casefold(): t.key for t in traits} | {t.name.casefold(): t.key for t in traits}
        return {a: by[a.casefold()] for a in attributes if a.casefold() in by}

    found = find(client.list_traits(handle))
    missing = [a for a in attributes if a not in found]
    if missing:
        new = [
            {
                "name": a.replace("_", " ").capitalize(),
                "positive_label": a.replace("_", " ").lower(),
                "negative_label": "not " + a.replace("_", " ").lower(),
                "description": f"Trained on logged Perspective {a} scores",
            }
            for a in missing
        ]
        client.add_traits(handle, new)
        found = find(client.list_traits(handle))
    return found


def migrate(
    client: Client,
    handle: str,
    rows: Sequence[LoggedComment],
    *,
    old_threshold: float | Mapping[str, float],
    holdout: float = 0.2,
    seed: int = 0,
    effort: str | None = "low",
    timeout: float = 1800.0,
    progress: Callable[[str], None] | None = None,
) -> MigrationReport:
    import numpy as np

    if not 0.0 < holdout < 1.0:
        raise ValueError("holdout is a share between 0 and 1")
    rows = list(rows) if isinstance(rows, Sequence) else [rows]  # a DataFrame or dict: one stray row
    stray = next((r for r in rows if not isinstance(r, LoggedComment)), None)
    if stray is not None:
        raise TypeError(
            f"migrate takes LoggedComment rows, not {type(stray).__name__}: read a log with "
            "read_log(data, text_column=...)"
        )
    attributes = sorted({a for row in rows for a in row.scores})
    if not attributes:
        raise ValueError("no logged scores")
    per = old_threshold if isinstance(old_threshold, Mapping) else dict.fromkeys(attributes, old_threshold)
    thresholds = {a: float(per[a]) for a in attributes}
    order = np.random.default_rng(seed).permutation(len(rows))
    cut = max(1, int(round(len(rows) * holdout)))
    if len(rows) - cut < 2:
        raise ValueError(f"{len(rows)} rows are too few to train on and hold some out")
    held = [rows[i] for i in order[:cut]]
    train = [rows[i] for i in order[cut:]]
    say = progress or (lambda _message: None)

    keys = _trait_keys(client, handle, attributes)
    samples = [
        {"trait": keys[a], "text": row.text, "quality": score}
        for row in train
        for a, score in row.scores.items()
    ]
    say(f"Importing {len(samples)} soft labels from {len(train)} comments")
    imported = client.import_samples(handle, samples, strict=False)  # refusals: rejected_rows
    say("Training")
    run = client.train(handle, effort=effort)
    model = client.wait(handle, run.run_id, timeout=timeout)
    version_no = int(model.version_no or 0)
    say(f"Scoring {len(held)} held-out comments with v{version_no}")
    results = client.score_many(handle, [row.text for row in held], version=version_no)
    report = MigrationReport(
        handle=handle,
        version_no=version_no,
        train_rows=len(train),
        holdout_rows=len(held),
        samples_added=imported.stored,
        rejected_rows=len(imported.errors),
    )
    for a in attributes:
        pairs = [
            (row.scores[a], next(s.score for s in result.scores if s.trait == keys[a]))
            for row, result in zip(held, results, strict=True)
            if a in row.scores
        ]
        if pairs:
            logged, new = zip(*pairs, strict=True)
            report.attributes.append(agreement(a, keys[a], logged, new, thresholds[a]))
    return report
