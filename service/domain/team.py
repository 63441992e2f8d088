"""A labelling team's progress (`GET …/team`) and the export of every vote (`GET …/votes`): docs/api.md,
"Team progress". Both read the namespace's data with names and texts, so they need what the buffered
feedback's list needs: an authoring key that owns the model's namespace, whatever its role.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.contract import scale_point
from core.engine.team_progress import SESSION_GAP_S, Mark, TimedVote, team_progress
from core.engine.votes import Vote
from core.json_types import JsonObject
from service.domain.access import load_model
from service.domain.blind import blind_for, feedback_seen, seen
from service.domain.gold_labels import (
    answer_labels,
    as_agreement_vote,
    as_vote,
    counted_answers,
    readable_answers,
)
from service.domain.gold_secret import answerer, feedback_visible, sample_visible
from service.domain.needs import Resources
from service.domain.trained import sample_versions
from service.errors import ApiError
from service.schemas.team import TeamProgressOut, VoteRecord, VotesPage
from service.store.api_keys import Principal
from service.store.campaign_schema import UnsureMark
from service.store.db import transaction
from service.store.samples import label_point, scale_points
from service.store.schema import FeedbackLabel, Model, SampleRow, Trait, utcnow

#: The export's kinds, in the order its pages walk them.
KINDS = ("sample", "feedback", "unsure")


def votes_wanted(model: Model) -> int:
    """Votes a text of the model wants (the owner's setting; `wants_votes` reads it)."""
    return model.votes_wanted


def readable_model(s: Session, who: Principal, handle: str) -> Model:
    """The model, for a key that owns its namespace (any role); another namespace's key → 403 on a model it
    can read (the public catalog), 404 otherwise."""
    model = load_model(s, who, handle)
    if not who.owns(model.namespace):
        raise ApiError(403, "forbidden", f"The key does not own namespace {model.namespace!r}.")
    return model


def get_progress(ctx: Resources, who: Principal, handle: str) -> TeamProgressOut:
    with transaction(ctx.reads) as s:
        model = readable_model(s, who, handle)
        rows = s.execute(select(Trait.key, Trait.scale).where(Trait.model_id == model.id).order_by(Trait.id))
        scales = {key: scale_points(scale) for key, scale in rows}
        traits = list(scales)
        timed = _timed_votes(s, model.id)
        labels = sorted([*timed, *_answers_as_work(s, model, timed)], key=lambda t: t.vote.id)
        marks = [
            Mark(trait=key, text=text, annotator=annotator, at=at)
            for key, text, annotator, at in s.execute(
                select(Trait.key, UnsureMark.text, UnsureMark.annotator, UnsureMark.created_at)
                .join(Trait, Trait.id == UnsureMark.trait_id)
                .where(UnsureMark.model_id == model.id)
                .order_by(UnsureMark.id)
            )
        ]
        wanted = votes_wanted(model)
    today = utcnow().date()
    found = team_progress(labels, marks, traits, today, wanted)
    used = _points_used(labels, scales)
    return TeamProgressOut.model_validate(
        {
            "handle": model.handle,
            "day": today,
            "session_gap_seconds": SESSION_GAP_S,
            "votes_wanted": wanted,
            "people": [
                vars(p) | {"points": used.get((p.annotator, p.trait), {} if scales[p.trait] else None)}
                for p in found.people
            ],
            "traits": {key: vars(t) for key, t in found.traits.items()},
        }
    )


def _points_used(
    labels: Sequence[TimedVote], scales: dict[str, int | None]
) -> dict[tuple[str, str], JsonObject]:
    """Per (person, scaled trait): their labels per point, as `labels` counts them (imported rows aside);
    a label between points (an edit to another quality) is on none."""
    used: dict[tuple[str, str], Counter[int]] = {}
    for timed in labels:
        v = timed.vote
        points = scales.get(v.trait)
        if points is None or v.annotator is None or timed.imported:
            continue
        counts = used.setdefault((v.annotator, v.trait), Counter())
        if (point := scale_point(v.quality, points)) is not None:
            counts[point] += 1
    return {who: {str(k): n for k, n in sorted(c.items())} for who, c in used.items()}


def _timed_votes(s: Session, model_id: int) -> list[TimedVote]:
    """The model's labels with their times, as `service.store.votes.label_votes` orders them: by label id,
    the order they were given, whichever table each waits in."""
    samples = s.execute(
        select(
            SampleRow.id,
            Trait.key,
            SampleRow.text,
            SampleRow.quality,
            SampleRow.annotator,
            SampleRow.adjudicated,
            SampleRow.provenance,
            SampleRow.created_at,
            SampleRow.review,
        )
        .join(Trait, Trait.id == SampleRow.trait_id)
        .where(SampleRow.model_id == model_id)
        .order_by(SampleRow.id)
    )
    out = [
        TimedVote(
            Vote(key, text, quality, annotator, sid, bool(settled)),
            at,
            provenance == "imported",
            rejected=review == "rejected",
        )
        for sid, key, text, quality, annotator, settled, provenance, at, review in samples
    ]
    feedback = s.scalars(
        select(FeedbackLabel).where(FeedbackLabel.model_id == model_id).order_by(FeedbackLabel.id)
    )
    out += [
        TimedVote(
            Vote(f.trait_key, f.text, f.quality, f.annotator, f.id),
            f.created_at,
            rejected=f.review == "rejected",
        )
        for f in feedback
    ]
    return sorted(out, key=lambda t: t.vote.id)


def _answers_as_work(s: Session, model: Model, labels: Sequence[TimedVote]) -> list[TimedVote]:
    """Gold answers as their people's labels (gold_labels.py): work done, counted and timed as a label is,
    and votes where agreement counts them (`counted_answers`; the others count as a rejected label does)."""
    answers = answer_labels(s, model)
    counted = {a.id for a in counted_answers(answers, [t.vote for t in labels if not t.rejected])}
    return [TimedVote(as_agreement_vote(a), a.created_at, rejected=a.id not in counted) for a in answers]


def list_votes(ctx: Resources, who: Principal, handle: str, limit: int, cursor: str | None) -> VotesPage:
    """Every vote of the model, in keyset pages: its samples by id, then its buffered feedback labels, then
    its unsure marks; a sample with the version whose training took it in (`trained_in`)."""
    with transaction(ctx.reads) as s:
        model = readable_model(s, who, handle)
        scope = f"votes|{model.id}"
        stage, after = _position(ctx.cursors.decode(cursor, scope) if cursor else [0, 0])
        items: list[tuple[int, VoteRecord]] = []
        for k in range(stage, len(KINDS)):
            fetch = _FETCH[KINDS[k]]
            start = after if k == stage else 0
            got = fetch(s, model, start, limit + 1 - len(items), blind_for(who, model), answerer(who, model))
            items += [(k, r) for r in got]
            if len(items) > limit:
                break
    page = items[:limit]
    next_cursor = ctx.cursors.encode(scope, [page[-1][0], page[-1][1].id]) if len(items) > limit else None
    return VotesPage(handle=model.handle, items=[r for _, r in page], limit=limit, next_cursor=next_cursor)


def _position(after: object) -> tuple[int, int]:
    if (
        isinstance(after, list)
        and len(after) == 2
        and all(isinstance(x, int) and not isinstance(x, bool) for x in after)
        and 0 <= after[0] < len(KINDS)
    ):
        return after[0], after[1]
    raise ApiError(400, "invalid_cursor", "The cursor is not valid for this list.")


def _samples(
    s: Session, model: Model, after: int, n: int, me: str | None, answers: str | None
) -> list[VoteRecord]:
    q = (
        select(SampleRow, Trait.key)
        .join(Trait, Trait.id == SampleRow.trait_id)
        .where(SampleRow.model_id == model.id, SampleRow.id > after)
    )
    if me is not None:
        q = q.where(seen(me, model, SampleRow.trait_id, SampleRow.content_sha256, SampleRow.annotator))
    if answers is not None:  # no settled or gold answer to one who answers gold (gold_secret.py)
        q = q.where(sample_visible(answers, model))
    rows = s.execute(q.order_by(SampleRow.id).limit(n))
    page = rows.all()
    versions = sample_versions(s, model, [r for r, _ in page])
    found = [sample_vote(r, key, versions[r.id]) for r, key in page]
    return _with_answers(s, model, "sample", after, n, me, answers, found)


def _with_answers(
    s: Session,
    model: Model,
    kind: str,
    after: int,
    n: int,
    me: str | None,
    answers: str | None,
    found: list[VoteRecord],
) -> list[VoteRecord]:
    """`found` with the gold answers that read as votes of `kind` to one who answers gold (gold_labels.py),
    in id order, the first `n`: to an annotator an answer is a label like any."""
    if answers is None:
        return found
    labels = [a for a in answer_labels(s, model) if a.kind == kind and a.id > after]
    if not labels:
        return found
    scales = dict(s.execute(select(Trait.key, Trait.scale).where(Trait.model_id == model.id)).tuples().all())
    more = [
        VoteRecord.model_validate(as_vote(a, scale_points(scales.get(a.trait))))
        for a in readable_answers(labels, answers, me is not None)
    ]
    return sorted(found + more, key=lambda r: r.id)[:n]


def _feedback(
    s: Session, model: Model, after: int, n: int, me: str | None, answers: str | None
) -> list[VoteRecord]:
    q = select(FeedbackLabel).where(FeedbackLabel.model_id == model.id, FeedbackLabel.id > after)
    if me is not None:
        q = q.where(feedback_seen(me, model))
    if answers is not None:
        q = q.where(feedback_visible(answers, model))
    rows = s.scalars(q.order_by(FeedbackLabel.id).limit(n))
    # A buffered label keeps no point of its own (it becomes a sample, which does): its quality's point.
    found = s.execute(select(Trait.key, Trait.scale).where(Trait.model_id == model.id))
    scales = {key: scale for key, scale in found}
    records = [
        VoteRecord.model_validate(
            vote_record("feedback", r.id, r.annotator, r.trait_key, r.text, r.quality, r.created_at)
            | {
                "provenance": "feedback",
                "point": label_point(r.quality, scale_points(scales.get(r.trait_key))),
            }
        )
        for r in rows
    ]
    return _with_answers(s, model, "feedback", after, n, me, answers, records)


def _unsure(
    s: Session, model: Model, after: int, n: int, me: str | None, answers: str | None
) -> list[VoteRecord]:
    """The unsure marks (`answers` aside: a mark carries no answer)."""
    q = (
        select(UnsureMark, Trait.key)
        .join(Trait, Trait.id == UnsureMark.trait_id)
        .where(UnsureMark.model_id == model.id, UnsureMark.id > after)
    )
    if me is not None:
        q = q.where(seen(me, model, UnsureMark.trait_id, UnsureMark.content_sha256, UnsureMark.annotator))
    rows = s.execute(q.order_by(UnsureMark.id).limit(n))
    return [
        VoteRecord.model_validate(
            vote_record("unsure", r.id, r.annotator, key, r.text, None, r.created_at) | {"unsure": True}
        )
        for r, key in rows
    ]


def vote_record(
    kind: str, rid: int, annotator: str | None, trait: str, text: str, quality: float | None, at: datetime
) -> dict[str, object]:
    return {
        "kind": kind,
        "id": rid,
        "annotator": annotator,
        "trait": trait,
        "text": text,
        "quality": quality,
        "adjudicated": False,
        "unsure": False,
        "created_at": at,
        "provenance": None,
        "version_no": None,
    }


_FETCH: dict[str, Callable[[Session, Model, int, int, str | None, str | None], list[VoteRecord]]] = {
    "sample": _samples,
    "feedback": _feedback,
    "unsure": _unsure,
}


def sample_vote(r: SampleRow, key: str, version_no: int | None) -> VoteRecord:
    """A sample as a vote: the one reading of a sample row the votes export and a text's history share.
    `version_no`: the version that trained it (service/domain/trained.py)."""
    return VoteRecord.model_validate(
        vote_record("sample", r.id, r.annotator, key, r.text, r.quality, r.created_at)
        | {
            "adjudicated": bool(r.adjudicated),
            "provenance": r.provenance,
            "point": r.point,
            "version_no": version_no,
        }
    )
