"""Which version trained a label: the one rule behind one's own labels' `trained` (and the 409
`label_trained` it guards), the votes export's and a text history's `version_no`, so no two routes say
different things of one label.

A label is trained when a version took it in as it stands: accepted, with the quality it has. A training
records in a sample's `trained_in` the version that counted it; a correction, or a decision that changes
whether it trains, clears it (the next training that reads it names itself). A training reads, but does
not count, an accepted vote its annotator's own later vote superseded (a settle, say) or one of a gold text
(never trained on); such a vote is named by the first version whose training read it, as the others of
its time, so one's own labels do not single out a gold text. A gold answer follows the same rule from
its times (gold_labels.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import exists, select
from sqlalchemy.orm import Session, aliased

from service.store.gold import gold_keys
from service.store.schema import Model, Run, SampleRow, Trait, Version


def trainings(s: Session, model: Model) -> list[tuple[int, datetime, bool]]:
    """(number, start, whether it took the buffer in) of the model's versions, oldest first: when each
    training read the labels. A retraining, or a training of a reopened draft, folds the buffer in."""
    rows = s.execute(
        select(Version.version_no, Version.created_at, Run.started_at, Run.kind, Run.options)
        .outerjoin(Run, Run.id == Version.run_id)
        .where(Version.model_id == model.id)
        .order_by(Version.version_no)
    ).all()
    return [
        (number, started or made, kind == "retrain" or bool((options or {}).get("with_feedback")))
        for number, made, started, kind, options in rows
    ]


def superseded(s: Session, model: Model, rows: Sequence[SampleRow]) -> set[int]:
    """Ids of `rows` their annotator's own later vote on the text (a settle, say) superseded: no training
    counts them, yet one read each stored before it."""
    if not rows:
        return set()
    later = aliased(SampleRow)
    newer = exists().where(
        later.model_id == model.id,
        later.trait_id == SampleRow.trait_id,
        later.content_sha256 == SampleRow.content_sha256,
        later.annotator == SampleRow.annotator,
        later.id > SampleRow.id,
    )
    ids = [r.id for r in rows if r.annotator is not None]
    return set(s.scalars(select(SampleRow.id).where(SampleRow.id.in_(ids), newer))) if ids else set()


def sample_versions(s: Session, model: Model, rows: Sequence[SampleRow]) -> dict[int, int | None]:
    """{id: the version that trained the sample as it stands, or None} for `rows`: THE rule (above)."""
    out: dict[int, int | None] = {r.id: None for r in rows}
    accepted = [r for r in rows if r.review == "accepted"]
    out |= {r.id: r.trained_in for r in accepted if r.trained_in is not None}
    uncounted = [r for r in accepted if r.trained_in is None]
    if not uncounted:
        return out
    gold = gold_keys(s, model.id)
    keys = dict(s.execute(select(Trait.id, Trait.key).where(Trait.model_id == model.id)).tuples().all())
    read = superseded(s, model, uncounted) | {
        r.id for r in uncounted if (keys.get(r.trait_id), r.content_sha256) in gold
    }
    if not read:
        return out
    versions = trainings(s, model)
    for r in uncounted:
        if r.id in read:
            out[r.id] = next((n for n, start, _ in versions if r.created_at <= start), None)
    return out
