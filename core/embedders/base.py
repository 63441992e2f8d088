"""The one interface every embedder implements."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors.

    `id` is stable and recorded in every snapshot trained with the embedder, so a
    snapshot can only be scored by the embedder that produced its vectors.
    """

    id: str
    dim: int

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Return an array of shape (len(texts), dim), rows L2-normalised."""
        ...
