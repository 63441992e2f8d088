"""The command line: serve, worker, migrate, keys (create, role, revoke), people, backfill, backup…"""

from __future__ import annotations

import argparse
import asyncio
import logging
import math
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from core.contract import AUTO_EMBEDDER, DEFAULT_ROLE, ROLES
from service.config.settings import Settings
from service.process.parent import parent_alive

if TYPE_CHECKING:
    from datetime import datetime

    import uvicorn
    from sqlalchemy.orm import Session, sessionmaker


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data-dir", help="data directory (default $SCORING_DATA_DIR or ./.data)")
    p.add_argument("--database-url", help="SQLAlchemy URL (default: SQLite file in the data dir)")
    p.add_argument(
        "--queue-url", help="redis://… for a Redis queue (default $SCORING_QUEUE_URL, else the database)"
    )


def _settings(args: argparse.Namespace, **extra: object) -> Settings:
    try:
        return Settings.from_env(
            data_dir=args.data_dir, database_url=args.database_url, queue_url=args.queue_url, **extra
        )
    except ValueError as exc:  # a setting that must not start a process: say why, no traceback
        raise SystemExit(f"error: {exc}") from None


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


EMBEDDER_HELP = f"embedder name or id of new models (default $SCORING_EMBEDDER or {AUTO_EMBEDDER})"

# The scoring batcher threads release the GIL inside onnxruntime and need it back at once to hand over
# results and start the next batch; with Python's default 5 ms switch interval they queue behind request
# threads; a 1 ms interval lets them back sooner (docs/benchmarks/speed.md, "Load on the score endpoint").
SWITCH_INTERVAL_S = 0.001


def _child_worker(args: argparse.Namespace) -> bool:
    """Runs go to a worker child (service/runs/child.py) unless --no-worker or --in-process-worker."""
    return not args.no_worker and not args.in_process_worker


def serve_settings(args: argparse.Namespace) -> Settings:
    """`serve`'s settings. With a worker child the API is still one process with its own worker, so it is
    checked as one (on SQLite any cursor secret will do); only then is its in-process worker turned off."""
    extra = {"embedder": args.embedder, "scoring_threads": args.scoring_threads}
    settings = _settings(args, run_worker=False if args.no_worker else None, **extra)
    return settings.model_copy(update={"run_worker": False}) if _child_worker(args) else settings


def serve(args: argparse.Namespace) -> int:
    import uvicorn

    from service.process.api import create_app
    from service.runs.child import WorkerChild

    sys.setswitchinterval(SWITCH_INTERVAL_S)
    original_ppid = os.getppid()  # before startup: the parent may die while models load

    child_worker = _child_worker(args)
    settings = serve_settings(args)
    app = create_app(settings)
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
        key = _new_key(s, [namespace], "authoring")
        tmp = path.with_suffix(".tmp")
        tmp.unlink(missing_ok=True)
        with os.fdopen(
            os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w"
        ) as fh:  # never readable
            fh.write(key + "\n")
        os.replace(tmp, path)


def worker(args: argparse.Namespace) -> int:
    from service.process.worker import run_worker_process

    if args.workers < 1:
        print("error: --workers must be at least 1", file=sys.stderr)
        return 2
    if args.nice:
        os.nice(args.nice)  # run after everything else on the machine (the embedded service's child)
    settings = _settings(args, embedder=args.embedder)
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

    engine = make_engine(_settings(args).database_url)
    try:
        migrate(engine)
        with engine.connect() as conn:
            revision = conn.execute(text("SELECT version_num FROM alembic_version")).scalar_one()
    finally:
        engine.dispose()
    print(f"Database schema at revision {revision}")
    return 0


def _new_key(
    session: Session,
    namespaces: list[str],
    scope: str,
    name: str | None = None,
    role: str = DEFAULT_ROLE,
    expires_at: datetime | None = None,
) -> str:
    """A new key, recorded in each namespace's audit log as the operator's `key_created` (and an authoring
    key's `role_changed` to its role)."""
    from core.contract import annotator_of
    from service.store.api_keys import create_key
    from service.store.audit import OPERATOR, record

    key = create_key(session, namespaces, scope, name, role, expires_at)
    prefix = key.split("_")[1]
    created = {
        "key": prefix,
        "name": annotator_of(name, prefix),
        "scope": scope,
        "expires_at": expires_at.isoformat() if expires_at else None,
    }
    for ns in sorted(set(namespaces)):
        record(session, OPERATOR, "key_created", ns, None, created)
    if scope == "authoring":  # a role given is a role change, in each namespace's audit log
        detail = {"key": prefix, "name": annotator_of(name, prefix), "from": None, "to": role}
        for ns in sorted(set(namespaces)):
            record(session, OPERATOR, "role_changed", ns, None, detail)
    return key


def keys_create(args: argparse.Namespace) -> int:
    from datetime import timedelta

    from sqlalchemy.exc import IntegrityError

    from service.store.db import make_engine, make_session_factory, migrate, transaction
    from service.store.schema import utcnow

    settings = _settings(args)
    engine = make_engine(settings.database_url)
    migrate(engine)
    try:
        with transaction(make_session_factory(engine)) as s:
            expires_at = None
            if args.expires_in_days is not None:
                if args.expires_in_days <= 0:
                    raise ValueError("--expires-in-days must be a positive number of days")
                expires_at = utcnow() + timedelta(days=args.expires_in_days)
            key = _new_key(s, args.namespace, args.scope, args.name, args.role, expires_at)
    except IntegrityError:  # the same name created by another process at the same moment
        print(f"error: the name {args.name!r} is taken by another key: choose another", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        engine.dispose()
    named = f" named {args.name}" if args.name else ""
    role = f" ({args.role})" if args.scope == "authoring" else ""
    until = f", valid until {expires_at:%Y-%m-%d %H:%M} UTC" if expires_at else ""
    print(
        f"Created {args.scope} key{named}{role} for namespace(s) {', '.join(args.namespace)}{until}. "
        "It is shown only once:"
    )
    print(key)
    return 0


def keys_role(args: argparse.Namespace) -> int:
    from core.contract import annotator_of
    from service.store.api_keys import set_role
    from service.store.audit import OPERATOR, record
    from service.store.db import make_engine, make_session_factory, migrate, transaction

    engine = make_engine(_settings(args).database_url)
    migrate(engine)
    try:
        with transaction(make_session_factory(engine)) as s:
            row, old = set_role(s, args.key, args.role)
            name = annotator_of(row.name, row.prefix)
            if old != args.role:
                detail = {"key": row.prefix, "name": name, "from": old, "to": args.role}
                for ns in sorted(row.namespaces):
                    record(s, OPERATOR, "role_changed", ns, None, detail)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        engine.dispose()
    if old == args.role:
        print(f"Key {name} is {old} already: nothing changed.")
    else:
        print(
            f"Key {name} is now {args.role} (was {old}) in namespace(s) {', '.join(sorted(row.namespaces))}."
        )
    return 0


def keys_revoke(args: argparse.Namespace) -> int:
    """`keys revoke NAME`: the key stops working at once (401 on its next request), recorded in its
    namespaces' audit logs; its votes keep its name."""
    from core.contract import annotator_of
    from service.store.api_keys import revoke_key
    from service.store.audit import OPERATOR, record
    from service.store.db import make_engine, make_session_factory, migrate, transaction

    engine = make_engine(_settings(args).database_url)
    migrate(engine)
    try:
        with transaction(make_session_factory(engine)) as s:
            row = revoke_key(s, args.key)
            name = annotator_of(row.name, row.prefix)
            for ns in sorted(row.namespaces):
                record(s, OPERATOR, "key_revoked", ns, None, {"key": row.prefix, "name": name})
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        engine.dispose()
    print(f"Key {name} is revoked: it no longer works in namespace(s) {', '.join(sorted(row.namespaces))}.")
    return 0


def people_command(args: argparse.Namespace) -> int:
    """`people add | remove | list`: who is in a namespace, with what role (the operator's way to add a
    team's first owner; owners then manage people from the workbench or the API)."""
    from service.store.audit import OPERATOR
    from service.store.db import make_engine, make_session_factory, migrate, transaction
    from service.store.people import (
        NotAMember,
        list_members,
        member_namespaces,
        remove_member,
        set_member,
    )

    engine = make_engine(_settings(args).database_url)
    migrate(engine)
    member: str = getattr(args, "email", None) or getattr(args, "subject", None) or ""
    try:
        with transaction(make_session_factory(engine)) as s:
            if args.people_command == "add":
                row, old = set_member(s, args.namespace, member, args.role, OPERATOR)
                change = "added" if old is None else f"was {old}"
                print(f"{row.member} is {row.role} in namespace {row.namespace} ({change})")
            elif args.people_command == "remove":
                role = remove_member(s, args.namespace, member, OPERATOR)
                print(f"{member} ({role}) removed from namespace {args.namespace}; their labels stay")
            else:
                namespaces = [args.namespace] if args.namespace else member_namespaces(s)
                for ns in namespaces:
                    for m in list_members(s, ns):
                        print("\t".join([m.namespace, m.member, m.role, m.display_name or ""]).rstrip("\t"))
    except (ValueError, NotAMember) as exc:  # a bad role or name, or the last owner (LastOwner)
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        engine.dispose()
    return 0


def audit_command(args: argparse.Namespace) -> int:
    """`audit [--namespace NS] [--limit N]`: the newest events, newest first, one JSON object a line; by
    default the service-wide stream (refused sign-in attempts, sign-ins of people in no namespace), which
    no API route serves."""
    import json

    from service.store.audit import SERVICE, latest
    from service.store.db import make_engine, make_session_factory, migrate, transaction

    engine = make_engine(_settings(args).database_url)
    migrate(engine)
    try:
        with transaction(make_session_factory(engine)) as s:
            for e in latest(s, args.namespace or SERVICE, args.limit):
                event = {"id": e.id, "at": e.at.isoformat(), "namespace": e.namespace, "kind": e.kind}
                print(json.dumps({**event, "actor": e.actor, "handle": e.handle, "detail": e.detail}))
    finally:
        engine.dispose()
    return 0


def backfill(args: argparse.Namespace) -> int:
    from service.context import Context
    from service.process.backfill import run_backfill

    settings = _settings(args, embedder=args.embedder)
    ctx = Context.build(settings)
    try:
        report = run_backfill(ctx)
    finally:
        ctx.close()
    for line in report:
        print(line)
    return 0


def backup_command(args: argparse.Namespace) -> int:
    from pathlib import Path

    from service.process.backup import BackupError, backup

    try:
        manifest = backup(_settings(args), Path(args.path), include_cache=not args.without_cache)
    except BackupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    counts = ", ".join(f"{n} {table}" for table, n in manifest["counts"].items())
    print(
        f"Backed up ({manifest['database']}, schema {manifest['schema_revision']}) to {args.path}: {counts}"
    )
    return 0


def restore_command(args: argparse.Namespace) -> int:
    from pathlib import Path

    from service.process.backup import BackupError, restore

    try:
        manifest = restore(_settings(args), Path(args.path))
    except BackupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"Restored the backup of {manifest['created_at']} from {args.path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m service", description="Model Scoring Service")
    sub = parser.add_subparsers(dest="command", required=True)

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
    _common(p)
    p.set_defaults(func=serve)

    p = sub.add_parser("worker", help="execute background runs from the queue (no HTTP)")
    p.add_argument("--workers", type=int, default=1, help="runs executed at once (threads; default 1)")
    p.add_argument("--embedder", help=EMBEDDER_HELP)
    p.add_argument(
        "--parent-pid", type=int, metavar="PID", help="stop gracefully once process PID has exited"
    )
    p.add_argument("--nice", type=int, default=0, metavar="N", help="lower the CPU priority by N (os.nice)")
    _common(p)
    p.set_defaults(func=worker)

    p = sub.add_parser("migrate", help="apply the database migrations and exit (serve and worker do it too)")
    _common(p)
    p.set_defaults(func=migrate_command)

    keys = sub.add_parser("keys", help="API keys").add_subparsers(dest="keys_command", required=True)
    p = keys.add_parser("create", help="create a key and print it on the last line")
    p.add_argument("--namespace", action="append", required=True, help="namespace the key owns (repeatable)")
    p.add_argument("--scope", choices=("authoring", "scoring"), required=True)
    p.add_argument(
        "--name",
        help="the annotator name the key's labels carry (unique; default: key-<prefix>), e.g. alice",
    )
    p.add_argument(
        "--role",
        choices=ROLES,
        default=DEFAULT_ROLE,
        help="what an authoring key may do: annotator labels, reviewer also settles, owner also manages "
        f"(default: {DEFAULT_ROLE})",
    )
    p.add_argument(
        "--expires-in-days",
        type=float,
        help="the key stops working this many days from now (401 afterwards; default: never)",
    )
    _common(p)
    p.set_defaults(func=keys_create)
    p = keys.add_parser(
        "role", help="change an authoring key's role (recorded in its namespaces' audit logs)"
    )
    p.add_argument("key", help="the key's name, or its prefix (the part after sk_)")
    p.add_argument("--role", choices=ROLES, required=True)
    _common(p)
    p.set_defaults(func=keys_role)
    p = keys.add_parser("revoke", help="revoke a key: 401 from its next request (recorded in the audit log)")
    p.add_argument("key", help="the key's name, or its prefix (the part after sk_)")
    _common(p)
    p.set_defaults(func=keys_revoke)

    people = sub.add_parser("people", help="people who sign in, and their role in a namespace")
    people_sub = people.add_subparsers(dest="people_command", required=True)
    for name, what in (
        ("add", "add someone to a namespace, or change their role"),
        ("remove", "take someone out"),
    ):
        p = people_sub.add_parser(name, help=what)
        p.add_argument("--namespace", required=True)
        who = p.add_mutually_exclusive_group(required=True)
        who.add_argument("--email", help="their email at the identity provider (their annotator name)")
        who.add_argument("--subject", help="their subject (`sub`) at the identity provider, instead")
        if name == "add":
            p.add_argument(
                "--role",
                required=True,
                choices=ROLES,
                help="annotator labels, reviewer also settles, owner also manages",
            )
        _common(p)
        p.set_defaults(func=people_command)
    p = people_sub.add_parser("list", help="members and roles, tab-separated")
    p.add_argument("--namespace", help="one namespace (default: every namespace with members)")
    _common(p)
    p.set_defaults(func=people_command)

    p = sub.add_parser("audit", help="read the audit log: the service-wide stream, or a namespace's")
    p.add_argument("--namespace", help="a namespace's log (default: the service-wide stream, `*`)")
    p.add_argument("--limit", type=int, default=100, help="the newest this many events (default 100)")
    _common(p)
    p.set_defaults(func=audit_command)

    p = sub.add_parser("backfill", help="retrain every ready model with the current engine")
    p.add_argument("--embedder", help=EMBEDDER_HELP)
    _common(p)
    p.set_defaults(func=backfill)

    p = sub.add_parser(
        "backup", help="copy the database, cursor secret and embedding cache into PATH (while serving)"
    )
    p.add_argument("path", help="a new or empty directory")
    p.add_argument(
        "--without-cache",
        action="store_true",
        help="leave out the embedding cache (texts are embedded again)",
    )
    _common(p)
    p.set_defaults(func=backup_command)

    p = sub.add_parser("restore", help="restore a backup into an empty data directory (or database)")
    p.add_argument("path", help="a directory written by `backup`")
    _common(p)
    p.set_defaults(func=restore_command)

    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
