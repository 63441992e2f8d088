"""What a score request reads and writes: the version it scores with, its scorer, and feedback labels; the
rules a request meets before anything is scored, and its answer."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from functools import partial
from typing import TYPE_CHECKING, Protocol, TypedDict

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from core.contract import nearer_pole_is_positive
from core.json_types import JsonObject
from core.model_states import can
from service.domain import fair_share
from service.domain.access import require_readable, require_role
from service.domain.decisions import with_decisions
from service.domain.fair_share import FairShare
from service.domain.gold_labels import buffered_accepted
from service.domain.needs import Resources
from service.domain.states import require_not_archived
from service.domain.traits import TraitRefs
from service.domain.versions import version_filter, version_not_found
from service.errors import ApiError
from service.schemas.score import CompareIn, CompareOut, CompareSide, ScoreIn, TraitDelta, TraitScore
from service.store import audit, ledger, quotas
from service.store.api_keys import Principal, authenticate
from service.store.db import transaction
from service.store.review import accept_by_agreement
from service.store.schema import FeedbackLabel, Model, Run, Tag, Trait, Version, utcnow
from service.store.teams import auto_retrains, is_team, label_status

if TYPE_CHECKING:  # the engine loads with the first scorer (domain/embedding.py), not with this module
    from core.engine import Scorer


@dataclass
class Target:
    model_id: int
    handle: str
    namespace: str
    zdr: bool
    ready: bool
    version_id: int
    version_no: int
    tags: list[str]
    thresholds: JsonObject | None = None  # per-trait decision thresholds of the version (docs/api.md)


def find_target(s: Session, who: Principal, handle: str, ref: str | None) -> Target:
    """The model, version and tags a score request needs, in one query: scoring is the hot path."""
    tags = select(func.aggregate_strings(Tag.name, ",")).where(Tag.version_id == Version.id)  # no "," in tags
    query = (
        select(
            Model.id,
            Model.namespace,
            Model.state,
            Model.zero_data_retention,
            Version.id.label("version_id"),
            Version.version_no,
            Version.thresholds,
            tags.scalar_subquery().label("tags"),
        )
        .outerjoin(Version, version_filter(Model.id, ref) if ref else Version.id == Model.current_version_id)
        .where(Model.handle == handle)
    )
    row = s.execute(query).one_or_none()
    require_readable(who, handle, row.namespace if row else None)
    assert row is not None
    require_not_archived(row)
    if row.version_id is None:
        if ref:
            raise version_not_found(handle, ref)
        raise ApiError(409, "no_active_version", f"{handle} has no trained version yet.")
    return Target(
        row.id,
        handle,
        row.namespace,
        row.zero_data_retention,
        row.state == "ready",
        row.version_id,
        row.version_no,
        sorted(row.tags.split(",")) if row.tags else [],  # as views.tags_of does
        row.thresholds,
    )


def scorer_for(ctx: Resources, t: Target) -> Scorer:
    def load() -> JsonObject:
        with ctx.reads() as s:
            snap: JsonObject | None = s.scalar(select(Version.snapshot).where(Version.id == t.version_id))
        if snap is None:
            raise ApiError(404, "version_not_found", "The version was pruned while scoring; retry.")
        return snap

    return ctx.scorers.get(t.version_id, load, retain=not t.zdr)


class Label(Protocol):
    """A feedback label as a score request gives it (the native body's item, or Perspective's)."""

    @property
    def trait(self) -> str: ...

    @property
    def quality(self) -> float: ...


def add_feedback(
    ctx: Resources, t: Target, text: str, items: Sequence[Label], who: Principal
) -> tuple[int, str | None]:
    """Buffer feedback labels given by `who`; queue an automatic retraining when the buffer is full."""
    with transaction(ctx.sessions) as s:
        # Lock the model row (PostgreSQL) so concurrent feedback cannot each see a full buffer on a
        # ready model and queue one retraining apiece.
        model = s.scalar(select(Model).where(Model.id == t.model_id).with_for_update())
        assert model is not None
        refs = TraitRefs(s, model)
        quotas.require_namespace_room(s, ctx.settings, model.namespace, len(text) * len(items))
        status = label_status(s, who, model)
        seen: set[str] = set()
        for i, item in enumerate(items):
            key = refs.find(item.trait, ("body", "feedback", i, "trait")).key
            if key in seen:  # one label per trait and text: 50 copies would be 50 votes and a retraining
                loc: list[str | int] = ["body", "feedback", i, "trait"]
                msg = f"trait {key!r} has a label earlier in this request: one label per trait"
                raise ApiError(
                    422,
                    "validation_error",
                    f"feedback[{i}]: {msg}.",
                    details=[{"loc": loc, "msg": msg, "type": "duplicate_trait"}],
                )
            seen.add(key)
            s.add(
                FeedbackLabel(
                    model_id=model.id,
                    trait_key=key,
                    text=text,
                    quality=item.quality,
                    annotator=who.annotator,
                    created_at=utcnow(),
                    review=status,
                )
            )
        s.flush()
        if status == "pending":
            for key in seen:
                accept_by_agreement(s, model, refs.find(key, ("body", "feedback")), text)
        quotas.require_person_room(s, ctx.settings, who, model)
        run_id = retrain_if_full(ctx, s, model)
    if run_id is not None:
        ctx.enqueue(run_id)
    return len(items), run_id


#: `triggered_by` of the retraining a full buffer starts.
AUTOMATIC = "retrain_buffered"


def retrain_if_full(ctx: Resources, s: Session, model: Model) -> str | None:
    """Queue an automatic retraining when the model's buffer holds `retrain_buffer` labels and the model
    may retrain (ready, no zero-data-retention, automatic retraining not paused); the run's id, or None.
    The caller holds the model row's lock, so concurrent labels cannot each queue one."""
    # Counted up to the buffer's size only: that is all the decision needs, and a busy or reopened model
    # (or a paused campaign) may hold any number of labels.
    buffer = ctx.settings.retrain_buffer
    held = (
        select(FeedbackLabel.id)
        .where(FeedbackLabel.model_id == model.id, FeedbackLabel.review == "accepted")  # only these train
        .limit(buffer)
        .subquery()
    )
    buffered = s.scalar(select(func.count()).select_from(held)) or 0
    if buffered < buffer:  # gold answers read as buffered labels (docs/api/team.md, "Gold secrecy")
        buffered += buffered_accepted(s, model)
    ctx.checkpoints.reached("feedback_counted", model.handle, f"feedback ({buffered} buffered)")
    if buffered < buffer or not can("retrain", model.state) or model.zero_data_retention:
        return None
    if not auto_retrains(model, is_team(s, model)):
        return None
    # A flood of labels must not make a version a minute forever: past the hour's allowance the labels wait
    # in the buffer, and the first label after the hour retrains on all of them.
    since = utcnow() - timedelta(hours=1)
    recent = s.scalars(
        select(Run.options).where(Run.model_id == model.id, Run.kind == "retrain", Run.created_at > since)
    ).all()
    if sum(o.get("triggered_by") == AUTOMATIC for o in recent) >= ctx.settings.retrains_per_hour:
        return None
    options: JsonObject = {"triggered_by": AUTOMATIC, "reuse_params": True}
    run_id = ledger.create_run(s, model, "retrain", options).id
    # Which labels started it: the buffer the retraining reads, by whom (numbers and names, no text).
    labels = s.execute(
        select(FeedbackLabel.annotator, func.count(), func.min(FeedbackLabel.id), func.max(FeedbackLabel.id))
        .where(FeedbackLabel.model_id == model.id, FeedbackLabel.review == "accepted")
        .group_by(FeedbackLabel.annotator)
    ).all()
    by: JsonObject = {str(a): n for a, n, _, _ in labels}
    # A buffer of gold answers alone has no label to name.
    span = {"first_id": min(r[2] for r in labels), "last_id": max(r[3] for r in labels)} if labels else {}
    triggered: JsonObject = {**options, "labels": sum(r[1] for r in labels), "by": by, **span}
    audit.run_started(s, audit.AUTOMATIC_ACTOR, model, run_id, "retrain", triggered)
    return run_id


def require_feedback_writer(who: Principal, t: Target) -> None:
    """Feedback is a write (it buffers samples and can retrain the model): an authoring key that owns the
    model's namespace, as for any other edit. Reading and scoring a public model stay open to every key."""
    if who.scope != "authoring":
        raise ApiError(403, "forbidden", "Feedback needs an authoring key: it changes the model.")
    if not who.owns(t.namespace):
        raise ApiError(403, "forbidden", f"The key does not own namespace {t.namespace!r}: no feedback.")
    require_role(who, "label", t.namespace)  # feedback is a label: every role may send it


#: How a score request finds its key inside its read transaction (the route's: the guard's, else a lookup).
Identify = Callable[[Session], Principal]


@dataclass(frozen=True)
class ScoreRequest:
    """A score request that passed its rules: who asks, the body, and the version that scores it."""

    who: Principal
    payload: ScoreIn
    target: Target

    @property
    def texts(self) -> list[str]:
        return self.payload.content if isinstance(self.payload.content, list) else [self.payload.content]


def open_request(
    reads: sessionmaker[Session], identify: Identify, handle: str, parse: Callable[[], ScoreIn]
) -> ScoreRequest:
    """The key, the body and the target in one read transaction (scoring is the hot path), in that order: a
    missing key is a 401 before a bad body's 422, which comes before an unknown model's 404."""
    with transaction(reads) as s:
        who = identify(s)
        payload = parse()
        target = find_target(s, who, handle, payload.version)
    require_scorable(who, payload, target)
    return ScoreRequest(who, payload, target)


def require_scorable(who: Principal, payload: ScoreIn, t: Target) -> None:
    """What a request must be before anything is scored, cached or buffered: explain takes one content, and
    feedback comes from a writer of the model, for one content, on a model that keeps content."""
    if payload.explain and isinstance(payload.content, list) and len(payload.content) > 1:
        raise ApiError(
            422,
            "validation_error",
            "explain works on one content per request (it scores each word's absence); "
            "send the others without explain.",
            details=[{"loc": ["body", "explain"], "msg": "one content per request", "type": "explain_cap"}],
        )
    if payload.feedback:
        require_feedback_writer(who, t)
        if t.zdr:
            raise ApiError(
                409,
                "zero_data_retention",
                "Feedback is rejected under zero-data-retention: content is never stored.",
            )
        if isinstance(payload.content, list):
            raise ApiError(422, "validation_error", "feedback labels a single content, not a list.")


@dataclass(frozen=True)
class Scored:
    """A request's scores, per content and trait, and the feedback labels it buffered (None: it sent none)."""

    request: ScoreRequest
    scorer: Scorer
    blocks: list[list[TraitScore]]
    buffered: int | None


#: Asked between two pieces of a request's scoring: raises ApiError when the request is no longer wanted.
StillWanted = Callable[[], None]


def caller_of(who: Principal) -> str:
    """Whose work a request is, for scoring's fair share and budgets: a person, else a key."""
    return f"person:{who.person_id}" if who.person_id is not None else f"key:{who.key_id}"


def score(
    ctx: Resources,
    r: ScoreRequest,
    still_wanted: StillWanted = lambda: None,
    share: FairShare | None = None,
) -> Scored:
    """Score the request's contents outside any transaction, piece by piece, each piece waiting for its
    caller's turn in `share` (service/domain/fair_share.py; `still_wanted` is asked while it waits and
    between pieces), then buffer its feedback. `fair_share.Stopped` when the process stops first."""
    texts = r.texts
    scorer = scorer_for(ctx, r.target)
    blocks: list[list[TraitScore]] = []
    caller = caller_of(r.who)
    share = share or UNSHARED
    with share.admitted(caller, fair_share.cost_of(texts)):
        work = partial(trait_scores, scorer)
        for block in share.in_turns(caller, texts, work, still_wanted, scorer.embedder_id):
            blocks.extend(block)
    feedback = r.payload.feedback
    buffered = add_feedback(ctx, r.target, texts[0], feedback, r.who)[0] if feedback else None
    return Scored(r, scorer, blocks, buffered)


#: Scoring without turns (a caller that passes no share: scripts, tests of the answer's shape).
UNSHARED = FairShare(0)


def trait_scores(scorer: Scorer, texts: list[str]) -> list[list[TraitScore]]:
    """Each text's score per trait, clamped to [0, 1], with the label of the nearer pole."""
    out = []
    for row in scorer.score(texts):
        block = []
        for spec, value in zip(scorer.traits, row, strict=True):
            v = min(1.0, max(0.0, float(value)))
            block.append(
                TraitScore(
                    trait=spec.key,
                    name=spec.name,
                    score=round(v, 6),
                    label=spec.positive_label if nearer_pole_is_positive(v) else spec.negative_label,
                    positive_label=spec.positive_label,
                    negative_label=spec.negative_label,
                )
            )
        out.append(block)
    return out


class WordContribution(TypedDict):
    word: str
    contribution: float
    axis: float
    strength: float


def explanation(scorer: Scorer, text: str) -> dict[str, list[WordContribution]]:
    """Per trait, each word's contribution to the text's score (the costly part of a request)."""
    return {
        key: [
            {
                "word": e.word,
                "contribution": round(e.contribution, 6),
                "axis": round(e.axis, 6),
                "strength": round(e.strength, 6),
            }
            for e in effects
        ]
        for key, effects in scorer.explain(text).items()
    }


def score_body(scored: Scored) -> JsonObject:
    """The JSON answer: the scores with the version's decisions, one result per content of a list, and the
    explanations when asked."""
    r, t = scored.request, scored.request.target
    out: JsonObject = {"handle": t.handle, "version_no": t.version_no, "version_tags": t.tags}
    if isinstance(r.payload.content, list):
        results = []
        for i, (text, block) in enumerate(zip(r.texts, scored.blocks, strict=True)):
            item: JsonObject = {"index": i, "scores": with_decisions(block, t.thresholds)}
            if r.payload.explain:
                item["explanation"] = explanation(scored.scorer, text)
            results.append(item)
        out["results"] = results
    else:
        out["scores"] = with_decisions(scored.blocks[0], t.thresholds)
        if r.payload.explain:
            out["explanation"] = explanation(scored.scorer, r.texts[0])
    if scored.buffered is not None:
        out["feedback_buffered"] = scored.buffered
    return out


def compare(
    ctx: Resources, who: Principal, handle: str, payload: CompareIn, share: FairShare | None = None
) -> CompareOut:
    """Two texts scored by one version, and b's score minus a's per trait."""
    with transaction(ctx.reads) as s:
        t = find_target(s, who, handle, payload.version)
    scorer, texts = scorer_for(ctx, t), [payload.a, payload.b]
    share, caller, cost = share or UNSHARED, caller_of(who), fair_share.cost_of(texts)
    with share.admitted(caller, cost), share.turn(caller, cost):
        a, b = trait_scores(scorer, texts)
    diff = [
        TraitDelta(trait=x.trait, name=x.name, delta=round(y.score - x.score, 6))
        for x, y in zip(a, b, strict=True)
    ]
    return CompareOut(
        handle=t.handle,
        version_no=t.version_no,
        version_tags=t.tags,
        a=CompareSide(scores=a),
        b=CompareSide(scores=b),
        difference=diff,
    )


# Perspective's path (routes/perspective.py): its key comes as a bearer token or a `key` parameter, and it
# names versions per attribute.


def key_for(reads: sessionmaker[Session], token: str) -> Principal | None:
    """The key or person `token` names, or None."""
    with transaction(reads) as s:
        return authenticate(s, token)


def find_targets(
    reads: sessionmaker[Session], who: Principal, handle: str, refs: Iterable[str | None]
) -> dict[str | None, Target]:
    """The target of each version reference (None: the current version), in one read transaction."""
    with transaction(reads) as s:
        return {ref: find_target(s, who, handle, ref) for ref in refs}


def feedback_target(
    reads: sessionmaker[Session], who: Principal, handle: str
) -> tuple[Target, dict[str, str]]:
    """Where Perspective's feedback (SuggestCommentScore) goes, and the model's trait keys by key and by
    casefolded name. Feedback is a write: only an authoring key that owns the model's namespace may send it,
    and never under zero-data-retention."""
    with transaction(reads) as s:
        t = find_target(s, who, handle, None)
        if who.scope != "authoring" or not who.owns(handle.split(".", 1)[0]):
            raise ApiError(
                403, "forbidden", f"Feedback needs an authoring key that owns {handle}'s namespace."
            )
        require_role(who, "label", t.namespace)
        traits = s.scalars(select(Trait).where(Trait.model_id == t.model_id)).all()
    by_name = {tr.name.casefold(): tr.key for tr in traits} | {tr.key: tr.key for tr in traits}
    if t.zdr:
        raise ApiError(
            409,
            "zero_data_retention",
            f"{handle} has zero-data-retention on: feedback would store the comment.",
        )
    return t, by_name
