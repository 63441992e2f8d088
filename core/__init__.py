"""Scoring Workbench core: the engine (`core.engine`), embedders, the client and local service.

Top-level names load lazily so `import core.engine` (the service, the worker) does not pay
for the HTTP client, and `import core` stays free of numpy and scikit-learn.
"""

from __future__ import annotations

import importlib
from importlib import metadata
from typing import TYPE_CHECKING, Any

try:
    __version__ = metadata.version("scoring-workbench")
except metadata.PackageNotFoundError:  # a plain checkout, not installed: the version pyproject.toml states
    __version__ = "0.1.0"

if TYPE_CHECKING:
    from core.client import (
        ApiError,
        AuthenticationError,
        BadRequestError,
        Client,
        ConflictError,
        NotFoundError,
        PermissionDeniedError,
        RateLimitError,
        RunCancelledError,
        RunFailedError,
        ScoringClientError,
        ServerError,
        TransportError,
        ValidationError,
        WaitTimeoutError,
        errors,
    )
    from core.local import LocalService, start_local_service

_LAZY = {
    "Client": "core.client",
    "errors": "core.client",
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

__all__ = [
    "__version__",
    "ApiError",
    "AuthenticationError",
    "BadRequestError",
    "Client",
    "ConflictError",
    "LocalService",
    "NotFoundError",
    "PermissionDeniedError",
    "RateLimitError",
    "RunCancelledError",
    "RunFailedError",
    "ScoringClientError",
    "ServerError",
    "TransportError",
    "ValidationError",
    "WaitTimeoutError",
    "errors",
    "start_local_service",
]


def __getattr__(name: str) -> Any:  # Any: a lazy attribute is whatever its module defines
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
