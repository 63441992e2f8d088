"""Trait keys derived from names (docs/api.md): stable, unique within a model."""

from __future__ import annotations

import re
from collections.abc import Collection

_NON_KEY = re.compile(r"[^a-z0-9]+")
MAX_KEY = 48
MAX_TRAITS = 50  # per model, however the traits arrive (added or discovered)


def base_key(name: str) -> str:
    key = _NON_KEY.sub("_", name.lower()).strip("_")[:MAX_KEY].strip("_")
    return key or "trait"


def unique_key(name: str, taken: Collection[str]) -> str:
    key = base_key(name)
    if key not in taken:
        return key
    n = 2
    while f"{key}_{n}" in taken:
        n += 1
    return f"{key}_{n}"
