"""Run kinds train, retrain and backfill: fit every trait on the stored samples (and, for a retraining or a
reopened draft, the buffered feedback), then store version N+1 and make it current in one transaction."""

from __future__ import annotations

import time

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from core.embedders.base import Embedder
from core.engine import train
from core.engine.votes import Vote, contested_counts, count_votes, vote_counts
from core.json_types import JsonObject
from service.domain.agreement import keep_agreement
from service.domain.prune import prune
from service.domain.retention import erase, purge_texts
from service.runs import shards
from service.runs.attempt import Attempt
from service.store import history, ledger
from service.store.db import transaction
from service.store.heldout import trained_record
from service.store.samples import fold_feedback, held_feedback, load_traits, sha256, trait_specs
from service.store.tables import FeedbackLabel, Model, Run, Trait, Version, utcnow
from service.store.votes import feedback_votes, sample_votes, samples_to_train

#: What a training reads in one transaction: options, traits, votes, buffered feedback, the previous
#: version's parameters, whether texts are kept, the embedder and the model's id.
_Inputs = tuple[
    JsonObject, list[Trait], list[Vote], list[FeedbackLabel], JsonObject | None, bool, str | None, int
]


def execute(at: Attempt) -> None:
    def read(s: Session) -> _Inputs:
        run = s.get(Run, at.run_id)
        assert run is not None
        model = s.get(Model, run.model_id)
        assert model is not None
        options = dict(run.options)
        traits = load_traits(s, model.id)
        votes = sample_votes(s, model.id)
        feedback = (
            list(
                s.scalars(
                    select(FeedbackLabel).where(FeedbackLabel.model_id == model.id).order_by(FeedbackLabel.id)
                )
            )
            # A training from a reopened draft takes the buffer in too (docs/api.md, "Reopen").
            if run.kind == "retrain" or options.get("with_feedback")
            else []
        )
        params = None
        if options.get("reuse_params") and model.current_version_id is not None:
            prev = s.get(Version, model.current_version_id)
            if prev is not None:
                params = {
                    k: m.get("params")
                    for k, m in prev.metrics.get("traits", {}).items()
                    if m.get("params") is not None
                } or None
        retain = not model.zero_data_retention
        embedder_choice = model.embedder
        model_id = model.id
        return options, traits, votes, feedback, params, retain, embedder_choice, model_id

    with transaction(at.reads) as s:  # a read: it waits for no writer and holds up none
        options, traits, votes, feedback, params, retain, embedder_choice, model_id = read(s)
    keys = {t.key for t in traits}
    held = {f.id for f in held_feedback(feedback, samples_to_train(count_votes(votes)))}
    feedback = [f for f in feedback if f.id not in held]
    usable = [f for f in feedback if f.trait_key in keys]
    # Votes: one training row per (trait, text), its quality the counted one (core/engine/votes.py).
    counted = count_votes([*votes, *feedback_votes(usable)])
    samples = samples_to_train(counted)
    effort = options.get("effort") or "medium"
    embedder: Embedder = at.embedders.get(embedder_choice, retain=retain)
    at.report(0.02, "embedding")
    started = time.monotonic()
    engine_from = 0.02
    if shards.shardable(at.settings, len({x.text for x in samples}), retain):
        # Every worker embeds a share (service/runs/shards.py); the engine then finds the vectors ready.
        embedder = shards.Coordinator(
            at.run_id,
            at.handle,
            model_id,
            at.settings,
            at.sessions,
            embedder,
            at.enqueue_shard,
            lambda fraction, phase, message: at.report(0.02 + 0.68 * fraction, phase, message),
            at.checkpoints,
        ).embed(samples)
        engine_from = 0.7
    result = train(
        trait_specs(traits),
        samples,
        embedder=embedder,
        effort=effort,
        params=params,
        progress=at.engine_progress(engine_from, 0.95),
    )
    duration = time.monotonic() - started
    at.report(0.97, "saving")
    where = f"saving run {at.run_id} attempt {at.number}"
    at.checkpoints.reached("version_saving", at.handle, where, at.number)
    counts = vote_counts(counted)
    contested = contested_counts(counted)
    # What this version trained on, so that its evaluations leave those texts out; nothing of a text is
    # kept under zero-data-retention.
    trained = trained_record(sha256(t) for t in {x.text for x in samples}) if retain else None
    metrics = {
        "traits": {
            key: {
                **dict(result.metrics.get(key, {})),
                "params": result.params.get(key),
                **counts.get(key, {"texts": 0, "votes": 0}),
                **contested.get(key, {"contested": 0, "contested_neutral": 0}),
            }
            for key in (t.key for t in traits)
        },
        "embedder": embedder.id,
        "effort": effort,
        "duration_s": round(duration, 3),
    }
    purged: list[str] = []
    with transaction(at.sessions) as s:
        if not ledger.succeed(s, at.run_id, at.number, "Training finished"):
            return  # the claim was lost (recovered elsewhere): apply nothing
        run = s.get(Run, at.run_id)
        assert run is not None  # succeed() just updated it
        model = s.get(Model, run.model_id)
        assert model is not None
        if feedback:
            fold_feedback(s, model.id, usable)
            s.execute(delete(FeedbackLabel).where(FeedbackLabel.id.in_([f.id for f in feedback])))
        last_no = s.scalar(select(func.max(Version.version_no)).where(Version.model_id == model.id)) or 0
        version = Version(
            model_id=model.id,
            version_no=last_no + 1,
            triggered_by=options.get("triggered_by", "train"),
            param_hash=result.param_hash,
            sample_count=len(votes) + len(usable),  # labels stored (votes), as before votes
            run_id=at.run_id,
            metrics=metrics,
            snapshot=result.snapshot,
            trained_keys=None if model.zero_data_retention else trained,
            created_at=utcnow(),
        )
        s.add(version)
        s.flush()
        previous = history.version_no_of(s, model.current_version_id)
        history.record(s, model, "activated", version.version_no, previous=previous)
        model.current_version_id = version.id
        model.state = ledger.state_after(model, run, succeeded=True)
        model.updated_at = utcnow()
        if model.zero_data_retention:  # rule 1 of 2.5: purge at every training completion
            keep_agreement(s, model)  # the agreement of the votes, as numbers, before they go
            purged = purge_texts(s, model.id)
        prune(s, model)
    erase(at.sessions.kw["bind"], at.embedders, purged)
    shards.drop(at.sessions, at.run_id)
