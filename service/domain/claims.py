"""Claims: a suggestion handed to one person is theirs for a lease, so a team labels disjoint texts.

Granting is decided under the model row's lock (PostgreSQL: SELECT … FOR UPDATE; SQLite: every writer holds
the database's write lock), re-reading the claims and votes the suggestion was computed from: two concurrent
requests cannot both take the last free place of a text. The unique (text, trait, person) row keeps one
person from holding a text twice whatever happens.

Fairness: a person holds at most `claims_per_person` claims on a trait, a claim lasts while its text is
shown (service/domain/suggestions.py ends those an answer does not bring back), each claim keeps the place
it took (`cap`), and a label is never a vote beyond those wanted (`require_room`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from core.engine.types import Sample
from service.domain.access import load_model
from service.domain.needs import Databases
from service.domain.states import require_not_archived
from service.domain.traits import TraitRefs
from service.errors import ApiError
from service.schemas.pool import ClaimReleased
from service.store import claims
from service.store.api_keys import Principal
from service.store.db import transaction
from service.store.samples import CHUNK, sha256
from service.store.schema import MAX_INT, Model, PoolClaim, PoolText, Trait, utcnow


@dataclass(frozen=True)
class Offer:
    """A pool text to claim if it still has room: fewer than `cap` votes and others' live claims."""

    pool_id: int
    cap: int


def may_claim(who: Principal, model: Model) -> bool:
    """Claiming is a write of the labelling kind: a key that may label in the model's namespace. Others
    (a reader of the public catalog) get suggestions without claims, as before claims existed."""
    return who.scope == "authoring" and who.owns(model.namespace) and who.may("label", model.namespace)


def grant(
    s: Session,
    model_id: int,
    trait: Trait,
    me: str,
    offers: list[Offer],
    want: int,
    lease_s: float,
    limit: int,
) -> dict[int, datetime]:
    """Claim up to `want` of `offers` for `me`, in order, while `me` holds fewer than `limit` claims on the
    trait; {pool id: expires at} of those granted. A claim `me` holds already is renewed while its text
    still has room for it: one a colleague's label filled meanwhile ends instead. Texts deleted or filled
    by others meanwhile are passed over."""
    if want < 1 or not offers:
        return {}
    locked = s.scalar(select(Model.id).where(Model.id == model_id).with_for_update())
    assert locked is not None
    now = utcnow()
    expires = now + timedelta(seconds=lease_s)
    claims.drop_expired(s, model_id, now)
    ids = list(dict.fromkeys(o.pool_id for o in offers))
    digests = dict(
        s.execute(
            select(PoolText.id, PoolText.content_sha256).where(
                PoolText.model_id == model_id, PoolText.id.in_(ids)
            )
        )
        .tuples()
        .all()
    )
    held: dict[int, int] = {}  # others' live claims per text
    for pid, annotator, _ in claims.live_claims(s, model_id, trait.key, now):
        if pid in digests and annotator != me:
            held[pid] = held.get(pid, 0) + 1
    mine = claims.held_by(s, model_id, trait.key, me, now)  # {pool id: cap}, on any text
    count = len(mine)
    votes = claims.votes_on(s, model_id, trait.id, trait.key, set(digests.values()))
    granted: dict[int, datetime] = {}
    ended: list[int] = []
    for offer in offers:
        if len(granted) >= want:
            break
        pid = offer.pool_id
        if pid in granted or pid not in digests:  # deleted from the pool meanwhile
            continue
        voters = votes.get(digests[pid], claims.Voters())
        if me in voters.names:
            continue
        taken = voters.count + held.get(pid, 0)
        if pid in mine:
            # A claim's place is the larger of the one it took and the one offered now: the owner may have
            # asked for more votes since.
            if taken >= max(mine[pid], offer.cap):  # filled by others meanwhile: out of the holder's queue
                ended.append(pid)
                continue
        elif taken >= offer.cap or count >= limit:
            continue
        else:
            count += 1
        granted[pid] = expires
    mine_q = (
        PoolClaim.model_id == model_id,
        PoolClaim.trait_key == trait.key,
        PoolClaim.annotator == me,
    )
    if ended:
        s.execute(delete(PoolClaim).where(*mine_q, PoolClaim.pool_text_id.in_(ended)))
    renew = [pid for pid in granted if pid in mine]
    if renew:
        s.execute(
            update(PoolClaim).where(*mine_q, PoolClaim.pool_text_id.in_(renew)).values(expires_at=expires)
        )
    caps = {o.pool_id: o.cap for o in offers}
    for pid in granted:
        if pid not in mine:
            s.add(
                PoolClaim(
                    model_id=model_id,
                    pool_text_id=pid,
                    trait_key=trait.key,
                    annotator=me,
                    claimed_at=now,
                    expires_at=expires,
                    cap=caps[pid],
                )
            )
    s.flush()
    return granted


def require_room(s: Session, model: Model, trait: Trait, me: str, text: PoolText) -> None:
    """A label of `text` by `me` must not be a vote beyond those wanted: refused when its votes and
    colleagues' live claims fill it (a lease that ran out and went to a colleague who labelled it, or a
    text labelled by id that someone holds), unless `me` voted on it already (a repeat or a change) or holds
    a claim it still has room for. Checked under the model row's lock, as claims are granted."""
    s.scalar(select(Model.id).where(Model.id == model.id).with_for_update())
    now = utcnow()
    voters = claims.votes_on(s, model.id, trait.id, trait.key, {text.content_sha256}).get(
        text.content_sha256, claims.Voters()
    )
    if me in voters.names:
        return
    others = sum(
        1
        for pid, annotator, _ in claims.live_claims(s, model.id, trait.key, now)
        if pid == text.id and annotator != me
    )
    # A claim keeps the place it took (an overlap pick's one more vote), and never less than the votes the
    # campaign wants now: a claim taken while one vote was wanted still labels once the owner wants three.
    cap = max(claims.held_by(s, model.id, trait.key, me, now).get(text.id, 0), model.votes_wanted)
    if voters.count + others >= cap:
        raise ApiError(
            409,
            "pool_text_taken",
            f"Pool text {text.id} has the votes it wants for {trait.key!r}, counting colleagues who hold it "
            "now; the label was not stored. Ask for the next suggestions.",
        )


def require_unclaimed(s: Session, model: Model, refs: TraitRefs, me: str | None, votes: list[Sample]) -> None:
    """`POST …/samples` treats a colleague's live claim as the pool route does: the caller's own vote of a
    pool text a colleague holds now is refused (409 `pool_text_taken`, nothing of the request stored)
    unless the text has room for it beside the claim (`require_room`). Texts nobody holds, settles and
    other raters' rows (an import) are stored as before."""
    now = utcnow()
    live = select(PoolClaim.id).where(PoolClaim.model_id == model.id, PoolClaim.expires_at > now).limit(1)
    if me is None or not votes or s.scalar(live) is None:  # an import's cost stays one query
        return
    digests = {sha256(x.text): x for x in votes}
    ordered = sorted(digests)
    for start in range(0, len(ordered), CHUNK):
        chunk = ordered[start : start + CHUNK]
        for row in s.scalars(
            select(PoolText).where(PoolText.model_id == model.id, PoolText.content_sha256.in_(chunk))
        ):
            trait = refs.find(digests[row.content_sha256].trait, ("body", "samples"))
            others = claims.live_claims(s, model.id, trait.key, now)
            if any(pid == row.id and annotator != me for pid, annotator, _ in others):
                require_room(s, model, trait, me, row)


def release_claim(
    ctx: Databases, who: Principal, handle: str, text_id: int, trait: str | None
) -> ClaimReleased:
    """The caller lets go of a text (a skip): it goes back to the others' suggestions at once."""
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True, action="label")
        require_not_archived(model)
        key = TraitRefs(s, model).find(trait, ("query", "trait")).key if trait is not None else None
        exists = 1 <= text_id <= MAX_INT and (
            s.scalar(select(PoolText.id).where(PoolText.id == text_id, PoolText.model_id == model.id))
            is not None
        )
        if not exists:
            raise ApiError(
                404,
                "pool_text_not_found",
                f"No pool text {text_id} in {model.handle}: deleted from the pool, its claims with it.",
            )
        released = claims.release(s, model.id, text_id, who.annotator, key)
        return ClaimReleased(handle=model.handle, id=text_id, trait=key, released=released)
