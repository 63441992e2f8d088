"""`serve`, `worker` and `migrate`: the processes that serve the API and execute runs, and the schema they
need."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import logging
import math
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from service.commands.keys import new_key
from service.commands.options import EMBEDDER_HELP, add_storage_options, settings_of
from service.config.settings import Settings
from service.process.parent import parent_alive

if TYPE_CHECKING:
    import uvicorn
    from sqlalchemy.orm import Session, sessionmaker

# results and start the next batch; with Python's default 5 ms switch interval they queue behind request
# threads; a 1 ms interval lets them back sooner (docs/benchmarks/speed.md, "Load on the score endpoint").
SWITCH_INTERVAL_S = 0.001


def _watch_parent(server: uvicorn.Server, pid: int, original_ppid: int, interval: float = 1.0) -> None:
    """Stop `server` the way SIGTERM does (`should_exit`) once process `pid` is gone."""

    def loop() -> None:
        while not server.should_exit:
            if not parent_alive(pid, original_ppid):
                logging.getLogger("service").info("parent process %d is gone; shutting down", pid)
                server.should_exit = True
                return
            time.sleep(interval)

    threading.Thread(target=loop, name="parent-watch", daemon=True).start()


def _child_worker(args: argparse.Namespace) -> bool:
    """Runs go to a worker child (service/runs/child.py) unless --no-worker or --in-process-worker."""
    return not args.no_worker and not args.in_process_worker


@contextlib.contextmanager
def loading() -> Iterator[None]:
    """A process's start-up without the cyclic garbage collector. Loading the service makes long-lived
    objects only (modules, classes, routes, schemas): the collector finds nothing to free among them, yet
    walked them again and again as they were made, about a fifth of a start's CPU. So it collects nothing
    while the process loads, then freezes what was loaded out of every later collection."""
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def serve_settings(args: argparse.Namespace) -> Settings:
    """`serve`'s settings. With a worker child the API is still one process with its own worker, so it is
    checked as one (on SQLite any cursor secret will do); only then is its in-process worker turned off."""
    extra = {"embedder": args.embedder, "scoring_threads": args.scoring_threads}
    settings = settings_of(args, run_worker=False if args.no_worker else None, **extra)
    return settings.model_copy(update={"run_worker": False}) if _child_worker(args) else settings


def serve(args: argparse.Namespace) -> int:
    original_ppid = os.getppid()  # before startup: the parent may die while models load
    child_worker = _child_worker(args)
    # Before the app's imports (seconds of CPU): a setting that refuses to start says so at once.
    settings = serve_settings(args)

    with loading():
        import uvicorn

        from service.process.api import create_app
        from service.runs.child import WorkerChild

        app = create_app(settings)
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    if args.key_file:
        _ensure_key_file(app.state.ctx.sessions, Path(args.key_file), args.key_namespace)
    child = WorkerChild(settings) if child_worker else None
    # Only the named proxies may say who the client is (uvicorn trusts 127.0.0.1 unless told otherwise).
    proxies = settings.trusted_proxies.strip()
    config = uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        access_log=False,
        proxy_headers=bool(proxies),
        forwarded_allow_ips=proxies or [],
        # Requests in flight get the shutdown grace, as runs do; past it uvicorn cancels them.
        timeout_graceful_shutdown=math.ceil(settings.shutdown_grace_s),
    )

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            # The worker child starts beside the API's own start-up, not after it: after a host's crash a
            # re-queued run waits for a worker, and two start-ups in a row doubled that wait (recovery
            # benchmark).
            if child is not None:
                child.start()
            await super().startup(sockets=sockets)
            if self.started:
                print(f"Scoring service ready on http://{args.host}:{args.port}/v1", flush=True)
                if args.parent_pid is not None:  # watched from here on: a stop always runs the full shutdown
                    _watch_parent(self, args.parent_pid, original_ppid)
            elif child is not None:
                await asyncio.to_thread(child.stop)

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            # Here, not after run(): on SIGTERM uvicorn re-raises the signal as run() ends, which ends us at
            # once.
            app.state.stopping.set()  # scoring in flight ends at its next piece (service/process/api.py)
            app.state.share.stop()  # pieces waiting for a turn answer 503 now (domain/fair_share.py)
            app.state.shutdown.begin(settings.shutdown_grace_s)  # the rest before the grace ends
            # The worker child's grace runs beside the requests', not after them: the process is gone
            # within the grace (and its exit), not twice it.
            stopping_child = asyncio.ensure_future(asyncio.to_thread(child.stop)) if child else None
            try:
                await super().shutdown(sockets=sockets)
            finally:
                if stopping_child is not None:
                    await stopping_child

    server = Server(config)
    # uvicorn re-raises a SIGTERM once its shutdown is over (runs handed back, the worker child stopped); with
    # this handler in place beneath its own, that re-raise ends nothing and a stop asked for exits 0, as the
    # worker's does, so a launcher (core/local.py, a process manager) sees a clean end, not a signal's.
    signal.signal(signal.SIGTERM, lambda _sig, _frame: None)
    server.run()
    code = 0 if server.started else 1
    _exit_past_cut_off_work(code)
    return code


def _exit_past_cut_off_work(code: int) -> None:
    """End the process now if a thread still works for a request the stop cut off (answered 503 at the
    grace's end: service/http/shutdown.py; a piece of scoring or of a suggestion, a listing's query): the
    interpreter would wait for it before exiting, past the grace, for no one. Runs were handed back and the
    worker child stopped before uvicorn's shutdown ended, so nothing is lost."""
    left = [t for t in threading.enumerate() if not t.daemon and t is not threading.current_thread()]
    if not left:
        return
    logging.getLogger("service").info(
        "exiting with %d thread(s) still working for requests the stop cut off", len(left)
    )
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _ensure_key_file(sessions: sessionmaker[Session], path: Path, namespace: str) -> None:
    """Keep the authoring key of `namespace` in `path` while the service accepts it, else create one and write
    it there (readable by its user only). The local launcher (core/local.py) reads the file once the service
    answers: creating the key here spares it a `keys create` process."""
    from service.store.api_keys import authenticate
    from service.store.db import transaction

    saved = path.read_text().strip() if path.exists() else ""
    with transaction(sessions) as s:
        principal = authenticate(s, saved) if saved else None
        if principal and principal.scope == "authoring" and principal.owns(namespace):
            return
        key = new_key(s, [namespace], "authoring")
        tmp = path.with_suffix(".tmp")
        tmp.unlink(missing_ok=True)
        with os.fdopen(
            os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w"
        ) as fh:  # never readable
            fh.write(key + "\n")
        os.replace(tmp, path)


def worker(args: argparse.Namespace) -> int:
    if args.workers < 1:
        print("error: --workers must be at least 1", file=sys.stderr)
        return 2
    if args.nice:
        os.nice(args.nice)  # run after everything else on the machine (the embedded service's child)
    # Before the worker's imports (seconds of CPU): a setting that refuses to start says so at once.
    settings = settings_of(args, embedder=args.embedder)

    with loading():
        from service.process.worker import run_worker_process

    code = run_worker_process(settings, args.workers, args.parent_pid)
    # Stopped, runs handed back, logs written: skip the interpreter's teardown, whose final garbage collection
    # over every loaded library took seconds here, eating into a process manager's stop timeout (honcho: 5 s).
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def migrate_command(args: argparse.Namespace) -> int:
    from sqlalchemy import text

    from service.store.db import make_engine, migrate

    engine = make_engine(settings_of(args).database_url)
    try:
        migrate(engine)
        with engine.connect() as conn:
            revision = conn.execute(text("SELECT version_num FROM alembic_version")).scalar_one()
    finally:
        engine.dispose()
    print(f"Database schema at revision {revision}")
    return 0


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("serve", help="run the API (and a worker child process, unless --no-worker)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--embedder", help=EMBEDDER_HELP)
    p.add_argument("--log-level", default="info")
    p.add_argument(
        "--no-worker", action="store_true", help="API only: background runs go to `worker` processes"
    )
    p.add_argument(
        "--in-process-worker",
        action="store_true",
        help="run background runs on a thread of this process, not in a worker child process (they then "
        "compete with score requests for the interpreter lock)",
    )
    p.add_argument(
        "--parent-pid", type=int, metavar="PID", help="shut down cleanly once process PID has exited"
    )
    p.add_argument(
        "--scoring-threads",
        type=int,
        metavar="N",
        help="score requests' texts encoded at once (default $SCORING_SCORING_THREADS, or one per core; "
        "with several API processes on one machine, cores / processes)",
    )
    p.add_argument(
        "--key-file",
        metavar="PATH",
        help="keep an authoring key of --key-namespace in PATH: the saved one while it works, else a new one",
    )
    p.add_argument("--key-namespace", default="local", metavar="NS", help="the --key-file key's namespace")
    add_storage_options(p)
    p.set_defaults(func=serve)

    p = sub.add_parser("worker", help="execute background runs from the queue (no HTTP)")
    p.add_argument("--workers", type=int, default=1, help="runs executed at once (threads; default 1)")
    p.add_argument("--embedder", help=EMBEDDER_HELP)
    p.add_argument(
        "--parent-pid", type=int, metavar="PID", help="stop gracefully once process PID has exited"
    )
    p.add_argument("--nice", type=int, default=0, metavar="N", help="lower the CPU priority by N (os.nice)")
    add_storage_options(p)
    p.set_defaults(func=worker)

    p = sub.add_parser("migrate", help="apply the database migrations and exit (serve and worker do it too)")
    add_storage_options(p)
    p.set_defaults(func=migrate_command)
