"""The embedded service's background runs, in a child process beside the API process.

Training, discovery, synthesis and evaluation are CPU-bound numpy/onnxruntime work. Run on a thread of the API
process they take its interpreter lock between native calls and every core inside them, and score requests
queue behind them (the load benchmark's mixed round, README). So `serve` (without `--no-worker`) starts
`python -m service worker` as a child: an interpreter of its own, a lower CPU priority (`nice`), and
onnxruntime and BLAS bounded to `WORKER_THREADS` threads. The child watches the API process (`--parent-pid`)
and stops once it is gone, also after a `kill -9`; a normal shutdown of the API stops it with SIGTERM, which
lets its runs finish within the shutdown grace. A child that exits on its own (a crash) is started again.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading

from service.config.settings import Settings

log = logging.getLogger("service.worker")

# A little below the API process: where the two share a core, a score request gets most of it. No more: the
# worker runs one thread (WORKER_THREADS), so beside the API it never takes a core a score request needs on a
# machine of two or more, and at nice 10 a lone user's training crawled beside any other program of theirs
# (a weight of 110 against their programs' 1024; at 2, 655).
WORKER_NICE = 2
WORKER_THREADS = 1  # onnxruntime / BLAS threads of a run: the other cores stay with the score path
THREAD_ENV = ("SCORING_EMBEDDER_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


class WorkerChild:
    """`python -m service worker` with this process as its parent; `stop()` is graceful and idempotent."""

    def __init__(self, settings: Settings, workers: int = 1) -> None:
        self._settings = settings
        self._workers = workers
        self._process: subprocess.Popen[bytes] | None = None
        self._stopping = threading.Event()
        self._watch = threading.Thread(target=self._keep_running, name="worker-child", daemon=True)

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def command(self) -> list[str]:
        s = self._settings
        cmd = [
            sys.executable,
            "-m",
            "service",
            "worker",
            "--workers",
            str(self._workers),
            "--data-dir",
            str(s.data_dir),
            "--database-url",
            s.database_url,
            "--embedder",
            s.embedder,
            "--parent-pid",
            str(os.getpid()),
            "--nice",
            str(WORKER_NICE),
        ]
        if s.queue_url:
            cmd += ["--queue-url", s.queue_url]
        return cmd

    def start(self) -> None:
        self._spawn()
        self._watch.start()

    def _spawn(self) -> None:
        env = {**os.environ, **dict.fromkeys(THREAD_ENV, str(WORKER_THREADS)), "PYTHONUNBUFFERED": "1"}
        # stdout and stderr are the API process's own (its log). A session of its own: Ctrl-C in a terminal
        # reaches only the API process, which then stops the child with one SIGTERM (a second would skip the
        # grace); --parent-pid covers the API process dying without stopping it.
        self._process = subprocess.Popen(
            self.command(), env=env, stdin=subprocess.DEVNULL, start_new_session=True
        )
        log.info("started the worker process (pid %d)", self._process.pid)

    def _keep_running(self) -> None:
        while not self._stopping.wait(2.0):
            process = self._process
            if process is not None and process.poll() is not None and not self._stopping.is_set():
                log.warning("the worker process exited (code %s); starting another", process.returncode)
                self._spawn()  # the recovery sweep re-queues the runs the dead one held

    def stop(self) -> None:
        """SIGTERM, then wait out the worker's shutdown grace (plus start-up slack) before SIGKILL."""
        self._stopping.set()
        if self._watch.is_alive():
            self._watch.join(timeout=5)
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=self._settings.shutdown_grace_s + 15)
        except subprocess.TimeoutExpired:
            log.warning("the worker process did not stop in time; killing it")
            process.kill()
            process.wait()
        log.info("worker process stopped (exit %s)", process.returncode)
