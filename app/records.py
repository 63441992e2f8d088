"""Turn the client's return values into plain dicts, whatever their class.

The pages read fields by name; the client may hand back pydantic models, dataclasses or dicts, and
reading them through one function keeps the pages independent of that choice.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any


def as_dict(obj: Any) -> dict[str, Any]:
    """A plain (JSON-like) dict view of a client record; `{}` for None."""
    if obj is None:
        return {}
    if isinstance(obj, Mapping):
        return dict(obj)
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json")
    if hasattr(obj, "as_dict"):
        return dict(obj.as_dict())
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    return {k: v for k, v in vars(obj).items() if not k.startswith("_")}


def field(obj: Any, name: str, default: Any = None) -> Any:
    """One field of a record (dict key or attribute)."""
    if obj is None:
        return default
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)
