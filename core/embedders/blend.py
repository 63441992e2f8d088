"""Both embedders at once (`blend`): a model trained on e5-small-qint8 and on mpnet-base, scored by the mean
of the two models' scores (docs/embedders-blend.md).

The blend's vector of a text is its two embedders' vectors side by side (384 + 768 values, each half
L2-normalised as its embedder gives it), so the engine's one `Embedder` interface carries both to training and
to a `Scorer`, which splits them again (core.engine.blend). Each half comes from its own embedder, so where
embedders cache their vectors (the service) a text already embedded by one embedder is read, not embedded
again.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.embedders.base import Embedder
from core.embedders.e5_quantized import E5_QINT8_ID
from core.embedders.mpnet_quantized import MPNET_QINT8_ID

#: The blend's embedders, cheapest first: the order of the halves of its vectors and of its snapshot's parts.
BLEND_PARTS = (E5_QINT8_ID, MPNET_QINT8_ID)
BLEND_ID = "blend:" + "+".join(BLEND_PARTS)


def parts_of(embedder_id: str) -> tuple[str, ...] | None:
    """The embedders' ids a blend id names, None for any other id."""
    if not embedder_id.startswith("blend:"):
        return None
    parts = tuple(embedder_id.removeprefix("blend:").split("+"))
    return parts if len(parts) > 1 and all(parts) else None


class BlendEmbedder:
    """The embedders' vectors of each text side by side; `parts` in the order of `BLEND_PARTS`."""

    def __init__(self, parts: Sequence[Embedder]) -> None:
        self.parts = list(parts)
        self.id = "blend:" + "+".join(p.id for p in self.parts)
        self.dim = sum(p.dim for p in self.parts)
        self.dims = [p.dim for p in self.parts]
        self.model_sha256 = None

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.hstack([np.asarray(p.encode(texts), dtype=np.float32) for p in self.parts])
