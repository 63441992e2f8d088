"""`python -m service worker`: a process that only executes background runs.

SIGTERM (or SIGINT) is graceful: stop taking messages, let the runs in progress finish for up to
`shutdown_grace_s`, hand the unfinished ones back to the queue, exit 0. A second signal skips the grace.
With `parent_pid` (the embedded service's worker child) the same stop starts once that process is gone.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from types import FrameType

from service.config.settings import Settings
from service.context import Context
from service.process.parent import parent_alive

log = logging.getLogger("service.worker")


def run_worker_process(settings: Settings, workers: int, parent_pid: int | None = None) -> int:
    original_ppid = os.getppid()
    ctx = Context.build(settings.model_copy(update={"run_worker": False}))
    stop = threading.Event()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        if stop.is_set():
            ctx.skip_grace = True
        log.info("received %s, stopping", signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        ctx.start_worker(workers)
        print(f"Scoring worker ready: {workers} thread(s), queue {ctx.queue_name}", flush=True)
        while not stop.wait(0.5):
            if parent_pid is not None and not parent_alive(parent_pid, original_ppid):
                log.info("parent process %d is gone; stopping", parent_pid)
                stop.set()
    finally:
        ctx.close()
    log.info("worker stopped")
    return 0
