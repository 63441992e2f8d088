"""What a training needs before it may start, and the fingerprint that makes a run's request idempotent."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.contract import POSITIVE_THRESHOLD, is_positive
from service.errors import ApiError
from service.tables import Model, SampleRow, Trait, Version


def check_trainable(session: Session, model: Model) -> None:
    """422 before anything is queued: at least one trait; each trait has samples on both poles or
    none (zero-shot). A trait that the active version trained from samples may not fall back to
    zero-shot (zero-data-retention purged its samples): re-optimizing it would discard what they taught.
    """
    traits = session.scalars(select(Trait).where(Trait.model_id == model.id).order_by(Trait.id)).all()
    if not traits:
        raise ApiError(422, "no_traits", "Add at least one trait before training.")
    active = session.get(Version, model.current_version_id) if model.current_version_id is not None else None
    trained = (active.metrics or {}).get("traits", {}) if active is not None else {}
    for t in traits:
        qualities = list(session.scalars(select(SampleRow.quality).where(SampleRow.trait_id == t.id)))
        positive = any(is_positive(q) for q in qualities)
        negative = any(not is_positive(q) for q in qualities)
        if positive and negative:
            continue
        if not qualities:
            was = trained.get(t.key)
            if not isinstance(was, dict) or was.get("method") == "zero_shot":
                continue  # zero-shot: the axis comes from the trait's pole labels and description
            raise ApiError(
                422,
                "trait_one_pole",
                f"Trait {t.key!r} was trained from samples that are gone (zero-data-retention deletes "
                f"them); it needs samples on both poles (quality >= {POSITIVE_THRESHOLD} and below) to be "
                "trained again.",
            )
        raise ApiError(
            422,
            "trait_one_pole",
            f"Trait {t.key!r} needs samples on both poles (quality >= {POSITIVE_THRESHOLD} and below), "
            "or none at all to be trained zero-shot from its labels.",
        )


def fingerprint(session: Session, model: Model, exclude_provenance: str, extrinsic_only: bool) -> str:
    """Traits and samples as the caller supplied them, ignoring what earlier runs of this kind added,
    so that repeating a completed run is recognised as a repeat."""
    traits = session.scalars(select(Trait).where(Trait.model_id == model.id)).all()
    if extrinsic_only:
        traits = [t for t in traits if t.kind == "extrinsic"]
    trait_part = sorted(
        (t.key, t.name, t.positive_label, t.negative_label, t.description, t.aggregation) for t in traits
    )
    keys = {t.id: t.key for t in traits}
    sample_part = sorted(
        (keys[tid], sha, q)
        for tid, sha, q in session.execute(
            select(SampleRow.trait_id, SampleRow.content_sha256, SampleRow.quality).where(
                SampleRow.model_id == model.id, SampleRow.provenance != exclude_provenance
            )
        ).all()
        if tid in keys
    )
    return hashlib.sha256(json.dumps([trait_part, sample_part]).encode()).hexdigest()


def idempotency_key(kind: str, options: dict[str, Any], fp: str) -> str:
    return hashlib.sha256(json.dumps([kind, options, fp], sort_keys=True).encode()).hexdigest()


def sample_count(session: Session, model: Model) -> int:
    return len(session.scalars(select(SampleRow.id).where(SampleRow.model_id == model.id).limit(1)).all())
