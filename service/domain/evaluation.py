"""A version's stored evaluation on the model's evaluation set, and the labelled scores it holds."""

from __future__ import annotations

from typing import Any

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from service.errors import ApiError
from service.tables import EvalItem, Evaluation, Model, Version


def stored_evaluation(s: Session, model: Model, version: Version) -> Evaluation:
    """The version's latest evaluation, with per-item scores (404 / 409 otherwise)."""
    found = latest_evaluation(s, model.id, version.version_no)
    if found is None:
        raise ApiError(
            404, "evaluation_not_found", f"v{version.version_no} of {model.handle} was not evaluated yet."
        )
    if "item_scores" not in found.metrics:
        raise ApiError(
            409,
            "evaluation_outdated",
            f"The evaluation of v{version.version_no} predates per-item scores: evaluate the version again.",
        )
    return found


def labelled_scores(s: Session, found: Evaluation, trait: str) -> tuple[np.ndarray, np.ndarray]:
    """(scores, quality) of one trait's items that are still in the evaluation set."""
    scores = item_scores(found.metrics["item_scores"], trait)
    quality = dict(
        s.execute(select(EvalItem.id, EvalItem.quality).where(EvalItem.model_id == found.model_id))
        .tuples()
        .all()
    )
    ids = [i for i in scores if i in quality]
    return np.array([scores[i] for i in ids]), np.array([quality[i] for i in ids])


def latest_evaluation(s: Session, model_id: int, version_no: int) -> Evaluation | None:
    """The newest stored evaluation of one version, or None."""
    return s.scalar(
        select(Evaluation)
        .where(Evaluation.model_id == model_id, Evaluation.version_no == version_no)
        .order_by(Evaluation.id.desc())
        .limit(1)
    )


def item_scores(stored: dict[str, Any], trait: str) -> dict[int, float]:
    """{eval item id: score} of one trait from an evaluation's `metrics["item_scores"]`."""
    return {int(i): float(v) for i, v in stored.get(trait, [])}
