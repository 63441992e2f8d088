"""Reviewers' corrections of labels (docs/api/review.md, "Corrections"): what each label said before."""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import select
from sqlalchemy.orm import Session

from service.store.campaign_schema import LabelCorrection
from service.store.schema import MAX_INT


def corrections_of(s: Session, model_id: int, ids: Collection[int]) -> dict[int, list[LabelCorrection]]:
    """The corrections of each of these labels of a model, oldest first (labels never corrected: absent)."""
    wanted = sorted(i for i in set(ids) if 1 <= i <= MAX_INT)  # PostgreSQL refuses a larger one
    out: dict[int, list[LabelCorrection]] = {}
    for start in range(0, len(wanted), 500):
        rows = s.scalars(
            select(LabelCorrection)
            .where(
                LabelCorrection.model_id == model_id,
                LabelCorrection.label_id.in_(wanted[start : start + 500]),
            )
            .order_by(LabelCorrection.id)
        )
        for r in rows:
            out.setdefault(r.label_id, []).append(r)
    return out
