"""A model's versions, their tags and its history of activations."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from core.client.models.base import _Response
from core.json_types import JsonObject


class Version(_Response):
    version_id: int
    version_no: int
    triggered_by: str = "train"
    param_hash: str = ""
    sample_count: int = 0
    created_at: datetime | None = None
    run_id: str | None = None
    metrics: JsonObject = Field(default_factory=dict)
    tags: list[str] = Field(default_factory=list)
    snapshot: JsonObject | None = None  # absent for scoring-scope keys

    @property
    def label(self) -> str:
        return f"v{self.version_no}"

    @property
    def trait_metrics(self) -> dict[str, JsonObject]:
        """Per-trait metrics (`metrics["traits"]`), `{}` when the service reports none."""
        traits = self.metrics.get("traits")
        return traits if isinstance(traits, dict) else {}


class TagResult(_Response):
    handle: str
    tag: str
    version_no: int | None = None


class HistoryEvent(_Response):
    """A version became active (`activated`), or a tag was set on one (`tagged`) or removed (`untagged`), or
    the model was reopened for editing while `version_no` kept serving (`reopened`)."""

    at: datetime
    kind: str
    version_no: int
    tag: str | None = None
    previous_version_no: int | None = None


class TagDeleteResult(_Response):
    handle: str
    tag: str
    deleted: bool
