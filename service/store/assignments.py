"""Assigned pool texts, and the pool's search filter: what the queue, the pool's list and an assignment read.

A person has labelled an assigned text once they voted on it for any trait (a sample or a buffered label of
theirs with its text); until then it is theirs alone, kept from colleagues' queues.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ColumnElement, String, cast, select
from sqlalchemy.orm import Session

from service.store.campaign_schema import PoolAssignment
from service.store.samples import sha256
from service.store.schema import FeedbackLabel, PoolText, SampleRow


@dataclass(frozen=True)
class PoolFilter:
    """Which pool texts: every condition given must hold. A new condition is a field here and its clause in
    `conditions`; the pool's list, an assignment and the Label page's search all take it from here."""

    q: str | None = None
    #: (key, value) pairs: the text's metadata `key` has `value`, compared as text (the number 3 matches "3").
    meta: tuple[tuple[str, str], ...] = ()

    def key(self) -> str:
        """Every condition, unambiguously: a listing's cursor is scoped to it (never continues another)."""
        return json.dumps([self.q, self.meta], ensure_ascii=False)

    def conditions(self) -> list[ColumnElement[bool]]:
        out: list[ColumnElement[bool]] = []
        if self.q:
            # A phrase, not a pattern: LIKE's own characters in it are literal.
            phrase = self.q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            out.append(PoolText.text.ilike(f"%{phrase}%", escape="\\"))
        out.extend(cast(PoolText.meta[key].as_string(), String) == value for key, value in self.meta)
        return out


def voted_digests(s: Session, model_id: int, annotators: Collection[str]) -> dict[str, set[str]]:
    """{annotator: content hashes of the texts they voted on, any trait} for these people on the model."""
    out: dict[str, set[str]] = {a: set() for a in annotators}
    if not annotators:
        return out
    names = list(annotators)
    for annotator, digest in s.execute(
        select(SampleRow.annotator, SampleRow.content_sha256).where(
            SampleRow.model_id == model_id, SampleRow.annotator.in_(names)
        )
    ).tuples():
        if annotator is not None:
            out[annotator].add(digest)
    for annotator, text in s.execute(
        select(FeedbackLabel.annotator, FeedbackLabel.text).where(
            FeedbackLabel.model_id == model_id, FeedbackLabel.annotator.in_(names)
        )
    ).tuples():
        if annotator is not None:
            out[annotator].add(sha256(text))
    return out


def assigned(s: Session, model_id: int, annotator: str | None = None) -> list[tuple[int, str, str]]:
    """(pool text id, annotator, content hash) of the model's assignments (one person's, if named), in the
    order they were given."""
    q = (
        select(PoolAssignment.pool_text_id, PoolAssignment.annotator, PoolText.content_sha256)
        .join(PoolText, PoolText.id == PoolAssignment.pool_text_id)
        .where(PoolAssignment.model_id == model_id)
        .order_by(PoolAssignment.id)
    )
    if annotator is not None:
        q = q.where(PoolAssignment.annotator == annotator)
    return list(s.execute(q).tuples())


def open_assignments(s: Session, model_id: int, annotator: str) -> list[int]:
    """The pool texts assigned to `annotator` that they have not voted on yet, in the order given."""
    rows = assigned(s, model_id, annotator)
    done = voted_digests(s, model_id, [annotator])[annotator]
    return [pid for pid, _, digest in rows if digest not in done]


def labelled_since(s: Session, model_id: int, annotator: str, since: datetime | None) -> int:
    """Texts `annotator` labelled on the model (any trait; a text counts once) since then, or in all."""
    samples = select(SampleRow.content_sha256).where(
        SampleRow.model_id == model_id, SampleRow.annotator == annotator
    )
    feedback = select(FeedbackLabel.text).where(
        FeedbackLabel.model_id == model_id, FeedbackLabel.annotator == annotator
    )
    if since is not None:
        samples = samples.where(SampleRow.created_at >= since)
        feedback = feedback.where(FeedbackLabel.created_at >= since)
    digests = set(s.scalars(samples)) | {sha256(t) for t in s.scalars(feedback)}
    return len(digests)
