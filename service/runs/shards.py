"""A training's embedding, split across the worker processes a deployment runs.

Embedding is most of a training's time with the default embedder (a million texts: hours on one core). A
run whose model holds at least two shards' worth of distinct texts (`Settings.shard_texts` each) splits them
by sample id into `run_shards` rows and enqueues one message per shard. Any worker that takes one claims the
shard (queued → running, attempts + 1), reads its texts (the samples with ids in its range), embeds them,
writes its progress and heartbeat to the row as it goes, and stores the vectors (float32) in the row. The
run's own worker (the coordinator) claims shards the same way and keeps the vectors of its own in memory;
when none is left to claim, it waits for the others, re-queues a shard whose holder stopped heartbeating, then
reads the stored vectors and trains on them all. N idle workers embed about N times faster.

Progress: the run's embedding phase reports the texts embedded in every shard (each holder's `done_texts`)
over the run's texts, and how many workers hold a shard.

Crashes: a shard's holder holds the shard's lock while it embeds it (service/runs/locks.py); once its worker
is gone by the rule there (the lock free; on PostgreSQL its heartbeat stale too) the coordinator re-queues
its shard (and takes it, or another worker does), up to `max_attempts` claims per shard, then the run fails.
A holder that is only slow keeps its shard. A coordinator that dies is recovered like any run; its next
attempt keeps the shards whose vectors are stored and embeds the others again (its own, kept in memory, are
gone).
Each write of a holder is conditional on the shard's attempt number, so an earlier holder's late write
changes nothing. The rows go when the run has ended (by the coordinator, or the recovery sweep for a run
that ended without one).

Memory: a shard's holder keeps one shard's texts and vectors. The coordinator must keep every vector of the
run: the engine fits each trait on all of its samples' vectors at once. It also keeps the samples' texts, as
the engine takes samples and groups them by text. Zero-data-retention models are never sharded: their
vectors would be stored in the database.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.sql.elements import ColumnElement

from core.embedders.base import Embedder
from core.engine.errors import EngineError
from core.engine.types import Sample
from service.config.settings import Settings
from service.domain.embedding import Embedders
from service.domain.needs import LOGGED, Checkpoints
from service.runs.locks import NoLocks, RunLocks, holder_gone, shard_key
from service.store import ledger
from service.store.db import read_sessions, rows_changed, transaction, write_retrying
from service.store.schema import Model, Run, RunShard, SampleRow, utcnow

log = logging.getLogger("service.runs")

CHUNK = 256  # texts embedded between two progress writes of a shard
WAIT_S = 0.5  # how often the coordinator looks at the other workers' shards
DROP_PER_TRANSACTION = 8  # shards deleted a transaction: each holds megabytes of vectors


@dataclass(frozen=True)
class Shard:
    no: int
    first_id: int
    last_id: int
    texts: list[str]


def plan(samples: Sequence[Sample], size: int) -> list[Shard]:
    """The samples (by id) cut into shards of `size` distinct texts (a text in two shards is in both)."""
    shards: list[Shard] = []
    texts: dict[str, None] = {}
    first = last = 0
    for sample in sorted(samples, key=lambda x: x.id or 0):
        assert sample.id is not None  # stored samples
        if not texts:
            first = sample.id
        texts.setdefault(sample.text.strip())
        last = sample.id
        if len(texts) == size:
            shards.append(Shard(len(shards), first, last, list(texts)))
            texts = {}
    if texts:
        shards.append(Shard(len(shards), first, last, list(texts)))
    return shards


def shardable(settings: Settings, texts: int, retain: bool) -> bool:
    return retain and settings.shard_texts > 0 and texts >= 2 * settings.shard_texts


class Precomputed:
    """The run's embedder with its texts' vectors already known: the engine's one `encode` call of every
    text is served from them (other texts, the trait poles' and feedback's, go to the embedder)."""

    def __init__(self, embedder: Embedder, rows: dict[str, int], vectors: np.ndarray) -> None:
        self.base = embedder
        self.embedder = getattr(embedder, "embedder", embedder)  # the model behind the cache, for snapshots
        self.id = embedder.id
        self.dim = embedder.dim
        self._rows = rows
        self._vectors = vectors

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """The vectors of `texts`. Serves the precomputed vectors once: the engine embeds every text in one
        call and keeps the result, so they are let go then (a later call goes to the embedder)."""
        found = [self._rows.get(t, -1) for t in texts]
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        known = [i for i, row in enumerate(found) if row >= 0]
        if known:
            out[known] = self._vectors[[found[i] for i in known]]
        missing = [i for i, row in enumerate(found) if row < 0]
        if missing:
            out[missing] = self.base.encode([texts[i] for i in missing])
        self._rows, self._vectors = {}, np.zeros((0, self.dim), dtype=np.float32)
        return out


# -- the coordinator: the run's own worker -------------------------------------------------------------------


@dataclass
class Coordinator:
    run_id: str
    handle: str
    model_id: int
    settings: Settings
    sessions: sessionmaker[Session]
    embedder: Embedder
    enqueue: Callable[[str, int], None]
    report: Callable[[float, str, str], None]  # (fraction of the embedding, phase, message)
    checkpoints: Checkpoints = LOGGED
    locks: RunLocks = field(default_factory=NoLocks)  # the shards' holders hold theirs (`work`)

    def __post_init__(self) -> None:
        # Polling and reading the others' shards needs no write lock (SQLite's writers begin IMMEDIATE).
        self.reads = read_sessions(self.sessions)

    def embed(self, samples: Sequence[Sample]) -> Precomputed:
        shards = plan(samples, self.settings.shard_texts)
        total = sum(len(x.texts) for x in shards)
        rows: dict[str, int] = {}
        for shard in shards:
            for text in shard.texts:
                rows.setdefault(text, len(rows))
        vectors = np.zeros((len(rows), self.embedder.dim), dtype=np.float32)
        queued = self._start(shards)
        for no in queued:
            self.enqueue(self.run_id, no)
        log.info("run %s: %d texts in %d shards (%d to embed)", self.run_id, total, len(shards), len(queued))
        mine: set[int] = set()
        while True:
            claimed = self._claim_next(shards)
            if claimed is not None:
                shard, attempt = claimed
                fresh = self._embed_own(shard, attempt, total)
                vectors[[rows[t] for t in shard.texts]] = fresh
                mine.add(shard.no)
                continue
            if self._all_done(total):
                break
            time.sleep(WAIT_S)
        for shard in shards:
            if shard.no not in mine:
                vectors[[rows[t] for t in shard.texts]] = self._stored(shard)
        return Precomputed(self.embedder, rows, vectors)

    def _start(self, shards: list[Shard]) -> list[int]:
        """Create the run's shard rows, or (a later attempt) keep those whose vectors are stored and queue the
        rest again; returns the shard numbers to enqueue."""

        def start(s: Session) -> list[int]:
            existing = {
                r.shard_no: r for r in s.scalars(select(RunShard).where(RunShard.run_id == self.run_id))
            }
            if any(r.embedder not in (None, self.embedder.id) for r in existing.values()):
                # An earlier attempt chose another embedder (an `auto` model): its vectors do not fit.
                s.execute(delete(RunShard).where(RunShard.run_id == self.run_id))
                existing = {}
            if not existing:
                s.add_all(
                    RunShard(
                        run_id=self.run_id,
                        shard_no=x.no,
                        first_sample_id=x.first_id,
                        last_sample_id=x.last_id,
                        texts=len(x.texts),
                        status="queued",
                        attempts=0,
                        done_texts=0,
                        embedder=self.embedder.id,  # the embedder this training embeds with
                    )
                    for x in shards
                )
                return [x.no for x in shards]
            stored = set(
                s.scalars(
                    select(RunShard.shard_no).where(
                        RunShard.run_id == self.run_id,
                        RunShard.status == "done",
                        RunShard.vectors.is_not(None),
                    )
                )
            )
            again = [no for no in existing if no not in stored and existing[no].status != "running"]
            s.execute(
                update(RunShard)
                .where(RunShard.run_id == self.run_id, RunShard.shard_no.in_(again))
                .values(status="queued", done_texts=0)
                .execution_options(synchronize_session=False)
            )
            return again

        return write_retrying(self.sessions, start, patience_s=self._patience, what=f"sharding {self.run_id}")

    @property
    def _patience(self) -> float:
        return self.settings.heartbeat_timeout_s

    def _claim_next(self, shards: list[Shard]) -> tuple[Shard, int] | None:
        """Claim the first queued shard (after re-queueing those whose holder went silent): (it, attempt)."""

        def claim(s: Session) -> tuple[int, int] | None:
            self._requeue_stale(s)
            queued = s.scalars(
                select(RunShard.shard_no)
                .where(RunShard.run_id == self.run_id, RunShard.status == "queued")
                .order_by(RunShard.shard_no)
                .limit(1)
            ).first()
            if queued is None:
                return None
            attempt = claim_shard(s, self.run_id, queued)
            return None if attempt is None else (queued, attempt)

        what = f"claiming a shard of {self.run_id}"
        claimed = write_retrying(self.sessions, claim, patience_s=self._patience, what=what)
        return None if claimed is None else (shards[claimed[0]], claimed[1])

    def _requeue_stale(self, s: Session) -> None:
        held = s.scalars(
            select(RunShard).where(RunShard.run_id == self.run_id, RunShard.status == "running")
        ).all()
        timeout = self.settings.heartbeat_timeout_s
        for shard in held:
            key = shard_key(self.run_id, shard.shard_no)
            if not holder_gone(self.locks, key, shard.heartbeat_at, timeout):
                continue
            if shard.attempts >= self.settings.max_attempts:
                raise EngineError(
                    f"The worker embedding shard {shard.shard_no} stopped {shard.attempts} times; "
                    "the run was abandoned."
                )
            log.warning("run %s: shard %d's worker stopped; queueing it again", self.run_id, shard.shard_no)
            shard.status, shard.done_texts = "queued", 0

    def _embed_own(self, shard: Shard, attempt: int, total: int) -> np.ndarray:
        """Embed a shard this worker claimed; its vectors stay here (the row records it done, without them).
        If it was re-queued meanwhile (a stall past the heartbeat timeout), it is finished here all the same
        and the other holder's copy is not needed."""
        where = f"shard {shard.no} of run {self.run_id}"
        self.checkpoints.reached("shard_claimed", self.handle, where, attempt)
        blocks = []
        for start in range(0, len(shard.texts), CHUNK):
            blocks.append(
                np.asarray(self.embedder.encode(shard.texts[start : start + CHUNK]), dtype=np.float32)
            )
            done = min(len(shard.texts), start + CHUNK)
            touch_shard(self.sessions, self.run_id, shard.no, None, done, self._patience)
            self._progress(total)
        write_retrying(
            self.sessions,
            lambda s: finish_shard(s, self.run_id, shard.no, None, len(shard.texts), None),
            patience_s=self._patience,
            what=f"finishing shard {shard.no} of {self.run_id}",
        )
        return np.vstack(blocks) if blocks else np.zeros((0, self.embedder.dim), dtype=np.float32)

    def _all_done(self, total: int) -> bool:
        with transaction(self.reads) as s:
            open_shards = s.scalar(
                select(func.count()).where(RunShard.run_id == self.run_id, RunShard.status != "done")
            )
        self._progress(total)
        return not open_shards

    def _progress(self, total: int) -> None:
        with transaction(self.reads) as s:
            done, holders = s.execute(
                select(
                    func.coalesce(func.sum(RunShard.done_texts), 0),
                    func.count().filter(RunShard.status == "running"),
                ).where(RunShard.run_id == self.run_id)
            ).one()
        fraction = int(done) / max(total, 1)
        self.report(
            fraction, "embedding", f"Embedding: {int(done):,} of {total:,} texts, {int(holders)} worker(s)"
        )

    def _stored(self, shard: Shard) -> np.ndarray:
        with transaction(self.reads) as s:
            blob = s.scalar(
                select(RunShard.vectors).where(RunShard.run_id == self.run_id, RunShard.shard_no == shard.no)
            )
        if blob is None:
            raise EngineError(f"shard {shard.no} of the run has no vectors")
        vectors = np.frombuffer(blob, dtype=np.float32).reshape(-1, self.embedder.dim)
        if len(vectors) != len(shard.texts):
            raise EngineError(f"shard {shard.no} holds {len(vectors)} vectors for {len(shard.texts)} texts")
        return vectors


# -- a shard's holder ----------------------------------------------------------------------------------------


def claim_shard(s: Session, run_id: str, shard_no: int) -> int | None:
    """queued → running, attempts + 1, while the run runs; the holder's attempt number, or None."""
    running = select(Run.id).where(Run.id == run_id, Run.status == "running").exists()
    changed = rows_changed(
        s,
        update(RunShard)
        .where(RunShard.run_id == run_id, RunShard.shard_no == shard_no, RunShard.status == "queued", running)
        .values(status="running", attempts=RunShard.attempts + 1, heartbeat_at=utcnow(), done_texts=0)
        .execution_options(synchronize_session=False),
    )
    if changed != 1:
        return None
    return s.scalar(select(RunShard.attempts).where(RunShard.run_id == run_id, RunShard.shard_no == shard_no))


def _held(run_id: str, shard_no: int, attempt: int | None) -> ColumnElement[bool]:
    """The shard's row while its holder (the attempt that claimed it; None: whoever holds it now) holds it."""
    cond = (RunShard.run_id == run_id) & (RunShard.shard_no == shard_no) & (RunShard.status == "running")
    return cond if attempt is None else cond & (RunShard.attempts == attempt)


def touch_shard(
    sessions: sessionmaker[Session],
    run_id: str,
    shard_no: int,
    attempt: int | None,
    done: int,
    patience_s: float,
) -> bool:
    """Heartbeat and progress of a held shard; False when it was taken away."""

    def touch(s: Session) -> bool:
        changed = rows_changed(
            s,
            update(RunShard)
            .where(_held(run_id, shard_no, attempt))
            .values(heartbeat_at=utcnow(), done_texts=done)
            .execution_options(synchronize_session=False),
        )
        return changed == 1

    return write_retrying(
        sessions, touch, patience_s=patience_s, what=f"progress of shard {shard_no} of {run_id}"
    )


def finish_shard(
    s: Session, run_id: str, shard_no: int, attempt: int | None, texts: int, vectors: bytes | None
) -> bool:
    changed = rows_changed(
        s,
        update(RunShard)
        .where(_held(run_id, shard_no, attempt))
        .values(status="done", done_texts=texts, heartbeat_at=utcnow(), vectors=vectors)
        .execution_options(synchronize_session=False),
    )
    return changed == 1


def work(
    sessions: sessionmaker[Session],
    embedders: Embedders,
    settings: Settings,
    checkpoints: Checkpoints,
    locks: RunLocks,
    run_id: str,
    shard_no: int,
) -> None:
    """A worker's share: claim the shard (if still queued and its run still running), embed it, store it,
    holding the shard's lock from before the claim until after its last write."""
    with locks.hold(shard_key(run_id, shard_no)) as mine:
        if mine:
            _work(sessions, embedders, settings, checkpoints, run_id, shard_no)


def _work(
    sessions: sessionmaker[Session],
    embedders: Embedders,
    settings: Settings,
    checkpoints: Checkpoints,
    run_id: str,
    shard_no: int,
) -> None:
    patience = settings.heartbeat_timeout_s

    def claim(s: Session) -> tuple[int, int, int, int, str, str | None] | None:
        attempt = claim_shard(s, run_id, shard_no)
        if attempt is None:
            return None
        shard = s.scalar(select(RunShard).where(RunShard.run_id == run_id, RunShard.shard_no == shard_no))
        run = s.get(Run, run_id)
        assert shard is not None and run is not None
        model = s.get(Model, run.model_id)
        assert model is not None
        return (
            attempt,
            run.model_id,
            shard.first_sample_id,
            shard.last_sample_id,
            model.handle,
            shard.embedder or model.embedder,
        )

    claimed = write_retrying(
        sessions, claim, patience_s=patience, what=f"claiming shard {shard_no} of {run_id}"
    )
    if claimed is None:
        return  # done, held by another worker, or the run has ended
    attempt, model_id, first, last, handle, embedder_name = claimed
    checkpoints.reached("shard_claimed", handle, f"shard {shard_no} of run {run_id}", attempt)
    with transaction(read_sessions(sessions)) as s:
        texts = list(
            dict.fromkeys(
                t.strip()
                for t in s.scalars(
                    select(SampleRow.text)
                    .where(SampleRow.model_id == model_id, SampleRow.id >= first, SampleRow.id <= last)
                    .order_by(SampleRow.id)
                )
            )
        )
    embedder = embedders.get(embedder_name)
    log.info("run %s: embedding shard %d (%d texts, attempt %d)", run_id, shard_no, len(texts), attempt)
    blocks = []
    for start in range(0, len(texts), CHUNK):
        blocks.append(np.asarray(embedder.encode(texts[start : start + CHUNK]), dtype=np.float32))
        if not touch_shard(sessions, run_id, shard_no, attempt, min(len(texts), start + CHUNK), patience):
            log.info("run %s: shard %d was taken away; leaving it", run_id, shard_no)
            return
    vectors = np.vstack(blocks) if blocks else np.zeros((0, embedder.dim), dtype=np.float32)
    stored = write_retrying(
        sessions,
        lambda s: finish_shard(s, run_id, shard_no, attempt, len(texts), vectors.tobytes()),
        patience_s=patience,
        what=f"storing shard {shard_no} of {run_id}",
    )
    log.info("run %s: shard %d %s", run_id, shard_no, "stored" if stored else "was taken away meanwhile")


# -- the end of a run ----------------------------------------------------------------------------------------


def drop(sessions: sessionmaker[Session], run_id: str) -> None:
    """Delete a run's shards, a few a transaction (their vectors are megabytes each)."""
    while True:
        with transaction(sessions) as s:
            ids = list(
                s.scalars(select(RunShard.id).where(RunShard.run_id == run_id).limit(DROP_PER_TRANSACTION))
            )
            if not ids:
                return
            s.execute(delete(RunShard).where(RunShard.id.in_(ids)))


def orphaned(s: Session) -> list[str]:
    """Runs that ended but still have shards (their coordinator died before it could drop them)."""
    return list(
        s.scalars(
            select(RunShard.run_id)
            .join(Run, Run.id == RunShard.run_id)
            .where(Run.status.not_in(ledger.IN_FLIGHT))
            .distinct()
        )
    )
