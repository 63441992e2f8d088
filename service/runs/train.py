"""Run kinds train, retrain and backfill: fit every trait on the stored samples (and, for a retraining or a
reopened draft, the buffered feedback), then store version N+1 and make it current in one transaction.

`execute` is its steps in order: read the inputs (one read transaction), choose what to train on, embed
(shared among the workers when it is worth it), fit, and save."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from core import engine
from core.embedder_words import GRAPH_NOT_BUILT
from core.embedders.base import Embedder
from core.embedders.blend import BLEND_ID, BlendEmbedder
from core.embedders.mpnet_quantized import MPNET_QINT8_ID
from core.embedders.prebuild import is_built
from core.embedders.registry import AUTO, available_embedders
from core.engine.blend_snapshot import is_blend_id
from core.engine.types import Sample, TrainingResult
from core.engine.votes import CountedText, Vote, contested_counts, count_votes, vote_counts
from core.json_types import JsonObject
from service.domain.agreement import keep_agreement
from service.domain.evaluation import held_out_labels
from service.domain.prune import prune
from service.domain.retention import erase, purge_texts
from service.runs import gate, pool_embedding, prebuild, shards
from service.runs.attempt import Attempt
from service.store import history, ledger
from service.store.db import transaction
from service.store.embedders import model_embedder
from service.store.gold import gold_keys
from service.store.heldout import trained_record
from service.store.samples import CHUNK, fold_feedback, held_feedback, load_traits, sha256, trait_specs
from service.store.schema import FeedbackLabel, Model, Run, SampleRow, Trait, Version, utcnow
from service.store.votes import feedback_votes, in_order, sample_votes, samples_to_train

if TYPE_CHECKING:  # the engine loads scikit-learn, which a worker loads with its first run, not at start
    from core.engine.embedder_choice import ChosenEmbedder

Phase = Literal["embedding", "fitting", "saving"]

#: The run's progress (0-1) over a training's phases: phase -> (start, end). When the workers share the
#: embedding it reports its own phase and the engine only fits; otherwise the engine embeds as it fits and
#: covers both (a blend's two embedders one after the other, core.engine.blend).
PROGRESS: dict[Phase, tuple[float, float]] = {
    "embedding": (0.02, 0.70),
    "fitting": (0.70, 0.95),
    "saving": (0.97, 1.0),
}


def progress_at(phase: Phase, fraction: float) -> float:
    """The run's progress `fraction` (0-1) of the way through `phase`."""
    start, end = PROGRESS[phase]
    return start + (end - start) * fraction


@dataclass(frozen=True)
class Inputs:
    """What a training reads in one transaction."""

    options: JsonObject  # the run's options
    traits: list[Trait]
    votes: list[Vote]  # the stored samples' labels
    feedback: list[FeedbackLabel]  # the buffered feedback this training may take in
    params: JsonObject | None  # the previous version's parameters, to reuse
    retain: bool  # texts are kept (no zero-data-retention)
    embedder_choice: str | None
    model_id: int
    serving_embedder: str | None = (
        None  # the embedder its vectors were in before this training (store/embedders.py)
    )
    # (trait key, content hash) of labels never trained on: gold items (known answers to check people with)
    # and every trait's key with each text of the evaluation set (domain/evaluation.held_out_labels).
    gold: frozenset[tuple[str, str]] = frozenset()
    # The accepted samples no version took in yet: those this training's version may name (`took_in`).
    untrained: frozenset[int] = frozenset()


@dataclass(frozen=True)
class TrainingSet:
    """What the inputs train on. Feedback that would leave a trait untrainable (one pole of a trait without
    samples: service/store/samples.held_feedback) stays buffered."""

    feedback: list[FeedbackLabel]  # the buffer this training consumes (held feedback left out)
    usable: list[FeedbackLabel]  # of those, the labels it trains on: of a trait the model has, not gold
    # One row per (trait, text), its quality the counted one (core/engine/votes.py).
    counted: list[CountedText]
    samples: list[Sample]
    # Of `feedback`, the labels that become samples: every label of a trait the model still has, a gold
    # text's too. A label is a person's vote, kept as a record (the votes export, their own labels, the
    # team's counts) whether or not it trains.
    folded: list[FeedbackLabel]

    @property
    def texts(self) -> set[str]:
        return {x.text for x in self.samples}


def execute(at: Attempt) -> None:
    with transaction(at.reads) as s:  # a read: it waits for no writer and holds up none
        inputs = read_inputs(s, at.run_id)
    data = training_set(inputs)
    effort = str(inputs.options.get("effort") or "medium")
    started = time.monotonic()
    choice = auto_embedder(at, inputs, data) if inputs.embedder_choice == AUTO else None
    name = inputs.embedder_choice if choice is None else choice.chosen
    base = at.embedders.get(name, retain=inputs.retain)
    parts = base.parts if isinstance(base, BlendEmbedder) else None  # each embedder watched on its own
    embedder: Embedder = BlendEmbedder([at.watched(p) for p in parts]) if parts else at.watched(base)
    blended = is_blend_id(embedder.id)
    # A graph to build or wait for is minutes with no step to show: said from the first second.
    at.report(progress_at("embedding", 0), "embedding", starting_words(embedder.id, choice))
    # A blend embeds each text with both embedders in this process (each embedder's vectors cached on their
    # own).
    sharded = not blended and shards.shardable(at.settings, len(data.texts), inputs.retain)
    if sharded:  # the engine then finds the vectors ready, and its progress covers the fitting alone
        embedder = shared_embedding(at, inputs, data, embedder)
    lo, hi = progress_at("fitting" if sharded else "embedding", 0), progress_at("fitting", 1)
    progress = while_building(at, embedder.id, lo, hi, at.engine_progress(lo, hi))
    # The engine (scikit-learn) is imported by the first run, never at a process's start.
    from core.engine.blend import one_embedder_params, train_blend

    if blended:
        result = train_blend(
            trait_specs(inputs.traits),
            data.samples,
            embedder=embedder,
            effort=effort,
            params=inputs.params,
            progress=progress,
        )
    else:
        result = engine.train(
            trait_specs(inputs.traits),
            data.samples,
            embedder=embedder,
            effort=effort,
            params=one_embedder_params(inputs.params),
            progress=progress,
        )
    if gate.gated(inputs.options):  # labels started it: no worse than the serving version, or no version
        gate.require_no_worse(at, inputs.model_id, result.snapshot, data.texts)
    metrics = version_metrics(inputs, data, result, embedder.id, effort, time.monotonic() - started)
    if choice is not None:
        from core.engine.embedder_choice import CHOICE

        metrics[CHOICE] = choice.trained(result).as_json()
    at.report(PROGRESS["saving"][0], "saving")
    at.checkpoints.reached(
        "version_saving", at.handle, f"saving run {at.run_id} attempt {at.number}", at.number
    )
    purged = save(at, inputs, data, result, metrics)
    if purged is None:
        return  # the claim was lost (recovered elsewhere): nothing was applied
    erase(at.sessions.kw["bind"], at.embedders, purged)
    shards.drop(at.sessions, at.run_id)
    if choice is not None and choice.chosen != inputs.serving_embedder and inputs.retain:
        embed_pool_again(at, inputs.model_id)


def embed_pool_again(at: Attempt, model_id: int) -> None:
    """An `auto` model now in another embedder: its suggestions read the pool in that embedder, so the workers
    embed the pool into the cache again, as after an import (a head start: suggestions embed what they have
    not)."""
    with transaction(at.reads) as s:
        steps = pool_embedding.whole_pool(s, model_id)
    for step in steps:
        at.enqueue(step)


def auto_embedder(at: Attempt, inputs: Inputs, data: TrainingSet) -> ChosenEmbedder:
    """An `auto` model's embedder for this training (docs/decisions/0020): both embedders (the blend, nothing
    compared) where mpnet-base is installed, the samples' median text is long enough and most samples are in
    English; else e5-small alone, saying why."""
    from core.engine import embedder_choice

    installed = available_embedders()
    cheapest = installed[0]
    if len(installed) == 1:
        return embedder_choice.ChosenEmbedder(
            None, cheapest, (), (), (BLEND_ID,), "mpnet-base is not installed here"
        )
    if not is_built(MPNET_QINT8_ID):  # trains on what is ready; the owner chooses the blend once it is
        prebuild.start()  # unless the install or the service's start is building it already
        return embedder_choice.ChosenEmbedder(None, cheapest, (), (), (BLEND_ID,), GRAPH_NOT_BUILT)
    languages: list[str | None] = []  # detected only where the texts are long enough to matter
    if embedder_choice.median_words([x.text for x in data.samples]) >= embedder_choice.BLEND_MIN_WORDS:
        languages = embedder_choice.detected_languages(data.samples)
    because = embedder_choice.blend_refused_because(data.samples, languages, BLEND_ID)
    if because is None:
        return embedder_choice.ChosenEmbedder(None, BLEND_ID, (), ())
    return embedder_choice.ChosenEmbedder(None, cheapest, (), (), (BLEND_ID,), because)


def starting_words(embedder_id: str, choice: ChosenEmbedder | None) -> str | None:
    """What the bar says as the embedding starts: the int8 graph it waits for, or the embedder `auto` kept
    while mpnet-base's graph is being built; None when there is nothing to say beyond the phase."""
    from core.embedders.prebuild import waiting_words

    if waiting := waiting_words(embedder_id):
        return waiting
    if choice is not None and choice.because == GRAPH_NOT_BUILT:
        return (
            "training on e5-small alone: mpnet-base's int8 graph is being built on this machine; once it is, "
            "the Training page offers both embedders"
        )
    return None


def while_building(
    at: Attempt, embedder_id: str, lo: float, hi: float, progress: Callable[[float, str], None]
) -> Callable[[float, str], None]:
    """`progress`, but while a graph of `embedder_id` is not built its steps say what they wait for: the
    engine's first step ("Embedding samples") comes before the wait inside the embedder."""

    def report(fraction: float, step: str) -> None:
        from core.embedders.prebuild import waiting_words

        if (waiting := waiting_words(embedder_id)) is None:
            progress(fraction, step)
        else:
            at.report(lo + (hi - lo) * float(fraction), "embedding", f"{waiting}; then: {step}")

    return report


def read_inputs(s: Session, run_id: str) -> Inputs:
    run = s.get(Run, run_id)
    assert run is not None
    model = s.get(Model, run.model_id)
    assert model is not None
    options = dict(run.options)
    # A training from a reopened draft takes the buffer in too (docs/api.md, "Reopen").
    with_feedback = run.kind == "retrain" or bool(options.get("with_feedback"))
    feedback = (
        list(
            s.scalars(
                select(FeedbackLabel)
                .where(FeedbackLabel.model_id == model.id, FeedbackLabel.review == "accepted")
                .order_by(FeedbackLabel.id)
            )
        )
        if with_feedback
        else []
    )
    # Labels never trained on: gold texts', and any trait's labels of a text of the evaluation set.
    gold = frozenset(gold_keys(s, model.id)) | held_out_labels(s, model.id)
    votes = sample_votes(s, model.id, accepted=True)
    if gold:  # a promoted settled text's votes, a sample import of a gold or an evaluation text
        votes = [v for v in votes if (v.trait, sha256(v.text)) not in gold]
    return Inputs(
        options=options,
        traits=load_traits(s, model.id),
        votes=votes,
        feedback=feedback,
        params=previous_params(s, model) if options.get("reuse_params") else None,
        retain=not model.zero_data_retention,
        embedder_choice=model.embedder,
        model_id=model.id,
        serving_embedder=model_embedder(s, model),
        gold=gold,
        untrained=frozenset(
            s.scalars(
                select(SampleRow.id).where(
                    SampleRow.model_id == model.id,
                    SampleRow.review == "accepted",
                    SampleRow.trained_in.is_(None),
                )
            )
        ),
    )


def previous_params(s: Session, model: Model) -> JsonObject | None:
    """The current version's parameters per trait (a trait without any left out), or None."""
    if model.current_version_id is None:
        return None
    prev = s.get(Version, model.current_version_id)
    if prev is None:
        return None
    traits = prev.metrics.get("traits", {})
    return {k: m.get("params") for k, m in traits.items() if m.get("params") is not None} or None


def training_set(inputs: Inputs) -> TrainingSet:
    keys = {t.key for t in inputs.traits}
    gold = {f.id for f in inputs.feedback if (f.trait_key, sha256(f.text)) in inputs.gold}
    # A gold text's labels never train, so they neither make a trait trainable nor wait for one to be.
    trainable = [f for f in inputs.feedback if f.id not in gold]
    held = {f.id for f in held_feedback(trainable, samples_to_train(count_votes(inputs.votes)))}
    feedback = [f for f in inputs.feedback if f.id not in held]
    # Feedback of a deleted trait is consumed with the buffer (deleting a trait deletes its labels); a gold
    # text's is folded in as samples, kept as votes, and left out of what trains (read_inputs leaves out
    # its samples the same way).
    folded = [f for f in feedback if f.trait_key in keys]
    usable = [f for f in folded if f.id not in gold]
    counted = count_votes(in_order(inputs.votes, feedback_votes(usable)))
    return TrainingSet(feedback, usable, counted, samples_to_train(counted), folded)


def took_in(s: Session, ids: list[int], version_no: int) -> None:
    """The labels (`ids`: no version took them in yet) this version counted among the votes it trained on
    name it: the votes export's `version_no`."""
    ids = sorted(ids)
    for start in range(0, len(ids), CHUNK):
        s.execute(
            update(SampleRow)
            .where(SampleRow.id.in_(ids[start : start + CHUNK]), SampleRow.trained_in.is_(None))
            .values(trained_in=version_no)
            .execution_options(synchronize_session=False)
        )


def shared_embedding(at: Attempt, inputs: Inputs, data: TrainingSet, embedder: Embedder) -> Embedder:
    """Every worker embeds a share (service/runs/shards.py); the embedder returned has the vectors ready."""
    coordinator = shards.Coordinator(
        at.run_id,
        at.handle,
        inputs.model_id,
        at.settings,
        at.sessions,
        embedder,
        at.enqueue_shard,
        lambda fraction, phase, message: at.report(progress_at("embedding", fraction), phase, message),
        at.checkpoints,
        at.locks,
    )
    return coordinator.embed(data.samples)


def version_metrics(
    inputs: Inputs, data: TrainingSet, result: TrainingResult, embedder_id: str, effort: str, duration: float
) -> JsonObject:
    """The version's `metrics`: per trait the engine's figures, its parameters and its label counts."""
    counts = vote_counts(data.counted)
    contested = contested_counts(data.counted)
    return {
        "traits": {
            key: {
                **dict(result.metrics.get(key, {})),
                "params": result.params.get(key),
                **counts.get(key, {"texts": 0, "votes": 0}),
                **contested.get(key, {"contested": 0, "contested_neutral": 0}),
            }
            for key in (t.key for t in inputs.traits)
        },
        "embedder": embedder_id,
        "effort": effort,
        "duration_s": round(duration, 3),
    }


def save(
    at: Attempt, inputs: Inputs, data: TrainingSet, result: TrainingResult, metrics: JsonObject
) -> list[str] | None:
    """Store version N+1 and make it current, in one transaction with the run's success; the texts purged
    under zero-data-retention, or None when the claim was lost and nothing was applied."""
    # What this version trained on, so that its evaluations leave those texts out; nothing of a text is
    # kept under zero-data-retention.
    trained = trained_record(sha256(t) for t in data.texts) if inputs.retain else None
    with transaction(at.sessions) as s:
        if not ledger.succeed(s, at.run_id, at.number, "Training finished"):
            return None
        run = s.get(Run, at.run_id)
        assert run is not None  # succeed() just updated it
        model = s.get(Model, run.model_id)
        assert model is not None
        if data.feedback:
            fold_feedback(s, model.id, data.folded)
            s.execute(delete(FeedbackLabel).where(FeedbackLabel.id.in_([f.id for f in data.feedback])))
        last_no = s.scalar(select(func.max(Version.version_no)).where(Version.model_id == model.id)) or 0
        version = Version(
            model_id=model.id,
            version_no=last_no + 1,
            triggered_by=inputs.options.get("triggered_by", "train"),
            param_hash=result.param_hash,
            sample_count=len(inputs.votes) + len(data.usable),  # labels stored (votes), as before votes
            run_id=at.run_id,
            metrics=metrics,
            snapshot=result.snapshot,
            trained_keys=None if model.zero_data_retention else trained,
            created_at=utcnow(),
        )
        s.add(version)
        s.flush()
        new = inputs.untrained | {f.id for f in data.usable}
        took_in(s, [v.id for c in data.counted for v in c.votes if v.id in new], version.version_no)
        previous = history.version_no_of(s, model.current_version_id)
        history.record(s, model, "activated", version.version_no, previous=previous)
        model.current_version_id = version.id
        model.state = ledger.state_after(model, run, succeeded=True)
        model.updated_at = utcnow()
        purged: list[str] = []
        if model.zero_data_retention:  # rule 1 of 2.5: purge at every training completion
            keep_agreement(s, model)  # the agreement of the votes, as numbers, before they go
            purged = purge_texts(s, model.id)
        prune(s, model)
    return purged
