"""Database rows → response bodies."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Literal

from sqlalchemy import func, select
from sqlalchemy.orm import Session, aliased

from core.contract import pole_of
from core.embedders.registry import short_name
from core.engine.blend_snapshot import per_embedder
from core.engine.embedder_choice import recorded_choice
from core.json_types import JsonObject
from service.domain.gold_labels import answer_labels, buffer_size, buffered_answers
from service.domain.prune import effective_policy
from service.domain.scales import scale_out
from service.schemas.models import AutoPruneOut, LastOperation, ModelOut, UpstreamSource
from service.schemas.pool import Labelled
from service.schemas.samples import SampleOut
from service.schemas.traits import TraitOut
from service.schemas.versions import EmbedderCandidate, EmbedderName, VersionEmbedder, VersionOut
from service.store.schema import FeedbackLabel, Model, Run, SampleRow, Tag, Trait, Version
from service.store.teams import auto_retrains, reviews, team_namespaces


def tags_of(session: Session, version_id: int | None) -> list[str]:
    """A version's tags, sorted by code point here, not by the database's collation (which differs between
    SQLite and a PostgreSQL locale), so every response lists them in the same order."""
    if version_id is None:
        return []
    return sorted(session.scalars(select(Tag.name).where(Tag.version_id == version_id)))


def queue_positions(session: Session, runs: Sequence[Run]) -> dict[str, int]:
    """Each queued run's place in line: 1 + the queued runs created before it, of any model or namespace, as
    they all wait for the same workers (oldest first, as the queue delivers them); running runs aside."""
    ids = [r.id for r in runs if r.status == "queued"]
    if not ids:
        return {}
    ahead = aliased(Run)
    same_time = (ahead.created_at == Run.created_at) & (ahead.id < Run.id)
    earlier = (ahead.created_at < Run.created_at) | same_time
    rows = session.execute(
        select(Run.id, func.count(ahead.id))
        .outerjoin(ahead, (ahead.status == "queued") & earlier)
        .where(Run.id.in_(ids))
        .group_by(Run.id)
    ).tuples()
    return {run_id: count + 1 for run_id, count in rows}


def _last_operation(run: Run | None, positions: dict[str, int]) -> LastOperation | None:
    if run is None:
        return None
    return LastOperation(
        kind=run.kind,
        status=run.status,
        started_at=run.created_at,
        finished_at=run.finished_at,
        run_id=run.id,
        progress=dict(run.progress),
        error=dict(run.error) if run.error is not None else None,
        queue_position=positions.get(run.id),
    )


def model_out(session: Session, model: Model) -> ModelOut:
    return models_out(session, [model])[0]


def models_out(session: Session, models: Sequence[Model]) -> list[ModelOut]:
    """Bodies for a page of models with a fixed number of queries (one per related table), not per model."""
    if not models:
        return []
    ids = [m.id for m in models]
    version_ids = [m.current_version_id for m in models if m.current_version_id is not None]
    run_ids = [m.last_run_id for m in models if m.last_run_id is not None]
    names: dict[int, list[str]] = defaultdict(list)
    for model_id, name in session.execute(
        select(Trait.model_id, Trait.name).where(Trait.model_id.in_(ids)).order_by(Trait.id)
    ):
        names[model_id].append(name)
    version_nos: dict[int, int] = {}
    tags: dict[int, list[str]] = defaultdict(list)
    if version_ids:
        version_nos = dict(
            session.execute(select(Version.id, Version.version_no).where(Version.id.in_(version_ids)))
            .tuples()
            .all()
        )
        for version_id, tag in session.execute(
            select(Tag.version_id, Tag.name).where(Tag.version_id.in_(version_ids))
        ):
            tags[version_id].append(tag)
        for listed in tags.values():
            listed.sort()  # as tags_of does
    sample_counts = dict(  # the traits' counts (a model's samples all belong to its traits)
        session.execute(
            select(Trait.model_id, func.sum(Trait.sample_count))
            .where(Trait.model_id.in_(ids))
            .group_by(Trait.model_id)
        )
        .tuples()
        .all()
    )
    answers = buffered_answers(session, models)
    buffered = dict(
        session.execute(
            select(FeedbackLabel.model_id, func.count())
            .where(FeedbackLabel.model_id.in_(ids))
            .group_by(FeedbackLabel.model_id)
        )
        .tuples()
        .all()
    )
    last_runs = {r.id: r for r in session.scalars(select(Run).where(Run.id.in_(run_ids)))} if run_ids else {}
    positions = queue_positions(session, list(last_runs.values()))
    teams = team_namespaces(session, {m.namespace for m in models})
    return [
        ModelOut(
            handle=model.handle,
            scoring_method=model.scoring_method,
            description=model.description,
            state=model.state,
            kind=model.kind,
            traits=names.get(model.id, []),
            current_version_id=model.current_version_id,
            version_no=version_nos.get(model.current_version_id) if model.current_version_id else None,
            version_tags=tags.get(model.current_version_id, []) if model.current_version_id else [],
            zero_data_retention=model.zero_data_retention,
            last_operation=_last_operation(
                last_runs.get(model.last_run_id) if model.last_run_id else None, positions
            ),
            created_at=model.created_at,
            updated_at=model.updated_at,
            max_depth=model.max_depth,
            additional_terms=model.additional_terms,
            upstream_sources=(
                [UpstreamSource.model_validate(s) for s in model.upstream_sources]
                if model.upstream_sources is not None
                else None
            ),
            readme_markdown=model.readme_markdown,
            auto_prune=AutoPruneOut(**effective_policy(model.auto_prune)) if model.auto_prune else None,
            # A gold answer counts as the label it reads as (gold_labels.py): a count that stood still tells.
            sample_count=int(sample_counts.get(model.id) or 0) + answers.get(model.id, (0, 0))[0],
            buffered_feedback=buffered.get(model.id, 0) + answers.get(model.id, (0, 0))[1],
            embedder=model.embedder,
            votes_wanted=model.votes_wanted,
            auto_retrain=auto_retrains(model, model.namespace in teams),
            blind_labelling=model.blind_labelling,
            overlap=model.overlap,
            review=reviews(model, model.namespace in teams),
            accept_rule=model.accept_rule,
            shared_pool=model.shared_pool,
            gold_rate=model.gold_rate,
            gold_threshold=model.gold_threshold,
        )
        for model in models
    ]


def traits_out(session: Session, model: Model) -> list[TraitOut]:
    traits = session.scalars(select(Trait).where(Trait.model_id == model.id).order_by(Trait.id)).all()
    metrics: JsonObject = {}
    if model.current_version_id is not None:
        version_metrics = session.scalar(
            select(Version.metrics).where(Version.id == model.current_version_id)
        )
        metrics = (version_metrics or {}).get("traits", {})
    answered: dict[int, list[str]] = defaultdict(list)  # gold answers read as samples: counted as theirs
    for a in answer_labels(session, model):
        if a.kind == "sample":
            answered[a.trait_id].append(pole_of(a.quality))
    out = []
    for t in traits:
        m = metrics.get(t.key, {})
        poles = answered.get(t.id, [])
        anchors = m.get("anchor_sample_ids") or {}
        out.append(
            TraitOut(
                key=t.key,
                name=t.name,
                positive_label=t.positive_label,
                negative_label=t.negative_label,
                sample_count=t.sample_count + len(poles),
                positive_samples=t.positive_samples + poles.count("positive"),
                negative_samples=t.negative_samples + poles.count("negative"),
                neutral_samples=t.neutral_samples + poles.count("neutral"),
                description=t.description,
                kind=t.kind,
                aggregation=t.aggregation,
                discrimination=float(m.get("discrimination", 0.0) or 0.0),
                explained_variance=float(m.get("explained_variance", t.explained_variance) or 0.0),
                anchor_sample_ids=anchors,
                method=(m.get("method") or "samples") if m else None,
                scale=scale_out(t),
            )
        )
    return out


def sample_out(row: SampleRow, trait_key: str) -> SampleOut:
    return SampleOut(
        id=row.id,
        trait=trait_key,
        text=row.text,
        quality=row.quality,
        point=row.point,
        provenance=row.provenance,
        source_url=row.source_url,
        content_sha256=row.content_sha256,
        created_at=row.created_at,
        annotator=row.annotator,
        adjudicated=bool(row.adjudicated),
        source_id=row.source_id,
        source=row.source,
        generator_model=row.generator_model,
        metadata=row.meta,
    )


def version_embedder(metrics: JsonObject) -> VersionEmbedder | None:
    """What a version's metrics record of its embedder: `embedder` (every version), its out-of-fold figure,
    each embedder's of a blend, and how training chose it when it did (`recorded_choice`). `candidates` are
    the compared embedders' figures, or the version's own where none was compared."""
    embedder = metrics.get("embedder")
    if not isinstance(embedder, str):
        return None
    traits = metrics.get("traits") if isinstance(metrics.get("traits"), dict) else {}
    assert isinstance(traits, dict)
    auc, se = _mean_of(traits.values(), "roc_auc"), _mean_of(traits.values(), "roc_auc_se")
    choice = recorded_choice(metrics)
    if choice is None:
        embedders = [b for t in traits.values() for b in per_embedder(t) or [] if isinstance(b, dict)]
        if not embedders:
            return VersionEmbedder(embedder=embedder, name=short_name(embedder), roc_auc=auc, roc_auc_se=se)
        ids = list(dict.fromkeys(str(b.get("embedder")) for b in embedders))
        candidates = [
            EmbedderCandidate(embedder=embedder, name=short_name(embedder), roc_auc=auc, roc_auc_se=se)
        ] + [
            EmbedderCandidate(
                embedder=i,
                name=short_name(i),
                roc_auc=_mean_of([b for b in embedders if b.get("embedder") == i], "roc_auc"),
                roc_auc_se=_mean_of([b for b in embedders if b.get("embedder") == i], "roc_auc_se"),
            )
            for i in ids
        ]
        return VersionEmbedder(
            embedder=embedder, name=short_name(embedder), candidates=candidates, roc_auc=auc, roc_auc_se=se
        )

    def named(ids: object) -> list[EmbedderName]:
        return (
            [EmbedderName(embedder=b, name=short_name(b)) for b in ids if isinstance(b, str)]
            if isinstance(ids, list)
            else []
        )

    figures = choice.get("candidates", choice.get("out_of_fold"))
    because = choice.get("not_compared_because")
    compared_on = choice.get("compared_on")
    tie = choice.get("tie")
    return VersionEmbedder(
        embedder=embedder,
        name=short_name(embedder),
        candidates=[
            EmbedderCandidate(
                embedder=c["embedder"],
                name=short_name(c["embedder"]),
                roc_auc=c.get("roc_auc"),
                roc_auc_se=c.get("roc_auc_se"),
            )
            for c in (figures if isinstance(figures, list) else [])
            if isinstance(c, dict)
        ],
        left_out_for_language=named(choice.get("left_out_for_language")),
        not_compared=named(choice.get("not_compared")),
        not_compared_because=because if isinstance(because, str) else None,
        compared_on=compared_on if isinstance(compared_on, int) else None,
        tie=float(tie) if isinstance(tie, int | float) else None,
        roc_auc=auc,
        roc_auc_se=se,
    )


def _mean_of(entries: Iterable[object], figure: str) -> float | None:
    """The mean of `figure` over the dicts of `entries` that have a number for it (None if none has)."""
    found = []
    for entry in entries:
        value = entry.get(figure) if isinstance(entry, dict) else None
        if isinstance(value, int | float) and not isinstance(value, bool):
            found.append(float(value))
    return sum(found) / len(found) if found else None


def version_out(session: Session, version: Version, *, with_snapshot: bool) -> JsonObject:
    """A JSON-ready dict; `snapshot` is absent (not null) when not included."""
    embedder = version_embedder(version.metrics)
    body = VersionOut(
        version_id=version.id,
        version_no=version.version_no,
        triggered_by=version.triggered_by,
        param_hash=version.param_hash,
        sample_count=version.sample_count,
        created_at=version.created_at,
        run_id=version.run_id,
        metrics=version.metrics,
        tags=tags_of(session, version.id),
        embedder=embedder,
        body=embedder,
    ).model_dump(mode="json", exclude={"snapshot"})
    if with_snapshot:
        body["snapshot"] = version.snapshot
    return body


def labelled_answer(
    s: Session,
    model: Model,
    trait_key: str,
    text_id: int,
    quality: float,
    point: int | None,
    stored_as: Literal["sample", "feedback"],
    label_id: int,
    training: bool,
    votes: int,
    retraining: bool,
) -> Labelled:
    """The label route's answer, one for a label and for a gold answer, which reads as one: the version it
    goes into (the one after a training in flight) and the model's buffer, gold answers counted."""
    last = s.scalar(select(func.max(Version.version_no)).where(Version.model_id == model.id)) or 0
    buffered = buffer_size(s, model)
    return Labelled(
        handle=model.handle,
        pool_id=text_id,
        trait=trait_key,
        quality=quality,
        point=point,
        stored_as=stored_as,
        buffered=stored_as == "feedback",
        id=label_id,
        version_no=last + (2 if training else 1),
        state=model.state,
        votes=votes,
        votes_wanted=model.votes_wanted,
        buffered_feedback=buffered,
        retraining=retraining,
    )
