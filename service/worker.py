"""In-process background work for `serve`: a Huey consumer thread plus a recovery loop."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from huey.consumer import Consumer

log = logging.getLogger("service.worker")


class _ThreadConsumer(Consumer):
    """Huey's consumer without signal handlers: the web server owns the process's signals."""

    def _set_signal_handlers(self) -> None:
        pass


class InProcessWorker:
    """One Huey consumer thread plus a thread that recovers stale runs every `recovery_interval_s`."""

    def __init__(self, huey: object, recover: Callable[[], None], recovery_interval_s: float) -> None:
        self._consumer = _ThreadConsumer(
            huey,
            workers=1,
            worker_type="thread",
            periodic=False,
            initial_delay=0.05,
            backoff=1.5,
            max_delay=0.5,
            check_worker_health=False,
        )
        self._recover = recover
        self._interval = recovery_interval_s
        self._stop = threading.Event()
        self._recovery = threading.Thread(target=self._recovery_loop, name="run-recovery", daemon=True)

    def start(self) -> None:
        self._consumer.start()
        self._recovery.start()

    def stop(self) -> None:
        self._stop.set()
        self._consumer.stop(graceful=True)
        self._recovery.join(timeout=5)

    def _recovery_loop(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                # Huey's own health check lives in Consumer.run(), which we do not use: restart a dead
                # worker thread here, then re-queue or fail runs whose worker stopped heartbeating.
                self._consumer.check_worker_health()
                self._recover()
            except Exception:  # keep the loop alive; the next round retries
                log.exception("run recovery failed")
