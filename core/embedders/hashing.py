"""Deterministic hashing embedder: no model files, same vectors in every process.

Word n-grams and character n-grams (inside word boundaries) are hashed with
MurmurHash3 (scikit-learn's `HashingVectorizer`, seeded and process-independent,
unlike Python's `hash`) into `dim` buckets. Counts get sublinear tf
(sign * log1p(|count|)), each block is L2-normalised, blocks are mixed by weight and
the result is L2-normalised again. Meant for fast tests and as a model-free fallback.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp

_VERSION = "v1"
_DEFAULT_WORD_NGRAMS = (1, 2)
_DEFAULT_CHAR_NGRAMS = (3, 5)
_DEFAULT_CHAR_WEIGHT = 0.5


def hashing_id(
    dim: int,
    word_ngrams: tuple[int, int] = _DEFAULT_WORD_NGRAMS,
    char_ngrams: tuple[int, int] = _DEFAULT_CHAR_NGRAMS,
    char_weight: float = _DEFAULT_CHAR_WEIGHT,
) -> str:
    """The id naming every parameter that changes the vectors (defaults keep it short)."""
    base = f"hashing-{_VERSION}-{dim}"
    if (word_ngrams, char_ngrams, char_weight) == (
        _DEFAULT_WORD_NGRAMS,
        _DEFAULT_CHAR_NGRAMS,
        _DEFAULT_CHAR_WEIGHT,
    ):
        return base
    return f"{base}-w{word_ngrams[0]}{word_ngrams[1]}-c{char_ngrams[0]}{char_ngrams[1]}-cw{char_weight:g}"


def _sublinear_unit_rows(m: sp.csr_matrix) -> sp.csr_matrix:
    import scipy.sparse as sp

    m = m.tocsr().astype(np.float64)
    m.data = np.sign(m.data) * np.log1p(np.abs(m.data))
    norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0  # empty rows stay zero instead of becoming NaN
    return sp.csr_matrix(sp.diags(1.0 / norms) @ m)


class HashingEmbedder:
    """Word 1-2-grams + char 3-5-grams hashed into `dim` buckets, L2-normalised float32."""

    def __init__(
        self,
        dim: int = 512,
        word_ngrams: tuple[int, int] = _DEFAULT_WORD_NGRAMS,
        char_ngrams: tuple[int, int] = _DEFAULT_CHAR_NGRAMS,
        char_weight: float = _DEFAULT_CHAR_WEIGHT,
    ) -> None:
        if dim < 8:
            raise ValueError(f"dim must be at least 8, got {dim}")
        if not 0.0 <= char_weight <= 1.0:
            raise ValueError(f"char_weight must be in [0, 1], got {char_weight}")
        self.dim = int(dim)
        self.word_ngrams: tuple[int, int] = (int(word_ngrams[0]), int(word_ngrams[1]))
        self.char_ngrams: tuple[int, int] = (int(char_ngrams[0]), int(char_ngrams[1]))
        self.char_weight = float(char_weight)
        self.id = hashing_id(self.dim, self.word_ngrams, self.char_ngrams, self.char_weight)
        # Imported here so `import core.embedders` stays cheap (scikit-learn takes ~0.7 s to import).
        from sklearn.feature_extraction.text import HashingVectorizer

        # alternate_sign spreads collisions around zero instead of piling them up.
        common = dict(n_features=self.dim, alternate_sign=True, norm=None, lowercase=True, dtype=np.float64)
        self._words = HashingVectorizer(
            analyzer="word", ngram_range=self.word_ngrams, token_pattern=r"(?u)\b\w+\b", **common
        )
        self._chars = HashingVectorizer(analyzer="char_wb", ngram_range=self.char_ngrams, **common)

    def __repr__(self) -> str:
        return f"HashingEmbedder(id={self.id!r})"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        words = _sublinear_unit_rows(self._words.transform(texts))
        chars = _sublinear_unit_rows(self._chars.transform(texts))
        mixed = ((1.0 - self.char_weight) * words + self.char_weight * chars).toarray()
        norms = np.linalg.norm(mixed, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        unit: np.ndarray = (mixed / norms).astype(np.float32)
        return unit
