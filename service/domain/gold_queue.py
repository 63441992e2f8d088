"""Gold items in a person's queue: mixed into their suggestions at the owner's rate, and their answers.

A gold item is handed out as any suggestion is (the same fields, its pool row's id, a score of the same
fit, claimed as the other texts are: a reload brings it back, a skip releases it) so that nobody can tell a
check from a text to label. Each of the `n` texts of an answer is a gold item with probability `gold_rate`
(fewer when fewer gold items are left that the person has not answered, added or voted on: a text whose
answer one knows checks nothing): the last suggestions make room (the caller's claims on them end) and the
gold items take random places. A label of a gold text is its person's answer, recorded once and compared
with the known answer on its pole (core.contract.pole_of); never a vote, so nothing trains on it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Literal

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.contract import ReviewStatus, pole_of
from core.model_states import TRAINING_RUNS, can
from service.domain.claims import may_claim
from service.domain.needs import Databases
from service.domain.views import labelled_answer
from service.schemas.pool import Labelled, Suggestion
from service.store import claims, ledger
from service.store.api_keys import Principal
from service.store.campaign_schema import GoldAnswer, GoldItem
from service.store.db import transaction
from service.store.gold import gold_of
from service.store.review import AGREEMENT
from service.store.samples import sha256
from service.store.schema import FeedbackLabel, Model, PoolClaim, PoolText, SampleRow, Trait, utcnow

#: Fits a suggestion's score to texts: the fit that scored the other suggestions.
Rescore = Callable[[list[str]], Sequence[float | None]]

_RNG = random.SystemRandom()


def plan(n: int, rate: float, candidates: Sequence[int], rng: random.Random) -> dict[int, int]:
    """{position: candidate} of the gold items among `n` texts: each text gold with probability `rate`,
    at most as many as there are candidates, in random places."""
    wanted = min(sum(rng.random() < rate for _ in range(n)), len(candidates))
    if wanted == 0:
        return {}
    return dict(zip(sorted(rng.sample(range(n), wanted)), rng.sample(list(candidates), wanted), strict=True))


def mix(
    ctx: Databases,
    who: Principal,
    model_id: int,
    trait: Trait,
    items: list[Suggestion],
    rescore: Rescore,
    seconds: bool,
    rng: random.Random = _RNG,
) -> list[Suggestion]:
    """`items` with gold items of the trait mixed in at the model's rate, for a person who may label.
    `seconds`: whether this answer's campaign hands out texts colleagues voted on (more votes wanted, or an
    overlap); else a gold text a colleague answered comes as a fresh text, as every ordinary one does."""
    if not items:
        return items
    with transaction(ctx.reads) as s:
        model = s.get(Model, model_id)
        if model is None or model.gold_rate <= 0 or not may_claim(who, model):
            return items
        answered = select(GoldAnswer.gold_id).where(
            GoldAnswer.model_id == model_id, GoldAnswer.annotator == who.annotator
        )
        known = _known(s, model_id, trait, who.annotator)
        shown = {x.id for x in items}
        # Held by as many colleagues as any text may be (`votes_wanted`): not handed out now, so gold is
        # never the one text two queues share when one vote is wanted (docs/api/team.md, "Gold secrecy").
        holders: dict[int, int] = {}
        for pid, annotator, _ in claims.live_claims(s, model_id, trait.key, utcnow()):
            if annotator != who.annotator:
                holders[pid] = holders.get(pid, 0) + 1
        full = {pid for pid, n in holders.items() if n >= model.votes_wanted}
        # A colleague's answer is a colleague's label to the reader: the suggestion says so, as for any text.
        seconded = set(
            s.scalars(
                select(GoldAnswer.gold_id).where(
                    GoldAnswer.model_id == model_id, GoldAnswer.annotator != who.annotator
                )
            )
        )
        rows = {
            pid: (text, meta, seconds and gold_id in seconded)
            for pid, text, meta, gold_id in s.execute(
                select(PoolText.id, PoolText.text, PoolText.meta, GoldItem.id)
                .join(
                    GoldItem,
                    (GoldItem.model_id == PoolText.model_id)
                    & (GoldItem.content_sha256 == PoolText.content_sha256),
                )
                .where(
                    PoolText.model_id == model_id,
                    GoldItem.trait_id == trait.id,
                    GoldItem.id.not_in(answered),
                    GoldItem.added_by != who.annotator,  # who added it knows its answer
                )
                .order_by(PoolText.id)
            ).tuples()
            if pid not in shown and pid not in full and sha256(text) not in known
        }
        rate = model.gold_rate
    texts = {pid: text for pid, (text, _, _) in rows.items()}
    places = plan(len(items), rate, list(texts), rng)
    if not places:
        return items
    kept, dropped = items[: len(items) - len(places)], items[len(items) - len(places) :]
    until = max((x.claimed_until for x in items if x.claimed_until is not None), default=None)
    if until is not None:  # a claiming answer: gold is claimed as its texts are (a reload, a skip)
        with transaction(ctx.sessions) as s:
            for x in dropped:
                claims.release(s, model_id, x.id, who.annotator, trait.key)
            _claim(s, model_id, trait.key, who.annotator, list(places.values()), until)
    fitted = any(x.score is not None for x in items)
    scores = rescore([texts[p] for p in places.values()]) if fitted else [None] * len(places)
    # Its pool text's metadata too: a text shown without the metadata its neighbours have would give it away.
    gold = iter(
        Suggestion(
            id=pid,
            text=texts[pid],
            score=score,
            claimed_until=until,
            metadata=rows[pid][1],
            overlap=rows[pid][2],
        )
        for pid, score in zip(places.values(), scores, strict=True)
    )
    rest = iter(kept)
    return [next(gold) if i in places else next(rest) for i in range(len(items))]


def _claim(s: Session, model_id: int, trait_key: str, me: str, ids: list[int], until: datetime) -> None:
    """`me`'s claims on these gold texts, as the claim rule makes them (under the model row's lock): a
    reload brings them back first and a skip releases one, as for any text."""
    s.scalar(select(Model.id).where(Model.id == model_id).with_for_update())
    claims.drop_expired(s, model_id, utcnow())  # an expired row would refuse the new one (unique)
    held = claims.held_by(s, model_id, trait_key, me, utcnow())
    wanted = s.scalar(select(Model.votes_wanted).where(Model.id == model_id)) or 1
    for pid in ids:
        if pid not in held:
            s.add(
                PoolClaim(
                    model_id=model_id,
                    pool_text_id=pid,
                    trait_key=trait_key,
                    annotator=me,
                    claimed_at=utcnow(),
                    expires_at=until,
                    cap=wanted,
                )
            )
    s.flush()


def _known(s: Session, model_id: int, trait: Trait, me: str, digest: str | None = None) -> set[str]:
    """Digests of the trait's gold texts (of `digest` alone, when given) whose answer `me` knows: they voted
    on the text (a sample, a settling one too, or a buffered label). Such a text is never their gold: it
    would check nothing, and what they read of it (docs/api.md, "Gold items") is no secret to them."""
    gold = select(GoldItem.content_sha256).where(GoldItem.model_id == model_id, GoldItem.trait_id == trait.id)
    if digest is not None:
        gold = gold.where(GoldItem.content_sha256 == digest)
    digests = set(s.scalars(gold))
    if not digests:
        return set()
    voted = set(
        s.scalars(
            select(SampleRow.content_sha256).where(
                SampleRow.model_id == model_id,
                SampleRow.trait_id == trait.id,
                SampleRow.annotator == me,
                SampleRow.content_sha256.in_(digests),
            )
        )
    )
    buffered = s.scalars(
        select(FeedbackLabel.text).where(
            FeedbackLabel.model_id == model_id,
            FeedbackLabel.trait_key == trait.key,
            FeedbackLabel.annotator == me,
        )
    )
    return voted | ({sha256(x) for x in buffered} & digests)


def answer(
    s: Session, model: Model, trait: Trait, text: PoolText, me: str, quality: float, status: ReviewStatus
) -> GoldAnswer | None:
    """Record `me`'s answer if `text` is a gold item of the trait (their first answer stays); None if not,
    nor when they added the item or voted on its text (their label is then a vote, as on any text). It
    starts `status`, where their label would, and the agreement rule accepts answers as it accepts labels."""
    gold = gold_of(s, trait.id, text.content_sha256)
    if gold is None or gold.added_by == me or _known(s, gold.model_id, trait, me, gold.content_sha256):
        return None
    first = s.scalar(select(GoldAnswer).where(GoldAnswer.gold_id == gold.id, GoldAnswer.annotator == me))
    if first is not None:
        return first
    row = GoldAnswer(
        model_id=gold.model_id,
        gold_id=gold.id,
        annotator=me,
        quality=quality,
        correct=pole_of(quality) == pole_of(gold.quality),
        created_at=utcnow(),
        review=status,
    )
    s.add(row)
    s.flush()
    if status == "pending":
        accept_answers_by_agreement(s, model, gold.id)
    return row


def accept_answers_by_agreement(s: Session, model: Model, gold_id: int) -> None:
    """The agreement rule (service/store/review.py) over a gold item's answers, which are its text's labels
    to those who give them: once enough people answered, none rejected, all on one pole, the pending ones
    are accepted, as a text's labels would be. Only where an ordinary text gathers two labels (more than
    one vote wanted, or an overlap): everyone answers a gold item, and an answer accepted where no label
    ever is would tell."""
    if model.accept_rule != "agreement" or (model.votes_wanted < 2 and not model.overlap):
        return
    live = s.scalars(
        select(GoldAnswer).where(GoldAnswer.gold_id == gold_id, GoldAnswer.review != "rejected")
    ).all()
    people = len({a.annotator for a in live})
    if people < max(2, model.votes_wanted) or len({pole_of(a.quality) for a in live}) != 1:
        return
    for a in live:
        if a.review == "pending":
            a.review, a.reviewed_by, a.reviewed_at = "accepted", AGREEMENT, utcnow()


def labelled(
    s: Session,
    model: Model,
    trait: Trait,
    text_id: int,
    quality: float,
    row: GoldAnswer,
    point: int | None = None,
    retraining: bool = False,
) -> Labelled:
    """The label route's answer to a gold answer, as an ordinary label's would read to its person."""
    in_flight = ledger.in_flight(s, model)
    training = in_flight is not None and in_flight.kind in TRAINING_RUNS
    stored_as: Literal["sample", "feedback"] = "sample" if can("edit", model.state) else "feedback"
    # Colleagues' answers are the votes this text has to its readers (gold_labels.py), but never more than an
    # ordinary text of the campaign gathers: without an overlap, the votes wanted (every person answers a gold
    # item, and a count past that would give it away); an overlap's second votes have no such bound.
    answers = s.scalar(select(func.count()).where(GoldAnswer.gold_id == row.gold_id)) or 1
    votes = answers if model.overlap > 0 else min(answers, model.votes_wanted)
    return labelled_answer(
        s, model, trait.key, text_id, quality, point, stored_as, row.id, training, votes, retraining
    )
