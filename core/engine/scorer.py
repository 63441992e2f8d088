"""Scoring from a snapshot: the same code in the service, the workbench and notebooks."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy.special import expit, logit

from core.embedders.base import Embedder
from core.engine.blend_snapshot import is_blend
from core.engine.errors import EmbedderUnavailableError, EngineError
from core.engine.explain import MAX_WORDS, WordEffect
from core.engine.explain import explain as explain_text
from core.engine.snapshot import load_snapshot
from core.engine.snapshot_file import snapshot_source
from core.engine.snapshot_format import CHUNK_WORDS
from core.engine.trait_model import raw_scores
from core.engine.types import JsonObject, TraitSpec
from core.engine.validation import validate_texts

# Any: numpy types its reductions by overloads that give Any for an array of unknown dtype.
_AGGREGATE: dict[str, Callable[[np.ndarray], Any]] = {"mean": np.mean, "max": np.max, "min": np.min}


def chunk_text(text: str, chunk_words: int = CHUNK_WORDS) -> list[str]:
    """A text of at most `chunk_words` words as is; a longer one as consecutive `chunk_words`-word chunks."""
    words = text.split()
    if len(words) <= chunk_words:
        return [text]
    return [" ".join(words[i : i + chunk_words]) for i in range(0, len(words), chunk_words)]


#: Clip of a blend's mean score before its logit: a score of exactly 0 or 1 has no finite axis position.
_TINY = 1e-12


class _Axes:
    """One embedder's trained axes (w, m_dot_w, k per trait) of a snapshot."""

    def __init__(self, snapshot: JsonObject) -> None:
        entries = snapshot["traits"]
        self.dim: int = snapshot["embedder"]["dim"]
        self.w = [np.asarray(t["w"], dtype=np.float64) for t in entries]
        self.offset = [float(t["m_dot_w"]) for t in entries]
        self.k = [float(t["k"]) for t in entries]


class Scorer:
    """Scores texts on every trait of a snapshot.

    Build with `Scorer.from_snapshot(snapshot, embedder=None)`; without an embedder the one named
    in the snapshot is looked up with `core.embedders.get_embedder`.
    """

    def __init__(self, snapshot: JsonObject, embedder: Embedder) -> None:
        self.snapshot = snapshot
        self.embedder = embedder
        self.embedder_id: str = snapshot["embedder"]["id"]
        self.param_hash: str = snapshot["param_hash"]
        self.chunk_words: int = snapshot.get("chunk_words", CHUNK_WORDS)
        entries = snapshot["traits"]
        self.traits: list[TraitSpec] = [
            TraitSpec(
                key=t["key"],
                name=t["name"],
                positive_label=t["positive_label"],
                negative_label=t["negative_label"],
                description=t["description"],
                aggregation=t["aggregation"],
            )
            for t in entries
        ]
        # A blend (core.engine.blend) with its own slope per trait scores by the mean of its embedders'
        # logits, recalibrated by that slope; one without (trained before) by the mean of their scores, whose
        # logit calibrates back to it with a slope of 1.
        self._parts = [_Axes(part) for part in snapshot["parts"]] if is_blend(snapshot) else []
        self._logit_mean = bool(self._parts) and all("k" in t for t in entries)
        one = _Axes(snapshot) if not self._parts else None
        self._w = one.w if one else []
        self._offset = one.offset if one else []
        blend_k = [float(t["k"]) for t in entries] if self._logit_mean else [1.0] * len(entries)
        self._k = one.k if one else blend_k

    @classmethod
    def from_snapshot(
        cls, snapshot: JsonObject | str | os.PathLike[str], embedder: Embedder | None = None
    ) -> Scorer:
        """`snapshot`: a dict, its JSON text, or the path of a file `Client.export_snapshot(path=…)` wrote."""
        snap = load_snapshot(snapshot_source(snapshot))
        wanted, dim = snap["embedder"]["id"], snap["embedder"]["dim"]
        if embedder is None:
            from core.embedders import get_embedder

            embedder = get_embedder(wanted)  # EmbedderUnavailableError when unknown here
        if embedder.id != wanted:
            raise EmbedderUnavailableError(
                f"the snapshot was trained with embedder {wanted!r}, but {embedder.id!r} was given"
            )
        if embedder.dim != dim:
            raise EmbedderUnavailableError(
                f"embedder {wanted!r} here has {embedder.dim} dimensions, the snapshot expects {dim}"
            )
        return cls(snap, embedder)

    @property
    def keys(self) -> list[str]:
        return [t.key for t in self.traits]

    def __repr__(self) -> str:
        keys = ", ".join(self.keys)
        return f"Scorer({len(self.traits)} traits: {keys}; embedder {self.embedder_id!r})"

    # -- building blocks shared with explanations -------------------------------------------------

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = np.asarray(self.embedder.encode(list(texts)))
        if vectors.shape != (len(texts), self.embedder.dim):
            raise EngineError(
                f"embedder {self.embedder.id!r} returned shape {vectors.shape}, "
                f"expected {(len(texts), self.embedder.dim)}"
            )
        return vectors

    def axis_vectors(self, vectors: np.ndarray) -> np.ndarray:
        """Positions (n, n_traits) of already embedded texts or chunks on each trait's axis, before
        calibration: the raw score r, -1 at the negative pole's prototype and +1 at the positive one's."""
        if self._parts:
            return self._blend_axis(vectors)
        out = np.empty((len(vectors), len(self.traits)))
        for j, (w, offset) in enumerate(zip(self._w, self._offset, strict=True)):
            out[:, j] = raw_scores(vectors, w, offset)
        return out

    def _blend_axis(self, vectors: np.ndarray) -> np.ndarray:
        """The mean of the embedders' logits (a blend before its own slope: the logit of the mean of their
        scores); each embedder reads its own columns of the vectors."""
        mean = np.zeros((len(vectors), len(self.traits)))
        start = 0
        for part in self._parts:
            own = vectors[:, start : start + part.dim]
            start += part.dim
            for j, (w, offset, k) in enumerate(zip(part.w, part.offset, part.k, strict=True)):
                z = k * raw_scores(own, w, offset)
                mean[:, j] += z if self._logit_mean else expit(z)
        mean /= len(self._parts)
        if self._logit_mean:
            return mean
        out: np.ndarray = logit(np.clip(mean, _TINY, 1.0 - _TINY))
        return out

    def calibrate(self, axis: np.ndarray) -> np.ndarray:
        """Scores (n, n_traits) from axis positions (n, n_traits): sigmoid(k * r) per trait."""
        out: np.ndarray = expit(np.asarray(self._k) * axis)
        return out

    def score_vectors(self, vectors: np.ndarray) -> np.ndarray:
        """Scores (n, n_traits) of already embedded texts or chunks."""
        return self.calibrate(self.axis_vectors(vectors))

    def aggregate(self, chunk_scores: np.ndarray) -> np.ndarray:
        """Combine the chunk scores (m, n_traits) of one text per trait by its aggregation."""
        if len(chunk_scores) == 1:
            only: np.ndarray = chunk_scores[0].copy()
            return only
        return np.array([_AGGREGATE[t.aggregation](chunk_scores[:, j]) for j, t in enumerate(self.traits)])

    # -- public -----------------------------------------------------------------------------------

    def score(self, texts: Sequence[str] | str | object, *, column: str | None = None) -> np.ndarray:
        """Scores in [0, 1], shape (len(texts), n_traits); a single string is a batch of one. A DataFrame, a
        2-D array or a mapping is a `TypeError` (`core.texts`) unless `column` names a DataFrame's column."""
        batch = validate_texts(texts, "Scorer.score", column=column)
        chunks = [chunk_text(t, self.chunk_words) for t in batch]
        flat = [c for cs in chunks for c in cs]
        per_chunk = self.score_vectors(self.embed(flat)) if flat else np.empty((0, len(self.traits)))
        out = np.empty((len(batch), len(self.traits)))
        start = 0
        for i, cs in enumerate(chunks):
            out[i] = self.aggregate(per_chunk[start : start + len(cs)])
            start += len(cs)
        return out

    def score_dicts(
        self, texts: Sequence[str] | str | object, *, column: str | None = None
    ) -> list[dict[str, float]]:
        keys = self.keys
        return [dict(zip(keys, map(float, row), strict=True)) for row in self.score(texts, column=column)]

    def explain(self, text: str, max_words: int = MAX_WORDS) -> dict[str, list[WordEffect]]:
        """Per-word Owen values; see `core.engine.explain.explain`."""
        return explain_text(self, text, max_words=max_words)
