"""Samples as the engine sees them: read a model's traits and samples, add samples without duplicates, and
the feedback a retraining cannot use yet. The samples resource (service/domain/samples.py) and the background
runs (service/runs/) both use these, inside a transaction they hold."""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Sequence
from datetime import datetime

from sqlalchemy import insert, select, update
from sqlalchemy.orm import Session

from core.contract import SCALE_TOLERANCE, ReviewStatus, pole_of, scale_point, scale_quality
from core.engine.types import Sample, TraitSpec
from core.json_types import JsonObject
from service.store.db import analyze_after_growth
from service.store.label_ids import next_label_ids
from service.store.schema import FeedbackLabel, SampleRow, Trait, content_key, key_of, utcnow

#: Rows per INSERT and hashes per IN (…) list: under SQLite's and psycopg2's bound-parameter limits.
CHUNK = 500


def held_feedback(feedback: list[FeedbackLabel], samples: list[Sample]) -> list[FeedbackLabel]:
    """Feedback a retraining cannot use yet: labels of a zero-shot trait (no samples) that cover one
    pole only (neutral labels are on neither) would make the trait untrainable, so they stay buffered until
    the other pole has some."""
    poles: dict[str, set[str]] = {}
    labels = [*((x.trait, x.quality) for x in samples), *((f.trait_key, f.quality) for f in feedback)]
    for key, quality in labels:
        poles.setdefault(key, set()).add(pole_of(quality))
    return [f for f in feedback if not {"positive", "negative"} <= poles[f.trait_key]]


def fold_feedback(session: Session, model_id: int, feedback: Sequence[FeedbackLabel]) -> None:
    """Buffered labels become samples (a retraining took them in), each a row of its own under the id it
    was given (a label keeps its id for life: service/store/label_ids.py), with its annotator, review and the
    time it was given: the Team page's pace and the votes export read when a label was given, never when a
    retraining folded it in."""
    trait_ids = {t.key: t.id for t in load_traits(session, model_id)}
    scales = trait_scales(session, set(trait_ids.values()))
    rows: list[dict[str, object]] = [
        {
            "id": f.id,
            "model_id": model_id,
            "trait_id": trait_ids[f.trait_key],
            "text": f.text,
            "quality": float(f.quality),
            "point": label_point(f.quality, scales.get(trait_ids[f.trait_key])),
            "provenance": "feedback",
            "source_url": None,
            "source_id": None,
            "content_sha256": sha256(f.text),
            "annotator": f.annotator,
            "adjudicated": False,
            "created_at": f.created_at,
            "review": f.review,
            "reviewed_by": f.reviewed_by,
            "review_comment": f.review_comment,
            "meta": None,
        }
        for f in feedback
    ]
    if rows:
        _insert(session, rows)


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
            aggregation=t.aggregation,
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


#: A stored sample's identity: (trait id, content hash, quality, annotator, adjudicated). Two annotators'
#: labels of one text are two votes (docs/api.md, "Annotators and votes"); one annotator's repeat is one row.
SampleKey = tuple[int, str, float, str | None, bool]
#: Where a sample came from (optional): set on a new row, and on a stored identical one that has none yet.
ORIGIN = ("source_url", "source_id")


def add_samples(
    session: Session,
    model_id: int,
    trait_ids: dict[str, int],
    samples: Sequence[Sample],
    provenance: str,
    *,
    provenances: Sequence[str] | None = None,
    annotators: Sequence[str | None] | None = None,
    adjudicated: Sequence[bool] | None = None,
    source_urls: Sequence[str | None] | None = None,
    source_ids: Sequence[str | None] | None = None,
    created_ats: Sequence[datetime] | None = None,
    metadata: Sequence[JsonObject | None] | None = None,
    duplicates: list[int] | None = None,
    review: ReviewStatus = "accepted",
    label_ids: Sequence[int | None] | None = None,
) -> list[int]:
    """Insert samples, skipping exact duplicates (same trait, text, quality, annotator and adjudication);
    returns ids in input order. `annotators` (per sample; default none: machine-made) say who gave each;
    `provenances` (per sample) where each came from, else `provenance` for all. `duplicates`, when given,
    receives the positions that stored nothing: an identical sample was stored (before, or earlier in
    `samples`), whose id answers for it.

    A batch costs the same whatever the model holds: the stored rows among the batch's texts come
    from the (model, trait, content hash) index in a few queries, and the new rows go in with one
    executemany. `source_urls` and `source_ids` (per sample, `ORIGIN`) are set on new rows, and on stored
    ones that have none yet. `created_ats` (per sample; default now) are when each label was given: a
    buffered label folded in by a retraining keeps the time it was given, not the retraining's. `review`:
    where the new rows stand (`pending`: an annotator's label on a reviewed model, which trains once
    accepted). `metadata` (per sample) is set on new rows only: a stored sample keeps what it has. New
    rows draw label ids (service/store/label_ids.py) in input order, but for the `label_ids` given (per
    sample; None: draw one): a label put back (service/domain/removal.py) keeps the id it was given.
    """
    n = len(samples)
    urls = list(source_urls) if source_urls is not None else [None] * n
    ids = list(source_ids) if source_ids is not None else [None] * n
    origins = [
        {name: value for name, value in zip(ORIGIN, given, strict=True) if value is not None}
        for given in zip(urls, ids, strict=True)
    ]
    authors = list(annotators) if annotators is not None else [None] * n
    settles = list(adjudicated) if adjudicated is not None else [False] * n
    kinds = list(provenances) if provenances is not None else [provenance] * n
    now = utcnow()
    times = list(created_ats) if created_ats is not None else [now] * n
    metas = list(metadata) if metadata is not None else [None] * n
    kept_ids = list(label_ids) if label_ids is not None else [None] * n
    keys: list[SampleKey] = [
        (trait_ids[x.trait], sha256(x.text), float(x.quality), who, bool(settled))
        for x, who, settled in zip(samples, authors, settles, strict=True)
    ]
    stored = _stored_ids(session, model_id, keys)
    scales = trait_scales(session, {key[0] for key in keys})
    new: dict[SampleKey, dict[str, object]] = {}  # rows to insert
    fill: dict[int, dict[str, str]] = {}  # stored rows: the origin fields this batch gives them
    for i, (x, key, origin, kind, given, meta, kept_id) in enumerate(
        zip(samples, keys, origins, kinds, times, metas, kept_ids, strict=True)
    ):
        if duplicates is not None and (key in stored or key in new):
            duplicates.append(i)
        if key in stored:
            sid, has = stored[key]
            for name, value in origin.items():
                if name not in has:
                    fill.setdefault(sid, {}).setdefault(name, value)
            continue
        row = new.get(key)
        if row is None:
            trait_id, digest, quality, who, settled = key
            new[key] = {
                "model_id": model_id,
                "trait_id": trait_id,
                "text": x.text,
                "quality": quality,
                "point": label_point(quality, scales.get(trait_id)),
                "provenance": kind,
                **{name: origin.get(name) for name in ORIGIN},
                "content_sha256": digest,
                "annotator": who,
                "adjudicated": settled,
                "created_at": given,
                "review": review,
                "meta": meta,
                "id": kept_id,
            }
        else:
            for name, value in origin.items():
                if row[name] is None:
                    row[name] = value
    if new:
        # Ids drawn first, then one executemany (no RETURNING: with it, SQLite would insert row by row).
        drawn = iter(next_label_ids(session.connection(), sum(row["id"] is None for row in new.values())))
        for key, row in new.items():
            if row["id"] is None:
                row["id"] = next(drawn)
            assert isinstance(row["id"], int)
            stored[key] = (row["id"], frozenset(name for name in ORIGIN if row[name] is not None))
        _insert(session, list(new.values()))
    for sid, values in fill.items():
        for name, value in values.items():
            column = SampleRow.__table__.c[name]
            session.execute(
                update(SampleRow)
                .where(SampleRow.id == sid, column.is_(None))
                .values({column: value})
                .execution_options(synchronize_session=False)
            )
    return [stored[key][0] for key in keys]


def _insert(session: Session, rows: list[dict[str, object]]) -> None:
    """New sample rows (each with its id), and their traits' counts."""
    session.execute(insert(SampleRow), rows)
    qualities: dict[int, list[float]] = {}
    for row in rows:
        assert isinstance(row["trait_id"], int) and isinstance(row["quality"], float)
        qualities.setdefault(row["trait_id"], []).append(row["quality"])
    for trait_id, added in qualities.items():
        count_samples(session, trait_id, added)


def trait_scales(session: Session, trait_ids: Collection[int]) -> dict[int, int]:
    """The number of points of those of these traits labelled on a scale, by trait id."""
    if not trait_ids:
        return {}
    rows = session.execute(select(Trait.id, Trait.scale).where(Trait.id.in_(trait_ids)))
    return {tid: points for tid, scale in rows if (points := scale_points(scale)) is not None}


def scale_points(scale: JsonObject | None) -> int | None:
    """A stored `Trait.scale`'s number of points; None for a trait labelled by its poles."""
    points = scale.get("points") if scale else None
    return points if isinstance(points, int) else None


def label_point(quality: float, points: int | None) -> int | None:
    """The point a label of this quality keeps on a trait of `points` points (None: a pole trait)."""
    return None if points is None else scale_point(quality, points)


def repoint(session: Session, trait: Trait) -> None:
    """A trait's scale changed: each of its samples keeps the point its quality lies on now, if any."""
    points = scale_points(trait.scale)
    session.execute(
        update(SampleRow)
        .where(SampleRow.trait_id == trait.id)
        .values(point=None)
        .execution_options(synchronize_session=False)
    )
    for point in range(1, (points or 0) + 1):
        quality = scale_quality(point, points or 0)
        near = SCALE_TOLERANCE
        session.execute(
            update(SampleRow)
            .where(SampleRow.trait_id == trait.id, SampleRow.quality.between(quality - near, quality + near))
            .values(point=point)
            .execution_options(synchronize_session=False)
        )


def count_samples(
    session: Session, trait_id: int, qualities: Sequence[float], *, removed: bool = False
) -> None:
    """Samples of these qualities added to (or `removed` from) a trait: its counts (`Trait.sample_count`,
    `positive_samples`, `neutral_samples`) follow every insert, edit and deletion of a sample, so no read
    counts rows."""
    poles = [pole_of(q) for q in qualities]
    sign = -1 if removed else 1
    n = sign * len(poles)
    now = session.execute(
        update(Trait)
        .where(Trait.id == trait_id)
        .values(
            sample_count=Trait.sample_count + n,
            positive_samples=Trait.positive_samples + sign * poles.count("positive"),
            neutral_samples=Trait.neutral_samples + sign * poles.count("neutral"),
        )
        .returning(Trait.sample_count)
        .execution_options(synchronize_session=False)
    ).scalar_one()
    analyze_after_growth(session, SampleRow.__tablename__, now - n, now)


def _stored_ids(
    session: Session, model_id: int, keys: Sequence[SampleKey]
) -> dict[SampleKey, tuple[int, frozenset[str]]]:
    """{key: (the oldest stored sample's id, the `ORIGIN` fields it has)} for the stored samples among
    `keys`: per trait, one indexed query per chunk of hashes."""
    prefixes: dict[int, set[str]] = {}
    for trait_id, digest, *_ in keys:
        prefixes.setdefault(trait_id, set()).add(key_of(digest))
    found: dict[SampleKey, tuple[int, frozenset[str]]] = {}
    for trait_id, wanted in prefixes.items():
        ordered = sorted(wanted)
        for start in range(0, len(ordered), CHUNK):
            rows = session.execute(
                select(
                    SampleRow.id,
                    SampleRow.content_sha256,
                    SampleRow.quality,
                    SampleRow.annotator,
                    SampleRow.adjudicated,
                    SampleRow.source_url,
                    SampleRow.source_id,
                ).where(
                    SampleRow.model_id == model_id,
                    SampleRow.trait_id == trait_id,
                    content_key(SampleRow.content_sha256).in_(ordered[start : start + CHUNK]),
                )  # no ORDER BY: SQLite would then walk the model's rows in id order instead of this index
            ).tuples()
            for sid, digest, quality, who, settled, *origin in rows:  # a row another text shares a key
                # with: its key is not among the batch's, so it is never asked for
                key = (trait_id, digest, quality, who, bool(settled))
                if key not in found or sid < found[key][0]:
                    found[key] = (
                        sid,
                        frozenset(n for n, v in zip(ORIGIN, origin, strict=True) if v is not None),
                    )
    return found
