"""Discovery of intrinsic trait axes from a model's pooled samples."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from core.embedders.base import Embedder
from core.engine.types import DiscoveredTrait, ProgressFn, Sample


def discover(
    samples: Iterable[Sample],
    *,
    embedder: Embedder,
    effort: str = "medium",
    existing: Iterable[Any] = (),
    progress: ProgressFn | None = None,
) -> list[DiscoveredTrait]:
    raise NotImplementedError
