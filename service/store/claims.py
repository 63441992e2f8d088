"""Claims on pool texts and the votes a text has: what decides who may be handed a text next.

A claim (tables.PoolClaim) holds one pool text for one person and trait until it expires. A text's votes
for a trait are its labels, counted as training counts them (core/engine/votes.py): one per named
annotator, one per unattributed label; both the samples and the buffered feedback are votes.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from service.store.db import rows_changed
from service.store.samples import sha256
from service.store.schema import FeedbackLabel, PoolClaim, SampleRow, content_key, key_of


@dataclass
class Voters:
    """Who voted on one text for one trait."""

    names: set[str] = field(default_factory=set)
    unattributed: int = 0

    @property
    def count(self) -> int:
        return len(self.names) + self.unattributed

    def add(self, annotator: str | None) -> None:
        if annotator is None:
            self.unattributed += 1
        else:
            self.names.add(annotator)


def tally(labels: Iterable[tuple[str, str | None]]) -> dict[str, Voters]:
    """{content hash: voters} of (text, annotator) labels."""
    out: dict[str, Voters] = {}
    for text, annotator in labels:
        out.setdefault(sha256(text), Voters()).add(annotator)
    return out


def votes_on(
    s: Session, model_id: int, trait_id: int, trait_key: str, digests: Collection[str]
) -> dict[str, Voters]:
    """The voters of these texts (content hashes) for a trait, read now: samples through the (model, trait,
    content key) index, and the feedback buffer (a few dozen labels, or what a paused campaign holds)."""
    if not digests:
        return {}
    keys = {key_of(d) for d in digests}
    samples = s.execute(
        select(SampleRow.content_sha256, SampleRow.annotator).where(
            SampleRow.model_id == model_id,
            SampleRow.trait_id == trait_id,
            content_key(SampleRow.content_sha256).in_(keys),
        )
    ).tuples()
    out: dict[str, Voters] = {}
    for digest, annotator in samples:
        if digest in digests:
            out.setdefault(digest, Voters()).add(annotator)
    feedback = s.execute(
        select(FeedbackLabel.text, FeedbackLabel.annotator).where(
            FeedbackLabel.model_id == model_id, FeedbackLabel.trait_key == trait_key
        )
    ).tuples()
    for text, annotator in feedback:
        digest = sha256(text)
        if digest in digests:
            out.setdefault(digest, Voters()).add(annotator)
    return out


def live_claims(s: Session, model_id: int, trait_key: str, now: datetime) -> list[tuple[int, str, datetime]]:
    """(pool text id, annotator, expires at) of the trait's unexpired claims, oldest claim first."""
    rows = s.execute(
        select(PoolClaim.pool_text_id, PoolClaim.annotator, PoolClaim.expires_at)
        .where(
            PoolClaim.model_id == model_id,
            PoolClaim.trait_key == trait_key,
            PoolClaim.expires_at > now,
        )
        .order_by(PoolClaim.claimed_at, PoolClaim.id)
    ).tuples()
    return list(rows)


def held_by(s: Session, model_id: int, trait_key: str, annotator: str, now: datetime) -> dict[int, int]:
    """{pool text id: cap} of `annotator`'s unexpired claims on the trait."""
    rows = s.execute(
        select(PoolClaim.pool_text_id, PoolClaim.cap).where(
            PoolClaim.model_id == model_id,
            PoolClaim.trait_key == trait_key,
            PoolClaim.annotator == annotator,
            PoolClaim.expires_at > now,
        )
    ).tuples()
    return dict(rows.all())


def release_all_but(s: Session, model_id: int, trait_key: str, annotator: str, keep: Collection[int]) -> None:
    """Drop `annotator`'s claims on the trait except those on `keep`: a claim lasts while it is shown."""
    q = delete(PoolClaim).where(
        PoolClaim.model_id == model_id,
        PoolClaim.trait_key == trait_key,
        PoolClaim.annotator == annotator,
    )
    if keep:
        q = q.where(PoolClaim.pool_text_id.not_in(list(keep)))
    s.execute(q)


def drop_expired(s: Session, model_id: int, now: datetime) -> None:
    """Expired claims go before new ones are granted: the unique (text, trait, person) row of an expired
    claim would otherwise refuse that person the text again."""
    s.execute(delete(PoolClaim).where(PoolClaim.model_id == model_id, PoolClaim.expires_at <= now))


def release(s: Session, model_id: int, pool_text_id: int, annotator: str, trait_key: str | None) -> int:
    """Drop `annotator`'s claims on a text (for one trait, or every trait); how many there were."""
    q = delete(PoolClaim).where(
        PoolClaim.model_id == model_id,
        PoolClaim.pool_text_id == pool_text_id,
        PoolClaim.annotator == annotator,
    )
    if trait_key is not None:
        q = q.where(PoolClaim.trait_key == trait_key)
    return rows_changed(s, q)
