"""Everything a request or a worker needs, built once per process from Settings."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from huey import Huey
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from service import runs
from service.cursors import Cursors
from service.db import make_engine, make_read_session_factory, make_session_factory, migrate, transaction
from service.embedding import Embedders, ScorerCache
from service.jobs import Executor
from service.settings import Settings
from service.tasks import Queue, make_huey
from service.worker import InProcessWorker

log = logging.getLogger("service")


@dataclass
class Context:
    settings: Settings
    engine: Engine
    sessions: sessionmaker[Session]
    reads: sessionmaker[Session]  # read-only requests
    cursors: Cursors
    embedders: Embedders
    scorers: ScorerCache
    executor: Executor
    huey: Huey
    queue: Queue
    worker: InProcessWorker | None = field(default=None)

    @classmethod
    def build(cls, settings: Settings) -> Context:
        engine = make_engine(settings.database_url)
        migrate(engine)
        sessions = make_session_factory(engine)
        embedders = Embedders(settings.embedder, settings.data_dir / "embeddings.sqlite")
        executor = Executor(settings, sessions, embedders)
        huey = make_huey(settings)
        return cls(
            settings=settings,
            engine=engine,
            sessions=sessions,
            reads=make_read_session_factory(engine),
            cursors=Cursors(settings.cursor_secret),
            embedders=embedders,
            scorers=ScorerCache(embedders),
            executor=executor,
            huey=huey,
            queue=Queue(huey, executor.execute),
        )

    def enqueue(self, run_id: str) -> None:
        self.queue.enqueue(run_id)

    def recover(self) -> list[str]:
        """Re-queue or fail runs whose worker died; returns the re-queued ids (already enqueued)."""
        s = self.settings
        with transaction(self.sessions) as session:
            ids = runs.recover_stale(session, s.heartbeat_timeout_s, s.max_attempts)
        for run_id in ids:
            log.warning("re-queued run %s after its worker stopped", run_id)
            self.enqueue(run_id)
        return ids

    def start_worker(self) -> None:
        """Recover, re-enqueue queued runs (claiming is idempotent, so duplicates are harmless), start."""
        self.recover()
        with transaction(self.sessions) as session:
            queued = runs.queued_ids(session)
        for run_id in queued:
            self.enqueue(run_id)
        self.worker = InProcessWorker(self.huey, self.recover, self.settings.recovery_interval_s)
        self.worker.start()

    def close(self) -> None:
        if self.worker is not None:
            self.worker.stop()
            self.worker = None
        self.engine.dispose()
