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


#: Characters a token of the window stands for at most, in the cut before tokenizing. English text averages
#: ~4.5 (the datasets' longer texts with MiniLM's WordPiece: median 4.5, 99.9th percentile 6.1 characters a
#: token over their tokens); only runs of spaces or long unknown words reach 16.
CUT_CHARS_PER_TOKEN = 16


def cut_for_window(text: str, window: int) -> str:
    """`text`'s first `window` x CUT_CHARS_PER_TOKEN characters, for a model that reads `window` tokens.

    A tokenizer builds lists as long as its input before it truncates, and a long text's windows multiply a
    batch's rows: cut first, so what an encode holds is bounded by the window, not by what a user stored.
    A text at most that long is untouched; a longer one gives the vector it always had unless its first
    `window` tokens span more characters (whitespace runs, long unknown words)."""
    limit = window * CUT_CHARS_PER_TOKEN
    return text if len(text) <= limit else text[:limit]


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
