"""What to label next: suggestions from a model's pool for one person, claimed for them when asked.

A text is offered while it has fewer votes than the model wants (`votes_wanted`, counting others' live
claims as votes on their way) and the caller has not voted on it. Texts others voted on and that still want
votes come first (`overlap: true`); with one vote wanted, `overlap` asks for a second vote on that share
(docs/api.md, "Claims and votes wanted"). With `claim`, the caller's still-claimed texts come back first
(a reload resumes where it stopped) and every text handed out is claimed for them (service/domain/claims.py).
The order a queue serves its sources in is `plan`'s: claims, the caller's assignment
(service/domain/assignments.py), then the shared pool while the model's `shared_pool` allows it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import cast

import numpy as np
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.contract import SuggestMode
from core.embedders.base import Embedder
from service.domain import fair_share
from service.domain.access import load_model
from service.domain.claims import Offer, grant, may_claim
from service.domain.fair_share import FairShare, StillWanted
from service.domain.gold_queue import mix as mix_gold
from service.domain.needs import Resources
from service.domain.pool_index import cached, unit_rows
from service.domain.scoring import UNSHARED, caller_of
from service.domain.traits import TraitRefs
from service.schemas.pool import SuggestIn, Suggestion, SuggestOut
from service.store import assignments, claims
from service.store.api_keys import Principal
from service.store.db import transaction
from service.store.embedders import model_embedder
from service.store.gold import gold_pool_ids
from service.store.heldout import evaluation_pool_ids
from service.store.samples import sha256, trait_specs
from service.store.schema import FeedbackLabel, PoolText, SampleRow, Trait, utcnow


@dataclass
class _Read:
    """What one suggestion request reads in one snapshot."""

    trait: Trait
    votes_wanted: int
    L: np.ndarray  # the labels' vectors
    q: np.ndarray  # their qualities
    ids: np.ndarray
    X: np.ndarray
    exclude: np.ndarray  # rows not to pick anew
    ready: np.ndarray  # rows whose vectors are known (pool_index.Matrix)
    unlabelled: int
    held_by_others: int  # of `unlabelled`, texts whose room colleagues' live claims take
    mine: list[int]  # the caller's live claims, oldest first
    assigned: list[int]  # the caller's assigned texts not voted on for the trait, in the order given
    shared: list[tuple[int, int]]  # (pool id, cap): texts others voted on that want another vote
    others_voted: set[int]  # pool texts a colleague voted on
    voted: int = 0  # texts of the trait the caller voted on
    seconded: int = 0  # of those, texts a colleague had voted on first (the caller's overlap votes)


@dataclass(frozen=True)
class Plan:
    """What one answer serves, in the queue's order: the caller's live claims, their assignment, then the
    shared pool's texts colleagues voted on that want another vote (`shared`: pool id, cap) and `fresh`
    new picks of the engine's."""

    mine: list[int]
    assigned: list[int]
    shared: list[tuple[int, int]]
    fresh: int


def plan(read: _Read, k: int, overlap: float, claiming: bool, shared_pool: bool) -> Plan:
    """The queue's pick order, in one place. A reload resumes the caller's claims; their assignment comes
    next; the shared pool fills the rest unless the owner keeps queues to assignments. More votes wanted:
    texts that still want them come first of the shared pool's; else `overlap` asks for that share."""
    mine = read.mine[:k] if claiming else []
    assigned = [i for i in read.assigned if i not in mine][: k - len(mine)]
    need = k - len(mine) - len(assigned)
    if not shared_pool:
        return Plan(mine, assigned, [], 0)
    queued = len(mine) + len(assigned) + need
    own = max(round(overlap * need), overlap_due(read, overlap, queued))
    n_shared = need if read.votes_wanted > 1 else own
    shared = read.shared[: min(len(read.shared), n_shared)]
    return Plan(mine, assigned, shared, need - len(shared))


def overlap_due(read: _Read, overlap: float, queued: int) -> int:
    """How many of this answer's texts are to be second votes to keep `overlap` of the caller's work on the
    trait (their votes, and the `queued` texts this answer holds for them), less the second votes among it.
    On top of each answer's own share: that share rounded a 20 % overlap of a short answer to none, and a
    queue fetched before any colleague labelled (nothing to second yet) was never made up for."""
    work = read.voted + queued
    held = sum(1 for i in [*read.mine, *read.assigned] if i in read.others_voted)
    return max(0, math.floor(overlap * work + 0.5) - read.seconded - held)


#: Suggestion rounds of one claiming request at most: a round whose picks colleagues claimed first (their
#: requests read the same pool at the same moment) is followed by one that sees their claims.
ROUNDS = 3


def suggest_next(
    ctx: Resources,
    who: Principal,
    handle: str,
    payload: SuggestIn,
    still_wanted: StillWanted = lambda: None,
    share: FairShare | None = None,
) -> SuggestOut:
    """The caller's next texts. What it embeds itself goes in pieces, each in the caller's turn of scoring's
    `share` (service/domain/fair_share.py), `still_wanted` asked between them: a request whose client left,
    or whose process stops, ends at its next piece."""
    work = _Work(caller_of(who), share or UNSHARED, still_wanted)
    for _ in range(ROUNDS):
        out, contended = _round(ctx, who, handle, payload, work)
        if not contended:
            break
        still_wanted()
    return out


@dataclass(frozen=True)
class _Work:
    """How a suggestion embeds what the cache lacks: in its caller's turns, asking `still_wanted`."""

    caller: str
    share: FairShare
    still_wanted: StillWanted

    def encoder(self, embedder: Embedder) -> _InTurns:
        return _InTurns(embedder, self)


class _InTurns:
    """`embedder` for a suggestion: cached vectors read at once, the rest encoded in the caller's turns."""

    def __init__(self, embedder: Embedder, work: _Work) -> None:
        self.embedder, self.work = embedder, work
        self.id, self.dim = embedder.id, embedder.dim

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        X, found = cached(self.embedder, texts)
        missing = [t for t, f in zip(texts, found, strict=True) if not f]
        if missing:
            w = self.work
            encode, id_ = self.embedder.encode, self.embedder.id
            X[~found] = np.vstack(list(w.share.in_turns(w.caller, missing, encode, w.still_wanted, id_)))
        return unit_rows(X)


def _round(
    ctx: Resources, who: Principal, handle: str, payload: SuggestIn, work: _Work
) -> tuple[SuggestOut, bool]:
    """One suggestion, and whether colleagues took some of its picks first (it came out short)."""
    from core.engine.suggest import fit, pole_prior, suggest  # scikit-learn: loaded by a first use

    with transaction(ctx.reads) as s:
        model = load_model(s, who, handle)
        claiming = payload.claim and may_claim(who, model)
        plain = ctx.embedders.get(model_embedder(s, model))
        embedder = work.encoder(plain)
        trait = TraitRefs(s, model).find(payload.trait, ("body", "trait"))
        overlap = model.overlap if payload.overlap is None else payload.overlap  # the owner's, unless asked
        read = _read(ctx, s, model.id, model.votes_wanted, trait, who.annotator, overlap > 0, embedder)
        model_id, shared_pool = model.id, model.shared_pool
        # Texts the worker has not embedded yet: only as many as this answer lacks are embedded here (a
        # pool's first answers pick among what is embedded so far): a long text's window costs seconds of a
        # core with the blend, and a pool at the quota an hour.
        _fill(ctx, s, model_id, plain, embedder, read, payload.k * (2 if claiming else 1))
    work.still_wanted()
    spec = trait_specs([read.trait])[0]
    L, q = read.L, read.q
    # The pole-text prior makes the margin the one training's own fit would show (core.engine.suggest).
    prior = pole_prior(spec, embedder)
    # One fit per answer: it picks, and scores the texts handed out beside the picks (claims, gold items).
    fitted = fit(L, q, prior)
    order = plan(read, payload.k, overlap, claiming, shared_pool)
    mine, assigned, shared = order.mine, order.assigned, order.shared
    need = order.fresh + len(shared)  # what the shared pool serves
    spare = need if claiming else 0  # taken meanwhile by a colleague: the next ones stand in
    picked = suggest(
        read.X,
        L,
        q,
        k=order.fresh + spare,
        mode=payload.mode,
        exclude=read.exclude | ~read.ready,
        prior=prior,
        fitted=fitted,
    )
    chosen = [int(read.ids[i]) for i in picked.indices]
    scores = dict(zip(chosen, picked.scores, strict=True))
    until: dict[int, datetime] = {}
    if claiming:
        with transaction(ctx.sessions) as s:
            me, trait, lease = who.annotator, read.trait, ctx.settings.claim_lease_s
            wanted, most = read.votes_wanted, ctx.settings.claims_per_person
            # A claim lasts while its text is shown: those this answer does not bring back end now.
            claims.release_all_but(s, model_id, trait.key, me, mine)
            until = grant(s, model_id, trait, me, [Offer(i, wanted) for i in mine], len(mine), lease, most)
            offers = [Offer(i, wanted) for i in assigned]
            given = grant(s, model_id, trait, me, offers, len(assigned), lease, most)
            offers = [Offer(i, c) for i, c in shared]
            spread = grant(s, model_id, trait, me, offers, len(shared), lease, most)
            offers = [Offer(i, wanted) for i in chosen]
            own = grant(s, model_id, trait, me, offers, need - len(spread), lease, most)
        got = len(until) + len(given) + len(spread) + len(own)
        offered = len(chosen) + len(shared) + len(assigned)
        refused = got < min(payload.k, most) and offered > len(given) + len(spread) + len(own)
        mine = [i for i in mine if i in until]
        assigned = [i for i in assigned if i in given]
        shared_ids = [i for i, _ in shared if i in spread]
        chosen = [i for i in chosen if i in own]
        until |= given | spread | own
    else:
        refused = False
        shared_ids = [i for i, _ in shared]
        chosen = chosen[: need - len(shared_ids)]
    with transaction(ctx.reads) as s:
        picked_rows = s.execute(
            select(PoolText.id, PoolText.text, PoolText.meta).where(
                PoolText.id.in_([*mine, *assigned, *chosen, *shared_ids])
            )
        ).tuples()
        texts, metas = {}, {}
        for pid, text, meta in picked_rows:
            texts[pid], metas[pid] = text, meta
    scored = [
        i for i in [*mine, *assigned, *shared_ids] if i in texts
    ]  # scored with the fit, as the picks are
    if scored:
        scores |= dict(zip(scored, fitted.scores(embedder.encode([texts[i] for i in scored])), strict=True))

    def item(i: int, overlap: bool = False) -> Suggestion:
        return Suggestion(
            id=i,
            text=texts[i],
            score=scores.get(i),
            overlap=overlap,
            claimed_until=until.get(i),
            metadata=metas.get(i),
        )

    fresh = [item(i) for i in chosen if i in texts]  # deleted meanwhile
    extra = [item(i, True) for i in shared_ids if i in texts]
    back = [item(i, i in read.others_voted) for i in [*mine, *assigned] if i in texts]
    items = mix_gold(
        ctx,
        who,
        model_id,
        read.trait,
        # More votes wanted: the texts that still want them lead the queue (a text is done before new ones
        # open); else the overlap's share is spread among the new ones.
        [*back, *(extra + fresh if read.votes_wanted > 1 else _spread(fresh, extra))],
        lambda t: fitted.scores(embedder.encode(t)),
        seconds=read.votes_wanted > 1 or overlap > 0,
    )
    out = SuggestOut(
        trait=read.trait.key,
        mode=cast(SuggestMode, picked.mode),
        items=items,
        pool_size=len(read.ids),
        labelled=len(q),
        unlabelled=read.unlabelled,
        held_by_others=read.held_by_others,
    )
    return out, refused


def _read(
    ctx: Resources,
    s: Session,
    model_id: int,
    votes_wanted: int,
    trait: Trait,
    me: str,
    overlap: bool,
    embedder: _InTurns,
) -> _Read:
    # The trait's labels so far: its samples, and feedback labels waiting for retraining (a ready model).
    samples = list(
        s.execute(
            select(SampleRow.id, SampleRow.content_sha256, SampleRow.quality, SampleRow.annotator).where(
                SampleRow.model_id == model_id, SampleRow.trait_id == trait.id
            )
        ).tuples()
    )
    feedback = list(
        s.execute(
            select(
                FeedbackLabel.text, FeedbackLabel.quality, FeedbackLabel.annotator, FeedbackLabel.id
            ).where(FeedbackLabel.model_id == model_id, FeedbackLabel.trait_key == trait.key)
        ).tuples()
    )
    votes = claims.tally((t, a) for t, _, a, _ in feedback)
    for _, digest, _, annotator in samples:
        votes.setdefault(digest, claims.Voters()).add(annotator)
    voted, seconded = _my_votes(
        me, [(i, d, a) for i, d, _, a in samples] + [(i, sha256(t), a) for t, _, a, i in feedback]
    )
    L = label_vectors(s, [i for i, *_ in samples], [t for t, *_ in feedback], embedder)
    q = np.asarray(
        [float(v) for *_, v, _ in samples] + [float(v) for _, v, _, _ in feedback], dtype=np.float64
    )
    embedder.work.still_wanted()
    pool = ctx.pools.matrix(s, model_id, embedder.embedder)
    ids, X = pool.ids, pool.X
    digests: dict[int, str] = {}
    if votes and len(ids):
        digests = dict(
            s.execute(
                select(PoolText.id, PoolText.content_sha256).where(
                    PoolText.model_id == model_id, PoolText.content_sha256.in_(set(votes))
                )
            )
            .tuples()
            .all()
        )
    # Texts of the evaluation set (in the pool from before the set had them) are never handed out, even
    # claimed before the set had them (their claims end with this answer); the trait's gold texts only as
    # gold (service/domain/gold_queue.py).
    evaluation = evaluation_pool_ids(s, model_id) if len(ids) else set()
    held = evaluation | gold_pool_ids(s, model_id, trait.id) if len(ids) else set()
    mine: list[int] = []
    others_claims: dict[int, int] = {}
    for pid, annotator, _ in claims.live_claims(s, model_id, trait.key, utcnow()):
        if annotator == me:
            if pid not in evaluation:
                mine.append(pid)
        else:
            others_claims[pid] = others_claims.get(pid, 0) + 1
    # Assigned texts: the caller's come first; a colleague's stay theirs until they vote on them.
    assigned: list[int] = []
    reserved: set[int] = set()
    for pid, annotator, digest in assignments.assigned(s, model_id) if len(ids) else []:
        if annotator in votes.get(digest, claims.Voters()).names:
            continue
        if annotator == me:
            assigned.append(pid)
        else:
            reserved.add(pid)
    reserved -= set(assigned)
    full: set[int] = set()  # as many votes as wanted: out of everyone's queue
    taken: set[int] = set(mine)  # not to be picked anew for the caller
    shared: list[tuple[int, int, int]] = []  # (voters, pool id, cap)
    others_voted: set[int] = set()
    for pid, digest in digests.items():
        voters = votes[digest]
        if voters.count >= votes_wanted:
            full.add(pid)
        if me in voters.names:
            taken.add(pid)
            continue
        others_voted.add(pid)
        if pid in held or pid in mine:
            continue
        if votes_wanted > 1:  # a text that still wants votes, counting the colleagues holding it
            if voters.count + others_claims.get(pid, 0) < votes_wanted:
                shared.append((voters.count, pid, votes_wanted))
        elif overlap and voters.names and not others_claims.get(pid):
            # An overlap pick is one more vote, by one person at a time: granted only while nobody voted
            # on it or claimed it meanwhile. Only a named colleague's vote asks for a second one: an
            # unattributed label (a file's row) has no rater to agree with.
            shared.append((voters.count, pid, voters.count + 1))
    held_by_others = 0
    for pid, n in others_claims.items():
        voters = votes.get(digests.get(pid, ""), claims.Voters())
        if voters.count + n >= votes_wanted:
            taken.add(pid)
            held_by_others += voters.count < votes_wanted and pid not in held
    exclude = np.zeros(len(ids), dtype=bool)
    # A text that wants another vote is offered through `shared` only, where its cap is checked.
    shared = [x for x in shared if x[1] not in reserved and x[1] not in assigned]
    out = full | taken | held | reserved | set(assigned) | {pid for _, pid, _ in shared}
    if out and len(ids):
        exclude = np.isin(ids, np.fromiter(out, dtype=np.int64, count=len(out)))
    # Fewest voters first (a second vote on as many texts as possible), then the oldest in the pool.
    shared.sort()
    return _Read(
        trait=trait,
        votes_wanted=votes_wanted,
        L=L,
        q=q,
        ids=ids,
        X=X,
        exclude=exclude,
        ready=pool.ready,
        unlabelled=len(ids) - len(full | held),
        held_by_others=held_by_others,
        mine=mine,
        assigned=[pid for pid in assigned if pid not in full and pid not in held],
        shared=[(pid, c) for _, pid, c in shared],
        others_voted=others_voted,
        voted=voted,
        seconded=seconded,
    )


#: Pool texts not embedded yet a suggestion embeds all of itself when they cost this much at most (in
#: fair_share's tokens: a few hundred short texts, 15 full windows); past it, only what its answer lacks.
FILL_COST = 16 * fair_share.PIECE_COST


def _fill(
    ctx: Resources, s: Session, model_id: int, plain: Embedder, embedder: _InTurns, read: _Read, want: int
) -> None:
    """Embed the allowed rows not ready when they are few (FILL_COST at most: the answer is then the one a
    pool embedded whole gives), else the oldest until `want` allowed rows are, so a suggestion never waits
    for a whole pool the worker is still embedding."""
    allowed = ~read.exclude
    todo = np.flatnonzero(allowed & ~read.ready)
    if not len(todo):
        return
    wanted = [int(i) for i in read.ids[todo]]
    lengths = s.execute(select(func.length(PoolText.text)).where(PoolText.id.in_(wanted))).scalars()
    if sum(map(fair_share.length_cost, lengths)) > FILL_COST:
        todo = todo[: max(0, want - int((allowed & read.ready).sum()))]
        if not len(todo):
            return
    ids = [int(i) for i in read.ids[todo]]
    texts = dict(s.execute(select(PoolText.id, PoolText.text).where(PoolText.id.in_(ids))).tuples().all())
    present = np.asarray([i in texts for i in ids], dtype=bool)  # deleted meanwhile: stays not ready
    todo = todo[present]
    vecs = embedder.encode([texts[int(i)] for i in read.ids[todo]])
    read.X, read.ready = read.X.copy(), read.ready.copy()
    read.X[todo], read.ready[todo] = vecs, True
    ctx.pools.learn(model_id, plain, read.ids[todo], vecs)


def _my_votes(me: str, labels: list[tuple[int, str, str | None]]) -> tuple[int, int]:
    """Of (label id, content hash, annotator) labels: the texts `me` voted on, and of those the texts
    someone else had voted on first (label ids are given in order: service/store/label_ids.py)."""
    first: set[str] = set()
    mine: set[str] = set()
    seconded = 0
    for _, digest, annotator in sorted(labels):
        if annotator == me and digest not in mine:
            mine.add(digest)
            seconded += digest in first
        first.add(digest)
    return len(mine), seconded


#: Label texts read and encoded at once: a model's labels are as many as its team keeps, each up to
#: MAX_TEXT_CHARS, so they are read by id in pieces, only their vectors kept (docs/benchmarks/memory.md).
LABEL_PIECE = 256


def label_vectors(s: Session, sample_ids: list[int], feedback: list[str], embedder: Embedder) -> np.ndarray:
    """The vectors of these samples' texts (read `LABEL_PIECE` at a time), then of the feedback labels'."""
    L = np.zeros((len(sample_ids) + len(feedback), embedder.dim), dtype=np.float32)
    for start in range(0, len(sample_ids), LABEL_PIECE):
        piece = sample_ids[start : start + LABEL_PIECE]
        rows = s.execute(select(SampleRow.id, SampleRow.text).where(SampleRow.id.in_(piece))).tuples()
        texts = dict(rows.all())
        L[start : start + len(piece)] = embedder.encode([texts[i] for i in piece])
    if feedback:  # the buffer waiting for a retraining: a few dozen labels
        L[len(sample_ids) :] = embedder.encode(feedback)
    return L


def _spread(items: list[Suggestion], extra: list[Suggestion]) -> list[Suggestion]:
    """`extra` placed evenly among `items` (the Label page takes its queue in this order)."""
    n = len(items) + len(extra)
    slots = {round((j + 1) * n / (len(extra) + 1)) - 1 for j in range(len(extra))}
    out, rest, more = [], iter(items), iter(extra)
    for i in range(n):
        nxt = next(more, None) if i in slots else next(rest, None)
        if nxt is None:
            nxt = next(rest, None) or next(more)
        out.append(nxt)
    return out
