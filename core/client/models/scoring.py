"""Scores of a text by trait, and the comparison of two texts."""

from __future__ import annotations

from pydantic import Field

from core.client.models.base import _Response
from core.json_types import JsonObject


class TraitScore(_Response):
    trait: str
    name: str | None = None
    score: float
    label: str | None = None
    positive_label: str | None = None
    negative_label: str | None = None
    # Only when the version has a decision threshold for the trait (docs/api.md, "Thresholds").
    threshold: float | None = None
    decision: bool | None = None


class ScoreResult(_Response):
    handle: str | None = None
    version_no: int | None = None
    version_tags: list[str] = Field(default_factory=list)
    scores: list[TraitScore] = Field(default_factory=list)
    explanation: JsonObject | None = None
    feedback_buffered: int | None = None
    index: int | None = None  # position in the request, for score_many

    def as_dict(self) -> dict[str, float]:
        """`{trait key: score}` in the service's order."""
        return {s.trait: s.score for s in self.scores}

    def labels(self) -> dict[str, tuple[str, str]]:
        """`{trait key: (negative_label, positive_label)}`."""
        return {s.trait: (s.negative_label or "", s.positive_label or "") for s in self.scores}

    def names(self) -> dict[str, str]:
        return {s.trait: s.name or s.trait for s in self.scores}

    def __getitem__(self, trait: str) -> float:
        for s in self.scores:
            if s.trait == trait or s.name == trait:
                return s.score
        # Named in the message: a bare KeyError('subjectvity') leaves the reader to guess the keys there are.
        known = ", ".join(repr(s.trait) for s in self.scores) or "none"
        raise KeyError(f"no trait {trait!r} in this result; its traits (key or name): {known}")


class CompareSide(_Response):
    scores: list[TraitScore] = Field(default_factory=list)


class TraitDelta(_Response):
    trait: str
    name: str | None = None
    delta: float


class CompareResult(_Response):
    handle: str | None = None
    version_no: int | None = None
    version_tags: list[str] = Field(default_factory=list)
    a: CompareSide
    b: CompareSide
    difference: list[TraitDelta] = Field(default_factory=list)

    def deltas(self) -> dict[str, float]:
        """`{trait key: score(b) - score(a)}`."""
        return {d.trait: d.delta for d in self.difference}

    def results(self) -> tuple[ScoreResult, ScoreResult]:
        """Both sides as `ScoreResult`s (for charts)."""
        common: JsonObject = {
            "handle": self.handle,
            "version_no": self.version_no,
            "version_tags": self.version_tags,
        }
        return ScoreResult(**common, scores=self.a.scores), ScoreResult(**common, scores=self.b.scores)
