"""Samples as the engine sees them: read a model's traits and samples, add samples without duplicates, and
the feedback a retraining cannot use yet. The samples resource (service/domain/samples.py) and the background
runs (service/runs/) both use these, inside a transaction they hold."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import cast

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.contract import Aggregation, is_positive
from core.engine.types import Sample, TraitSpec
from service.store.tables import FeedbackLabel, SampleRow, Trait, utcnow


def held_feedback(feedback: list[FeedbackLabel], samples: list[Sample]) -> list[FeedbackLabel]:
    """Feedback a retraining cannot use yet: labels of a zero-shot trait (no samples) that cover one
    pole only would make the trait untrainable, so they stay buffered until the other pole has some."""
    poles: dict[str, set[bool]] = {}
    labels = [*((x.trait, x.quality) for x in samples), *((f.trait_key, f.quality) for f in feedback)]
    for key, quality in labels:
        poles.setdefault(key, set()).add(is_positive(quality))
    return [f for f in feedback if len(poles[f.trait_key]) < 2]


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def trait_specs(traits: list[Trait]) -> list[TraitSpec]:
    return [
        TraitSpec(
            key=t.key,
            name=t.name,
            positive_label=t.positive_label,
            negative_label=t.negative_label,
            description=t.description,
            aggregation=cast(Aggregation, t.aggregation),
        )
        for t in traits
    ]


def load_traits(session: Session, model_id: int) -> list[Trait]:
    return list(session.scalars(select(Trait).where(Trait.model_id == model_id).order_by(Trait.id)))


def load_samples(session: Session, model_id: int) -> list[Sample]:
    rows = session.execute(
        select(SampleRow.id, Trait.key, SampleRow.text, SampleRow.quality)
        .join(Trait, Trait.id == SampleRow.trait_id)
        .where(SampleRow.model_id == model_id)
        .order_by(SampleRow.id)
    ).all()
    return [Sample(trait=key, text=text, quality=q, id=sid) for sid, key, text, q in rows]


def add_samples(
    session: Session,
    model_id: int,
    trait_ids: dict[str, int],
    samples: list[Sample],
    provenance: str,
    annotators: Sequence[str | None] | None = None,
    adjudicated: Sequence[bool] | None = None,
) -> list[int]:
    """Insert samples, skipping exact duplicates (same trait, text, quality, annotator and adjudication);
    returns ids in input order. `annotators` (per sample; default none: machine-made) say who gave each."""
    ids: list[int] = []
    for i, s in enumerate(samples):
        trait_id = trait_ids[s.trait]
        digest = sha256(s.text)
        annotator = annotators[i] if annotators is not None else None
        settles = adjudicated[i] if adjudicated is not None else False
        existing = session.scalar(
            select(SampleRow.id)
            .where(
                SampleRow.model_id == model_id,
                SampleRow.trait_id == trait_id,
                SampleRow.content_sha256 == digest,
                SampleRow.quality == float(s.quality),
                SampleRow.annotator.is_(None) if annotator is None else SampleRow.annotator == annotator,
                SampleRow.adjudicated == settles,
            )
            .limit(1)
        )
        if existing is not None:
            ids.append(existing)
            continue
        row = SampleRow(
            model_id=model_id,
            trait_id=trait_id,
            text=s.text,
            quality=float(s.quality),
            provenance=provenance,
            content_sha256=digest,
            annotator=annotator,
            adjudicated=settles,
            created_at=utcnow(),
        )
        session.add(row)
        session.flush()
        ids.append(row.id)
    return ids
