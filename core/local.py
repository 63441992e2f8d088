"""Run the scoring service as a local subprocess, for the workbench and notebooks.

`start_local_service()` launches `python -m service serve` on a loopback port with its own data
directory, waits until `/v1/health` answers, takes the authoring key of the local namespace the service
keeps in `<data dir>/local_key.txt` (`serve --key-file`: the saved one while it works, else a new one), and
stops the process at interpreter exit. The port is kept in `<data dir>/service_port.txt`: a free one
the first time, the same one at every later start while it is free (so yesterday's address and
scripts still work), and when another program holds it a new free one, which the service says
(`LocalService.port_note`, and a warning on stderr) and keeps from then on. If this process is
killed outright (no atexit), the service notices within about a second (`--parent-pid`) and exits. The service
runs background work (training, …) in a worker child process of its own, which exits with it.

The service runs in a process session of its own, so an interrupt sent to this process's group (Ctrl-C in a
terminal, Jupyter's "interrupt kernel") stops the call in progress and leaves the service serving. One data
directory has one service: starting it again in this process returns the one running, and a service another
process runs there (`<data dir>/service.pid`) is refused, never joined by a second writer.

Detached (`detach=True`, the default in a Jupyter kernel), the service outlives the process that started it: a
kernel restart leaves it serving, a training in progress goes on, and the next `start_local_service` for the
data directory, in any process, attaches to it (the pid file says it is detached) instead of starting a second
one. Only `svc.stop()` ends it.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

import httpx

from core.client import Client
from core.client.local_vectors import EMBEDDING_CACHE, cached_embedder
from core.config import core_settings, env_name
from core.json_types import JsonObject

if TYPE_CHECKING:
    from core.embedders import Embedder
    from core.engine import Scorer

ENV_DATA_DIR = env_name("data_dir")
KEY_FILE = "local_key.txt"
PORT_FILE = "service_port.txt"
LOG_FILE = "service.log"
#: How long the service's worker lets a run in progress go on once `stop()` asks it to end (the service's own
#: default, 30 s, suits a server's process manager; a notebook's `stop()` waits 10 s before it kills).
SHUTDOWN_GRACE_S = 1.0
SHUTDOWN_GRACE_ENV = "SCORING_SHUTDOWN_GRACE_S"
PID_FILE = "service.pid"  # {"pid", "url", "owner", …}: which process serves the data directory
_KEY_RE = re.compile(r"sk_[0-9A-Za-z]+_[A-Za-z0-9_-]+")
logger = logging.getLogger(__name__)
_STARTED: dict[Path, LocalService] = {}  # this process's services by data directory


def default_data_dir() -> Path:
    return core_settings().home


def free_port() -> int:
    """A port the OS just handed out on 127.0.0.1 (released at once, so reuse is very likely safe)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_is_free(port: int) -> bool:
    """Whether a server could listen on 127.0.0.1:`port` now (as uvicorn binds: with SO_REUSEADDR, so a
    port whose last connections are only waiting to close counts as free)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def remembered_port(root: Path) -> int | None:
    """The port kept in `<root>/service_port.txt`, if it holds one."""
    try:
        text = (root / PORT_FILE).read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() and 0 < int(text) < 65536 else None


def choose_port(root: Path) -> tuple[int, str | None]:
    """The port for the service of data directory `root` and, when it is not the remembered one because
    another program holds that, a sentence that says so. The port chosen is remembered."""
    kept = remembered_port(root)
    if kept is not None and port_is_free(kept):
        return kept, None
    port = free_port()
    tmp = root / f"{PORT_FILE}.tmp"
    tmp.write_text(f"{port}\n")
    os.replace(tmp, root / PORT_FILE)
    if kept is None:
        return port, None
    return port, (
        f"Port {kept}, where this data directory's service listened before, is taken by another program: "
        f"the service listens on port {port} now (http://127.0.0.1:{port}/v1) and keeps that port from now "
        f"on (in {root / PORT_FILE})."
    )


class LocalServiceError(RuntimeError):
    """The local service did not start, or its key could not be created."""


class _Process(Protocol):
    """What a `LocalService` needs of its process: a `subprocess.Popen` it started, or `_Attached`."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    def poll(self) -> int | None: ...

    def terminate(self) -> None: ...

    def kill(self) -> None: ...

    def wait(self, timeout: float | None = None) -> int: ...


class _Attached:
    """A detached service's process, found by its pid file: not this process's child, so it is watched and
    signalled by its pid (its exit code is not this process's to read: 0 once it is gone)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None and not _pid_alive(self.pid):
            self.returncode = 0
        return self.returncode

    def terminate(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGTERM)

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while (code := self.poll()) is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"service pid {self.pid}", timeout or 0.0)
            time.sleep(0.05)
        return code


def in_kernel() -> bool:
    """Whether this process is a running Jupyter (IPython) kernel, whose restart should leave a local service
    serving: its shell has a kernel (a program that merely imported ipykernel has none)."""
    if "ipykernel" not in sys.modules or "IPython" not in sys.modules:
        return False
    shell = sys.modules["IPython"].get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


class LocalService:
    """A running local service: `.url` (ending in /v1), `.api_key`, `.namespace`, `.client()`."""

    def __init__(
        self,
        process: _Process,
        url: str,
        api_key: str,
        namespace: str,
        data_dir: Path,
        log: IO[bytes] | None,
        port_note: str | None = None,
        *,
        detached: bool = False,
    ) -> None:
        self.process = process
        self.url = url
        self.api_key = api_key
        self.namespace = namespace
        self.data_dir = data_dir
        self.port_note = port_note  # why the port is not the one it had before, when it is not
        #: True: the service outlives this process (a kernel restart); only `stop()` ends it.
        self.detached = detached
        self._log = log
        if not detached:
            atexit.register(self.stop)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def running(self) -> bool:
        """Whether the service answers now (its process alive and `/v1/health` answering)."""
        if self.process.poll() is not None:
            return False
        try:
            return httpx.get(f"{self.url}/health", timeout=2.0).status_code == 200
        except httpx.TransportError:
            return False

    @property
    def restart_hint(self) -> str:
        """How to get a working service back once this one stopped."""
        return (
            f"the local service of {self.data_dir} is not running ({self._state()}): start it again with "
            f"`svc = core.start_local_service({str(self.data_dir)!r})` and use `svc.client()`"
        )

    @property
    def log_path(self) -> Path:
        return self.data_dir / LOG_FILE

    def client(self, **kwargs: Any) -> Client:  # Any: Client's own keyword arguments, passed on
        """A `Client` for this service with its authoring key; when the service stops answering, its
        errors say how to start it again."""
        client = Client(self.url, self.api_key, **kwargs)
        client.unreachable_hint = lambda: None if self.process.poll() is None else self.restart_hint
        client.embedding_cache = self.data_dir / EMBEDDING_CACHE  # `flags()` reuses the service's vectors
        return client

    def embedder(self, name_or_id: str) -> Embedder:
        """The embedder `name_or_id`, reading first the vectors this service computed already (its cache on
        this machine), so texts it trained on or scored are not embedded again in this process; the others
        are embedded here and never written to the service's cache. Its int8 graph is the service's (in the
        graphs' cache every data directory shares), never a second build."""
        from core.embedders.blend import BlendEmbedder
        from core.embedders.registry import get_embedder_in

        base = get_embedder_in(name_or_id, self.embedders_dir)
        cache = self.data_dir / EMBEDDING_CACHE
        if isinstance(base, BlendEmbedder):  # the service caches each embedder's vectors on their own
            return BlendEmbedder([cached_embedder(p, cache) for p in base.parts])
        return cached_embedder(base, cache)

    @property
    def embedders_dir(self) -> Path:
        """Where the service reads and builds its int8 graphs: the graphs' cache every data directory shares
        (core/embedders/graphs.py), as `SCORING_EMBEDDER_DIR` set it when the service started."""
        from core.embedders.graphs import graphs_dir

        return graphs_dir()

    def scorer(self, snapshot: JsonObject | str) -> Scorer:
        """`core.engine.Scorer.from_snapshot(snapshot)` with `embedder()`: scoring the served model's texts
        here reuses the service's vectors instead of embedding each text again."""
        from core.engine import Scorer
        from core.engine.snapshot import load_snapshot

        snap = load_snapshot(snapshot)
        return Scorer.from_snapshot(snap, self.embedder(str(snap["embedder"]["id"])))

    def handle(self, name: str) -> str:
        """`<namespace>.<name>`: a model handle in the local namespace."""
        return f"{self.namespace}.{name}"

    def stop(self, timeout: float = 10.0) -> None:
        """Terminate the service (SIGTERM, then SIGKILL after `timeout` seconds). Idempotent. A run in
        progress goes back to the queue within `SHUTDOWN_GRACE_S` and starts again at the next start;
        cancel it first (`client.cancel(handle, run_id)`) to end it for good. A run computes on until its
        next step even once cancelled (an embedding batch, a search), so a stop just after a cancel can
        outlast `timeout`: the service is then killed, which the warning logged says; what it stored stays
        (the database rolls back only what was unfinished), and the cancelled run stays cancelled."""
        atexit.unregister(self.stop)
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=max(timeout, 10.0))  # a killed process ends at once
                logger.warning(
                    "the local service of %s did not stop within %g s (a run still computing its step, even "
                    "a cancelled one) and was killed; what it stored stays. Its log: %s",
                    self.data_dir,
                    timeout,
                    self.log_path,
                )
        if self._log is not None:
            with contextlib.suppress(OSError):
                self._log.close()
        if _STARTED.get(self.data_dir) is self:
            del _STARTED[self.data_dir]
        _remove_pid_file(self.data_dir, self.process.pid)

    def __enter__(self) -> LocalService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _state(self) -> str:
        code = self.process.poll()
        if code is not None:
            return f"exited with code {code}"
        return "running" if self.running else "not answering"

    def __repr__(self) -> str:
        detached = ", detached" if self.detached else ""
        where = f"{self.url!r}, namespace={self.namespace!r}, pid={self.pid}{detached}"
        return f"LocalService({where}, {self._state()})"


def start_local_service(
    data_dir: str | os.PathLike[str] | None = None,
    *,
    port: int | None = None,
    embedder: str | None = None,
    namespace: str = "local",
    startup_timeout: float = 60,
    worker: bool = True,
    detach: bool | None = None,
) -> LocalService:
    """Start `python -m service serve` on 127.0.0.1 and return it once healthy and keyed.

    `data_dir` defaults to `$SCORING_DATA_DIR` or `~/.scoring-workbench`; `port` to the one the data
    directory's service had before (`choose_port`); `embedder` is passed to the service (`"hashing"`
    for speed, default: the service's own, `SCORING_EMBEDDER` or `core.contract.DEFAULT_EMBEDDER`);
    `worker=False` serves the API alone (`--no-worker`): runs stay queued until a `python -m service worker`
    over the same data directory takes them (how a test holds a run in flight).

    Called again for a data directory whose service this process started and which still answers, it
    returns that service (so a notebook cell can run twice); a service another process runs on the directory
    is refused with `LocalServiceError`, never joined by a second one.

    `detach` (default: True in a Jupyter kernel, else False): the service outlives this process, so a kernel
    restart leaves it serving and a training in progress goes on; the next call for the data directory, from
    any process, attaches to it (same namespace; `svc.detached` is True) and `svc.stop()` ends it. Not
    detached, it stops with this process (at exit, or within a second of this process being killed).
    """
    root = Path(data_dir).expanduser() if data_dir is not None else default_data_dir()
    root.mkdir(parents=True, exist_ok=True)
    root = root.resolve()
    started = _STARTED.get(root)
    if started is not None:
        if started.running:
            if started.namespace != namespace:
                raise LocalServiceError(
                    f"the service of {root} already runs here for namespace {started.namespace!r}: "
                    f"stop it (`svc.stop()`) to start it for {namespace!r}"
                )
            return started
        started.stop()
    attached = _attach_or_refuse(root, namespace, embedder)
    if attached is not None:
        _STARTED[root] = attached
        return attached
    detach = in_kernel() if detach is None else detach
    note = None
    if not port:
        port, note = choose_port(root)
        if note:
            logger.warning(note)
    env = {**os.environ, ENV_DATA_DIR: str(root), "PYTHONUNBUFFERED": "1"}
    # A run in progress is handed back to the queue (it starts again at the next start; `Client.cancel`
    # ends it for good) soon enough that `stop()` ends the service cleanly within its timeout.
    env.setdefault(SHUTDOWN_GRACE_ENV, str(SHUTDOWN_GRACE_S))
    # --parent-pid: the service stops itself if this process dies without running atexit (SIGKILL); a
    # detached one is meant to outlive it.
    cmd = [
        sys.executable,
        "-m",
        "service",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--data-dir",
        str(root),
        *([] if detach else ["--parent-pid", str(os.getpid())]),
        "--key-file",
        str(root / KEY_FILE),
        "--key-namespace",
        namespace,
    ]
    if embedder:
        cmd += ["--embedder", embedder]
        env["SCORING_EMBEDDER"] = embedder
    if not worker:
        cmd.append("--no-worker")

    log = open(root / LOG_FILE, "ab")  # noqa: SIM115 - kept open for the child's lifetime
    # A session of its own: an interrupt of this process's group (Jupyter's, a terminal's Ctrl-C) is not its.
    process = subprocess.Popen(
        cmd,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        _write_pid_file(root, process.pid, url, namespace=namespace, embedder=embedder, detached=detach)
        _wait_healthy(process, url, startup_timeout, root / LOG_FILE)
        key = _saved_key(root)
    except BaseException:
        _terminate(process)
        log.close()
        _remove_pid_file(root, process.pid)
        raise
    service = LocalService(process, url, key, namespace, root, log, note, detached=detach)
    _STARTED[root] = service
    return service


def _write_pid_file(
    root: Path, pid: int, url: str, *, namespace: str, embedder: str | None, detached: bool
) -> None:
    held = {
        "pid": pid,
        "url": url,
        "owner": os.getpid(),
        "namespace": namespace,
        "embedder": embedder,
        "detached": detached,
    }
    tmp = root / f"{PID_FILE}.tmp"
    tmp.write_text(json.dumps(held) + "\n")
    os.replace(tmp, root / PID_FILE)


def _remove_pid_file(root: Path, pid: int) -> None:
    """Remove the pid file if it still names `pid` (a later service's file stays)."""
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        if int(json.loads((root / PID_FILE).read_text())["pid"]) == pid:
            (root / PID_FILE).unlink()


def _attach_or_refuse(root: Path, namespace: str, embedder: str | None) -> LocalService | None:
    """The detached service that answers for `root`, attached; None when none answers. Raise when another
    live process's own service answers (two writers would share its database), or a detached one serves
    another namespace or embedder than asked for."""
    try:
        held = json.loads((root / PID_FILE).read_text())
        pid, url, owner = int(held["pid"]), str(held["url"]), int(held["owner"])
    except (OSError, ValueError, KeyError, TypeError):
        return None  # none, or unreadable: nothing to refuse
    if not _pid_alive(pid):
        return None
    try:
        answers = httpx.get(f"{url}/health", timeout=2.0).status_code == 200
    except httpx.TransportError:
        answers = False
    if answers and held.get("detached") is True:
        running = (held.get("namespace"), held.get("embedder"))
        if running[0] != namespace or (embedder is not None and running[1] != embedder):
            raise LocalServiceError(
                f"the data directory {root} is served at {url} (detached, pid {pid}) for namespace "
                f"{running[0]!r} with embedder {running[1] or 'the default'!r}: attach with those, or stop "
                f"it first (`core.start_local_service({str(root)!r}, namespace={running[0]!r}).stop()`)"
            )
        return LocalService(_Attached(pid), url, _saved_key(root), namespace, root, None, detached=True)
    if answers:
        raise LocalServiceError(
            f"the data directory {root} is already served at {url} (service pid {pid}, started by process "
            f"{owner}): use it with `core.Client({url!r}, key)` (the key is in {root / KEY_FILE}), or stop "
            f"that process first; a second service would write to the same database"
        )
    return None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    # A service that exited cleanly but whose parent has not reaped it (a kernel still running, or a
    # container's first process that reaps nothing) is a zombie: signal 0 still reaches it, but it is gone,
    # and `stop()` would wait for it, kill it and warn that it was killed.
    with contextlib.suppress(OSError, IndexError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat[stat.rindex(")") + 2] != "Z"
    return True


def local_services(*data_dirs: str | os.PathLike[str]) -> list[LocalService]:
    """The detached local services serving the default data directory and `data_dirs` (ones a kernel left
    running), attached: `svc.stop()` ends one, `svc.client()` uses it. A service this process started is
    listed too; a directory nobody serves is left out."""
    found: list[LocalService] = []
    for root in dict.fromkeys(Path(d).expanduser().resolve() for d in (default_data_dir(), *data_dirs)):
        if root in _STARTED:
            found.append(_STARTED[root])
            continue
        try:
            held = json.loads((root / PID_FILE).read_text())
            pid, url, namespace = int(held["pid"]), str(held["url"]), str(held["namespace"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if held.get("detached") is not True or not _pid_alive(pid):
            continue
        with contextlib.suppress(httpx.TransportError, LocalServiceError):
            if httpx.get(f"{url}/health", timeout=2.0).status_code == 200:
                found.append(
                    LocalService(_Attached(pid), url, _saved_key(root), namespace, root, None, detached=True)
                )
    return found


def _wait_healthy(process: subprocess.Popen[bytes], url: str, timeout: float, log_path: Path) -> None:
    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=2.0) as http:
        while True:
            if process.poll() is not None:
                raise LocalServiceError(
                    f"service exited with code {process.returncode} during startup:\n{_tail(log_path)}"
                )
            try:
                if http.get(f"{url}/health").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise LocalServiceError(f"service not healthy after {timeout:g}s:\n{_tail(log_path)}")
            time.sleep(0.1)


def _saved_key(root: Path) -> str:
    """The key `serve --key-file` kept or created before it answered (saved once, reused while it works)."""
    key = (root / KEY_FILE).read_text().strip() if (root / KEY_FILE).exists() else ""
    if not _KEY_RE.fullmatch(key):
        raise LocalServiceError(f"the service answered without an API key in {root / KEY_FILE}")
    return key


def _terminate(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"
