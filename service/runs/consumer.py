"""Background work: Huey consumer threads that execute runs, and the stale-run recovery loop.

`serve` runs one consumer thread in-process; `python -m service worker` runs N of them in a process of its
own (service/process/worker.py); `serve --no-worker` runs only the recovery loop. Any process may recover:
the sweep locks the rows it changes, so concurrent sweeps do not collide.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from huey import Huey
from huey.consumer import Consumer, Scheduler
from huey.consumer import Worker as HueyWorker
from huey.utils import time_clock

log = logging.getLogger("service.worker")


class _StoppableWorker(HueyWorker):  # type: ignore[misc]  # huey ships no types: its classes are Any
    """Huey's worker whose idle back-off ends as soon as the consumer stops (Huey sleeps it out)."""

    stop_flag: threading.Event
    delay: float  # Huey's worker sets these in __init__
    max_delay: float
    backoff: float

    def sleep(self) -> None:
        self.delay = min(self.delay, self.max_delay)
        self.stop_flag.wait(self.delay)
        self.delay *= self.backoff


class _StoppableScheduler(Scheduler):  # type: ignore[misc]  # huey ships no types
    """Huey's scheduler whose wait for the next round ends as soon as the consumer stops."""

    stop_flag: threading.Event

    def sleep_for_interval(self, start_ts: float, nseconds: float) -> None:
        self.stop_flag.wait(max(0.0, nseconds - (time_clock() - start_ts)))


class _ThreadConsumer(Consumer):  # type: ignore[misc]  # huey ships no types
    """Huey's consumer without signal handlers (the web server or worker main loop owns the signals), whose
    threads stop waiting when it stops: a stop then takes as long as the run in progress, not a sleep."""

    worker_class = _StoppableWorker
    scheduler_class = _StoppableScheduler

    def _set_signal_handlers(self) -> None:
        pass

    def _create_worker(self) -> _StoppableWorker:
        worker: _StoppableWorker = super()._create_worker()
        worker.stop_flag = self.stop_flag
        return worker

    def _create_scheduler(self) -> _StoppableScheduler:
        scheduler: _StoppableScheduler = super()._create_scheduler()
        scheduler.stop_flag = self.stop_flag
        return scheduler


class RecoveryLoop:
    """Calls `sweep` every `interval_s` on a daemon thread; an exception is logged and retried next round."""

    def __init__(self, sweep: Callable[[], None], interval_s: float) -> None:
        self._sweep = sweep
        self._interval = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="run-recovery", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)

    def _loop(self) -> None:
        # The first sweep at once: a process started after a whole host's crash re-queues the runs whose
        # workers died with it (their run locks are free) as soon as it is up, not an interval later.
        while True:
            try:
                self._sweep()
            except Exception:  # keep the loop alive; the next round retries
                log.exception("run recovery failed")
            if self._stop.wait(self._interval):
                return


class Worker:
    """`workers` Huey consumer threads plus the recovery loop (which also restarts a dead consumer thread:
    Huey's own health check lives in Consumer.run(), which we do not use)."""

    def __init__(
        self, huey: Huey, sweep: Callable[[], None], recovery_interval_s: float, workers: int = 1
    ) -> None:
        self._consumer = _ThreadConsumer(
            huey,
            workers=workers,
            worker_type="thread",
            periodic=False,
            initial_delay=0.05,
            backoff=1.5,
            max_delay=0.5,
            check_worker_health=False,
        )

        def sweep_and_heal() -> None:
            self._consumer.check_worker_health()
            sweep()

        self._recovery = RecoveryLoop(sweep_and_heal, recovery_interval_s)

    def start(self) -> None:
        self._consumer.start()
        self._recovery.start()

    def stop(self, grace_s: float, cancelled: Callable[[], bool] = lambda: False) -> bool:
        """Stop taking messages and wait up to `grace_s` (or until `cancelled()`) for the runs in
        progress; True if every consumer thread finished."""
        self._recovery.stop()
        self._consumer.stop(graceful=False)  # only sets the stop flag; we join with a deadline below
        deadline = time.monotonic() + grace_s
        threads = [t for _, t in self._consumer.worker_threads] + [self._consumer.scheduler]
        for thread in threads:
            # Joined in slices so that `cancelled()` is heard; a thread that ends is joined at once.
            while thread.is_alive() and not cancelled() and (left := deadline - time.monotonic()) > 0:
                thread.join(min(0.05, left))
        return not any(t.is_alive() for t in threads)
