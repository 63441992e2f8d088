"""The model a key last picked in the sidebar, kept by the workbench's process.

Opening the root URL again (a reload, a new tab) starts a new browser session with nothing picked and no
`?model=`: without this it opened the first demo model, taking the user away from the model they were on.
Only a pick in the sidebar is kept (not a default, not a `?model=` link), per service, namespace and key, so
colleagues with their own keys on one workbench do not move each other's sidebar.
"""

from __future__ import annotations

import hashlib
import threading

from app.shell.backend import Backend

_LOCK = threading.Lock()
_PICKED: dict[tuple[str, str, str], str] = {}


def _whose(backend: Backend) -> tuple[str, str, str]:
    # The key's digest, not the key: nothing secret is kept beyond the client that holds it already.
    key = hashlib.sha256((backend.client.api_key or "").encode()).hexdigest()
    return backend.url, backend.namespace, key


def remember(backend: Backend, handle: str | None) -> None:
    """The sidebar's pick of this key; None (the picker cleared) forgets it."""
    with _LOCK:
        if handle:
            _PICKED[_whose(backend)] = handle
        else:
            _PICKED.pop(_whose(backend), None)


def last_picked(backend: Backend) -> str | None:
    """The model this key last picked in the sidebar, if any."""
    with _LOCK:
        return _PICKED.get(_whose(backend))
