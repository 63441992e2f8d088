"""The one interface every embedder implements."""

from __future__ import annotations

from collections.abc import Callable, Sequence
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


def encode_by_length(
    texts: Sequence[str], dim: int, batch_size: int, encode_batch: Callable[[list[str]], np.ndarray]
) -> np.ndarray:
    """Encode `texts` in batches of similar length, rows back in input order: sorting by length keeps padding
    (wasted compute) small inside each batch of a model that pads to its longest text."""
    out = np.zeros((len(texts), dim), dtype=np.float32)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    for start in range(0, len(order), batch_size):
        idx = order[start : start + batch_size]
        out[idx] = encode_batch([texts[i] for i in idx])
    return out
