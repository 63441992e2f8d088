"""The embedded local service, started before the first browser visit asks for it.

A first visit used to wait for the whole start (the service's process and worker, the migration, the key):
most of its seconds on two busy cores. `python -m app.launch` (what `make run` starts) calls `prestart` in
Streamlit's own process before Streamlit serves, so the start overlaps Streamlit's and the minutes before
the user opens the page; `take` then hands that service to `app.shell.backend`, which starts one itself when
none was prestarted with the same settings (`streamlit run app/main.py`, tests, another data directory).
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where the service starts: the workbench's first paint does not wait for it
    from core.local import LocalService

_lock = threading.Lock()
_pending: dict[tuple[str | None, str], Future[LocalService]] = {}


def prestart(data_dir: str | None, embedder: str) -> Future[LocalService]:
    """Start `core.local.start_local_service(data_dir, embedder=embedder)` in a background thread; its
    future `LocalService`."""
    future: Future[LocalService] = Future()

    def run() -> None:
        from core.local import start_local_service

        try:
            future.set_result(start_local_service(data_dir, embedder=embedder))
        except BaseException as exc:  # noqa: BLE001 - handed to whoever takes it
            future.set_exception(exc)

    with _lock:
        _pending[(data_dir, embedder)] = future
    threading.Thread(target=run, name="local-service-start", daemon=True).start()
    return future


def take(data_dir: str | None, embedder: str) -> LocalService | None:
    """The service prestarted with these settings (waiting for its start to finish), once; else None.
    A failed prestart gives None too: the caller starts one itself, and its error is the one shown."""
    with _lock:
        future = _pending.pop((data_dir, embedder), None)
    if future is None:
        return None
    try:
        service = future.result()
    except Exception:  # noqa: BLE001 - started again by the caller
        return None
    return service if service.running else None
