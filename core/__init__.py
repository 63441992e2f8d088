"""Scoring Workbench core: the engine (`core.engine`), embedders, the client and local service.

Start here: `svc = core.start_local_service()`, `client = svc.client()` (or `core.Client(url, key)`), then
`help(core.Client)` for every call. Errors: `core.ApiError` and its kinds (`NotFoundError`, `ConflictError`,
`ValidationError`, …), `RunFailedError`, `WaitTimeoutError`, all `ScoringClientError`s (`help(core.errors)`).
Offline scoring from a snapshot: `core.engine.Scorer`; a file read as the workbench reads it:
`core.tables.read_file(path)`. Guide: docs/client.md.

Top-level names and the public modules (`core.tables`, `core.engine`, `core.charts`, …) load on first use, so
`import core.engine` (the service, the worker) does not pay for the HTTP client, and `import core` stays free
of numpy and scikit-learn.
"""

from __future__ import annotations

import importlib
import sys
import types
from importlib import metadata
from typing import TYPE_CHECKING, Any

try:
    __version__ = metadata.version("scoring-workbench")
except metadata.PackageNotFoundError:  # a plain checkout, not installed: the version pyproject.toml states
    __version__ = "0.1.0"

if TYPE_CHECKING:
    from core.client import ApiError as ApiError
    from core.client import AuthenticationError as AuthenticationError
    from core.client import BadRequestError as BadRequestError
    from core.client import Client as Client
    from core.client import ConflictError as ConflictError
    from core.client import NotFoundError as NotFoundError
    from core.client import PermissionDeniedError as PermissionDeniedError
    from core.client import RateLimitError as RateLimitError
    from core.client import RunCancelledError as RunCancelledError
    from core.client import RunFailedError as RunFailedError
    from core.client import ScoringClientError as ScoringClientError
    from core.client import ServerError as ServerError
    from core.client import TransportError as TransportError
    from core.client import ValidationError as ValidationError
    from core.client import WaitTimeoutError as WaitTimeoutError
    from core.client import errors as errors
    from core.local import LocalService as LocalService
    from core.local import start_local_service as start_local_service

_LAZY = {
    "Client": "core.client",
    "ApiError": "core.client",
    "AuthenticationError": "core.client",
    "BadRequestError": "core.client",
    "ConflictError": "core.client",
    "NotFoundError": "core.client",
    "PermissionDeniedError": "core.client",
    "RateLimitError": "core.client",
    "RunCancelledError": "core.client",
    "RunFailedError": "core.client",
    "ScoringClientError": "core.client",
    "ServerError": "core.client",
    "TransportError": "core.client",
    "ValidationError": "core.client",
    "WaitTimeoutError": "core.client",
    "LocalService": "core.local",
    "start_local_service": "core.local",
}

# What `help(core)` documents in full: where a notebook starts. Every other name stays importable from here
# (`core.Client`, `from core import NotFoundError`); the docstring above points to `help(core.Client)` and
# `help(core.errors)`, each a page of its own (in full here, with every exception's inherited methods, 75 kB).
__all__ = ["__version__", "LocalService", "start_local_service"]


def _submodules() -> set[str]:
    """The package's public modules (`core.tables`, `core.engine`, …), each imported on first use, so a
    notebook's `import core` then `core.tables.read_file(path)` works without importing them all up front."""
    import pkgutil  # here: `import core` stays as quick as it was

    return {m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")}


class _Core(types.ModuleType):
    """`core` itself. `core.errors` is the client's exceptions (`core.client.errors`), as `help(core)` says,
    although a module `core/errors.py` (the engine's) exists: importing that one (the engine does) would
    otherwise rebind `core.errors` to it, and `core.errors.NotFoundError` would fail after any scoring."""

    @property
    def errors(self) -> types.ModuleType:
        return importlib.import_module("core.client.errors")

    @errors.setter
    def errors(self, value: types.ModuleType) -> None:
        """The import system binds each submodule on its package; this name stays the client's."""


sys.modules[__name__].__class__ = _Core


def __getattr__(name: str) -> Any:  # Any: a lazy attribute is whatever its module defines
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
    elif name in _submodules():
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module 'core' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | _submodules())
