"""The Perspective-compatible surface (docs/perspective.md)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from core.client.calls.base import ClientBase, _clean
from core.client.results import (
    AnalyzeCommentResult,
    DiscoveryDocument,
    SuggestCommentScoreResult,
)
from core.client.retry import Safety
from core.json_types import JsonObject


class PerspectiveCalls(ClientBase):
    def _perspective(self, method: str, body: JsonObject, safety: Safety) -> Any:  # Any: the answer's JSON
        url = self.base_url.removesuffix("/v1") + f"/v1alpha1/comments:{method}"
        return self.request("POST", url, json=body, safety=safety).json()

    def perspective_discovery(self) -> DiscoveryDocument:
        """The Discovery document Google's clients build `commentanalyzer v1alpha1` from (no key needed)."""
        url = self.base_url.removesuffix("/v1") + "/$discovery/rest"
        document = self.request("GET", url, params={"version": "v1alpha1"}).json()
        return DiscoveryDocument.model_validate(document)

    def analyze_comment(
        self,
        text: str,
        attributes: Iterable[str] | Mapping[str, Mapping[str, object]],
        *,
        model: str | None = None,
        span_annotations: bool = False,
        languages: list[str] | None = None,
        do_not_store: bool = False,
        client_token: str | None = None,
    ) -> AnalyzeCommentResult:
        """Perspective's AnalyzeComment (`result.attribute_scores[name].summary_score.value`).

        `attributes`: trait names (`TOXICITY`, `TOXICITY@3`, `TOXICITY@prod`) or Perspective's
        `requestedAttributes` map; `model`: a handle (else the server's configured one)."""
        requested = (
            {k: dict(v) for k, v in attributes.items()}
            if isinstance(attributes, Mapping)
            else {a: {} for a in attributes}
        )
        body = _clean(
            {
                "comment": {"text": text},
                "requestedAttributes": requested,
                "model": model,
                "spanAnnotations": span_annotations or None,
                "languages": languages,
                "doNotStore": do_not_store or None,
                "clientToken": client_token,
            }
        )
        return AnalyzeCommentResult.model_validate(self._perspective("analyze", body, Safety.IDEMPOTENT))

    def suggest_comment_score(
        self,
        text: str,
        scores: Mapping[str, float],
        *,
        model: str | None = None,
        client_token: str | None = None,
    ) -> SuggestCommentScoreResult:
        """Perspective's SuggestCommentScore: `{attribute: value}` becomes feedback labels (an authoring key
        that owns the model's namespace; refused under zero-data-retention)."""
        body = _clean(
            {
                "comment": {"text": text},
                "attributeScores": {k: {"summaryScore": {"value": v}} for k, v in scores.items()},
                "model": model,
                "clientToken": client_token,
            }
        )
        answer = self._perspective("suggestscore", body, Safety.ONCE)  # feedback: repeating counts twice
        return SuggestCommentScoreResult.model_validate(answer)
