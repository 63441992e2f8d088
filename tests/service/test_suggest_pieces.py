"""A suggestion reads and encodes a model's labels in pieces of a fixed size, however many the team keeps:
only their vectors are held at once, never every label's text (docs/benchmarks/memory.md)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sqlalchemy import select

from core.embedders import HashingEmbedder
from service.domain.suggestions import LABEL_PIECE, label_vectors
from service.store.db import transaction
from service.store.schema import SampleRow
from tests.support.service import Svc, check, make_model


class Recording(HashingEmbedder):
    """A real HashingEmbedder that records how many texts each call gave it."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[int] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(len(texts))
        return super().encode(texts)


def test_labels_are_encoded_in_pieces_of_a_fixed_size(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.pieces")
    n = LABEL_PIECE + 44  # two pieces, the second short
    rows = [{"trait": "formality", "text": f"label number {i}", "quality": float(i % 2)} for i in range(n)]
    for start in range(0, n, 250):
        check(
            c.post("/v1/models/acme.pieces/samples", json={"samples": rows[start : start + 250]}, headers=h),
            201,
        )
    answer = check(c.post("/v1/models/acme.pieces/pool/suggest", json={"trait": "formality"}, headers=h), 200)
    labelled = answer["labelled"]
    assert labelled > n  # the model's own samples as well
    with transaction(svc.ctx.reads) as s:
        found = list(s.execute(select(SampleRow.id, SampleRow.text).order_by(SampleRow.id)).tuples())
        ids, texts = [i for i, _ in found], [t for _, t in found]
        feedback = ["a feedback label waiting for retraining"]
        recording = Recording()
        L = label_vectors(s, ids, feedback, recording)
    assert max(recording.calls) == LABEL_PIECE and sum(recording.calls) == len(ids) + 1
    np.testing.assert_array_equal(L, HashingEmbedder().encode([*texts, *feedback]))
