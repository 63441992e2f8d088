"""A claimed run's heartbeat: a thread keeps the run row fresh while the engine works, and progress is written
through it. A heartbeat that finds the claim gone (cancelled, or recovered because the worker's run lock was
lost: service/runs/locks.py) stops the attempt. A late heartbeat alone never takes the run away: liveness is
the run lock's, so a worker that a busy machine starves keeps its claim."""

from __future__ import annotations

import logging
import threading
import time

from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker

from service.errors import is_lock_timeout
from service.store import ledger
from service.store.db import write_retrying
from service.store.schema import RunProgress

log = logging.getLogger("service.runs")

PHASE_MESSAGES = {
    "embedding": "Embedding samples",
    "searching": "Searching parameters",
    "calibrating": "Calibrating scores",
    "saving": "Saving the result",
}


class ClaimLost(Exception):
    """This worker's claim on its run was taken away (cancelled, recovered as stale, or released): stop
    working."""


class Heartbeat:
    """Keeps a claimed run's heartbeat fresh while the engine works; writes progress when asked."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        run_id: str,
        attempt: int,
        interval_s: float,
        patience_s: float = 15.0,
    ) -> None:
        self._sessions = sessions
        self._patience = patience_s
        self._run_id = run_id
        self._attempt = attempt
        self._interval = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"heartbeat-{run_id}", daemon=True)
        self._last_write = 0.0
        self._last_phase = ""
        self.lost = threading.Event()

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _touch(self, progress: RunProgress | None = None) -> None:
        """Write the heartbeat (and progress); a busy database is waited out for up to `patience_s`."""
        mine = write_retrying(
            self._sessions,
            lambda s: ledger.touch(s, self._run_id, self._attempt, progress),
            patience_s=self._patience,
            what=f"heartbeat of {self._run_id}",
        )
        if not mine:
            self.lost.set()

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self._touch()
            except Exception:
                log.exception("heartbeat failed for %s", self._run_id)

    def check(self) -> None:
        """ClaimLost once the heartbeat thread found the claim gone: a check between steps costs no write."""
        if self.lost.is_set():
            raise ClaimLost(self._run_id)

    def progress(self, fraction: float, phase: str, message: str | None = None) -> None:
        self.check()  # noticed by the heartbeat thread
        now = time.monotonic()
        # Throttle DB writes; always write a phase change.
        if phase == self._last_phase and now - self._last_write < 0.5:
            return
        self._last_phase, self._last_write = phase, now
        doc = ledger.progress_doc(
            fraction, phase, message or PHASE_MESSAGES.get(phase, phase.replace("_", " "))
        )
        try:
            self._touch(doc)
        except OperationalError as exc:
            if not is_lock_timeout(exc):
                raise
            # Progress is only shown: a write a busy database kept out is skipped, not the run's work.
            log.info("run %s: progress not written, the database is busy", self._run_id)
        self.check()
