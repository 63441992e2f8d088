"""Starting runs (train, discover, synthesize): what a training needs before it may start, and the
fingerprint that makes a run's request idempotent; cancelling a run."""

from __future__ import annotations

import hashlib
import json

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.contract import MAX_TRAITS, POLE_RULE, RUN_ID_RE, RunKind, pole_of
from core.engine.votes import count_votes
from core.json_types import JsonObject
from core.model_states import Operation
from service.domain.access import load_model
from service.domain.needs import Databases, Resources, RunStarter
from service.domain.states import busy_error, require, require_not_archived
from service.domain.views import model_out
from service.errors import ApiError
from service.schemas.models import ModelOut
from service.schemas.runs import DiscoverIn, RunStarted, SynthesizeIn, TrainIn
from service.store import audit, ledger
from service.store.api_keys import Principal
from service.store.db import transaction
from service.store.heldout import evaluation_texts, sample_digests
from service.store.samples import sha256
from service.store.schema import FeedbackLabel, Model, PoolText, Run, SampleRow, Trait, Version, content_key
from service.store.votes import sample_votes


def check_trainable(session: Session, model: Model) -> None:
    """422 before anything is queued: at least one trait; each trait has samples on both poles or
    none (zero-shot); neutral samples (quality 0.5) are on neither pole, so they do not make a trait
    trainable. A trait that the active version trained from samples may not fall back to
    zero-shot (zero-data-retention purged its samples): re-optimizing it would discard what they taught.
    """
    traits = session.scalars(select(Trait).where(Trait.model_id == model.id).order_by(Trait.id)).all()
    if not traits:
        raise ApiError(422, "no_traits", "Add at least one trait before training.")
    active = session.get(Version, model.current_version_id) if model.current_version_id is not None else None
    trained = (active.metrics or {}).get("traits", {}) if active is not None else {}
    # Texts of the evaluation set are never trained on: where samples have some, their poles are re-read.
    held = sample_digests(session, model.id, evaluation_texts(session, model.id))
    for t in traits:
        positive, negative = t.positive_samples > 0, t.negative_samples > 0  # neutral ones: on neither
        left_out = 0
        if positive and negative and (held or _has_several_votes(session, model.id, t.id)):
            # Both poles among the samples; a text's votes count as their mean (core/engine/votes.py), which
            # may leave a pole without a text (or make a text neutral): the qualities training sees decide.
            votes = sample_votes(session, model.id, t.id, accepted=True)
            kept = [v for v in votes if not held or sha256(v.text) not in held]
            left_out = len(votes) - len(kept)
            poles = {pole_of(c.quality) for c in count_votes(kept)}
            positive, negative = "positive" in poles, "negative" in poles
        if positive and negative:
            continue
        if not t.sample_count:
            was = trained.get(t.key)
            if not isinstance(was, dict) or was.get("method") == "zero_shot":
                continue  # zero-shot: the axis comes from the trait's pole labels and description
            raise ApiError(
                422,
                "trait_one_pole",
                f"Trait {t.key!r} was trained from samples that are gone (zero-data-retention deletes "
                f"them); it needs samples on both poles ({POLE_RULE}) to be trained again.",
            )
        raise ApiError(
            422,
            "trait_one_pole",
            f"Trait {t.key!r} needs samples on both poles ({POLE_RULE}), or none at all to be trained "
            f"zero-shot from its labels; it has {t.positive_samples} positive, {t.negative_samples} negative "
            f"and {t.neutral_samples} neutral"
            + (f", {left_out} of them texts of the evaluation set, never trained on." if left_out else "."),
        )


def _has_several_votes(session: Session, model_id: int, trait_id: int) -> bool:
    """Whether a text of the trait has more than one sample (votes): the content-key index's repeated keys
    (read from the index alone), then whether one of those keys' rows repeats a whole hash."""
    key = content_key(SampleRow.content_sha256)
    mine = (SampleRow.model_id == model_id, SampleRow.trait_id == trait_id)
    repeated = select(key).where(*mine).group_by(key).having(func.count() > 1)
    for prefix in session.scalars(repeated):
        hashes = session.scalars(select(SampleRow.content_sha256).where(*mine, key == prefix)).all()
        if len(set(hashes)) < len(hashes):
            return True
    return False


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


def idempotency_key(kind: str, options: JsonObject, fp: str) -> str:
    return hashlib.sha256(json.dumps([kind, options, fp], sort_keys=True).encode()).hexdigest()


def _has_buffer(session: Session, model: Model) -> bool:
    return (
        session.scalar(select(FeedbackLabel.id).where(FeedbackLabel.model_id == model.id).limit(1))
        is not None
    )


def sample_count(session: Session, model: Model) -> int:
    return len(session.scalars(select(SampleRow.id).where(SampleRow.model_id == model.id).limit(1)).all())


# -- starting runs: train (first, retune, a reopened draft's N+1), discover, synthesize ----------------------


def start_training(ctx: RunStarter, who: Principal, handle: str, payload: TrainIn) -> RunStarted:
    """A run queued (`busy`), the run in flight (an idempotent repeat), or nothing to do (`ready`)."""
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        if model.state == "busy":
            run = ledger.in_flight(s, model)
            if run is not None and run.kind == "train":
                return RunStarted(state="busy", run_id=run.id)  # idempotent hit on the run in flight
            raise busy_error(s, model)
        triggered_by: Operation = "retune" if model.state == "ready" else "train"
        if triggered_by == "retune" and not payload.reoptimize_params:
            return RunStarted(state="ready", run_id=None)
        require(s, model, triggered_by)
        check_trainable(s, model)
        options: JsonObject = {"effort": payload.effort or "medium", "triggered_by": triggered_by}
        if model.current_version_id is not None or _has_buffer(s, model):
            # A reopened draft's buffered feedback joins the training, and so do labels given while a
            # discover or synthesize kept a draft busy (service/domain/labelling.py).
            options["with_feedback"] = True
        run_id = ledger.create_run(s, model, "train", options).id
        audit.run_started(s, who, model, run_id, "train", options)
    ctx.enqueue(run_id)
    return RunStarted(state="busy", run_id=run_id)


def _duplicate_error(run: Run) -> ApiError:
    return ApiError(
        409,
        "duplicate_run",
        f"The same {run.kind} already ran or is running on these samples and effort ({run.id}).",
        retryable=False,
        headers={"X-Run-Id": run.id},
    )


def _reject_in_flight_duplicate(s: Session, model: Model, key: str) -> None:
    """A repeat of the run in flight is a duplicate (not merely 'busy')."""
    require_not_archived(model)
    run = ledger.in_flight(s, model)
    if run is not None and run.idempotency_key == key:
        raise _duplicate_error(run)


def _start_unique(s: Session, model: Model, kind: RunKind, options: JsonObject, key: str) -> str:
    duplicate = ledger.find_duplicate(s, model.id, key)
    if duplicate is not None:
        raise _duplicate_error(duplicate)
    return ledger.create_run(s, model, kind, options, idempotency_key=key).id


def start_discovery(ctx: RunStarter, who: Principal, handle: str, payload: DiscoverIn) -> RunStarted:
    options = {"effort": payload.effort or "medium"}
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        key = idempotency_key("discover", options, fingerprint(s, model, "discovered", extrinsic_only=True))
        _reject_in_flight_duplicate(s, model, key)
        require(s, model, "discover")
        if not sample_count(s, model):
            raise ApiError(422, "no_samples", "Discovery needs labelled samples.")
        if len(s.scalars(select(Trait.id).where(Trait.model_id == model.id)).all()) >= MAX_TRAITS:
            raise ApiError(
                422, "validation_error", f"A model has at most {MAX_TRAITS} traits: no room to discover more."
            )
        run_id = _start_unique(s, model, "discover", options, key)
        audit.run_started(s, who, model, run_id, "discover", dict(options))
    ctx.enqueue(run_id)
    return RunStarted(state="busy", run_id=run_id)


def start_synthesis(ctx: Resources, who: Principal, handle: str, payload: SynthesizeIn) -> RunStarted:
    options = {"effort": payload.effort or "medium", "synth_type": payload.synth_type}
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        # The pool is what synthesis picks from: synthesizing again once it changed is not a repeat.
        pool = s.execute(
            select(func.count(PoolText.id), func.max(PoolText.id)).where(PoolText.model_id == model.id)
        ).one()
        fp = fingerprint(s, model, "synthesized", extrinsic_only=False)
        # So is the deployment's generator: a newly named one (or another model) writes other texts.
        generator = f":generator:{ctx.settings.generator_model}" if ctx.settings.generator_url else ""
        key = idempotency_key("synthesize", options, f"{fp}:pool:{pool[0]}:{pool[1]}{generator}")
        _reject_in_flight_duplicate(s, model, key)
        require(s, model, "synthesize")
        if not s.scalars(select(Trait.id).where(Trait.model_id == model.id).limit(1)).first():
            raise ApiError(422, "no_traits", "Synthesis needs at least one trait.")
        if payload.synth_type == "diversify" and not sample_count(s, model):
            raise ApiError(422, "no_samples", "diversify needs seed samples to vary.")
        run_id = _start_unique(s, model, "synthesize", options, key)
        audit.run_started(s, who, model, run_id, "synthesize", dict(options))
    ctx.enqueue(run_id)
    return RunStarted(state="busy", run_id=run_id)


# -- cancelling a run --------------------------------------------------------------------------------------


def cancel_run(ctx: Databases, who: Principal, handle: str, run_id: str) -> ModelOut:
    """docs/api.md "Cancel a run": a queued or running run ends `cancelled` and its model goes back to the
    state the run started from; a repeat answers the model unchanged; a run that ended otherwise → 409."""
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True)
        run = s.get(Run, run_id) if RUN_ID_RE.match(run_id) else None
        if run is None or run.model_id != model.id:
            raise ApiError(404, "run_not_found", f"Model {handle!r} has no run {run_id!r}.")
        if run.status == "cancelled":  # a repeat (a double click, a lost response) changes nothing
            return model_out(s, model)
        was = run.status
        if not ledger.cancel(s, run, f"Cancelled; the model is back to {run.return_state}"):
            raise ApiError(
                409,
                "run_finished",
                f"Run {run_id} already {run.status}; only a queued or running run can be cancelled.",
            )
        audit.run_cancelled(s, who, model, run, was)
        s.flush()
        return model_out(s, model)
