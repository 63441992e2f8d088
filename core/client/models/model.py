"""A model and the state of its last run (`GET /models/{handle}`)."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from pydantic import Field

from core.client.models.base import _Response
from core.contract import DEFAULT_GOLD_THRESHOLD
from core.json_types import JsonObject


class LastOperation(_Response):
    kind: str | None = None
    status: str | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    run_id: str | None = None
    progress: Any = None  # Any: {"fraction", "phase", "message"} here; open in the spec
    error: Any = None  # Any: {"code", "message"} or null; open in the spec
    queue_position: Any = None  # Any: a queued run's place in line (1 = next); absent from older services

    @property
    def place_in_queue(self) -> int | None:
        """The run's place in line while it is queued (1 = next to start), if the service reports one."""
        value = self.queue_position
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else None

    def _progress_field(self, name: str) -> object:
        return self.progress.get(name) if isinstance(self.progress, dict) else None

    @property
    def fraction(self) -> float | None:
        """Progress in [0, 1] if the service reports one."""
        value = self.progress if isinstance(self.progress, int | float) else self._progress_field("fraction")
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            return min(1.0, max(0.0, float(value)))
        return None

    @property
    def phase(self) -> str | None:
        value = self._progress_field("phase")
        return str(value) if value is not None else None

    @property
    def progress_message(self) -> str | None:
        value = self._progress_field("message")
        return str(value) if value is not None else None

    @property
    def error_code(self) -> str | None:
        if isinstance(self.error, dict):
            return str(self.error.get("code")) if self.error.get("code") is not None else None
        return None

    @property
    def error_message(self) -> str | None:
        if isinstance(self.error, dict):
            msg = self.error.get("message")
            return str(msg) if msg is not None else None
        return str(self.error) if self.error is not None else None

    @property
    def finished(self) -> bool:
        return self.status in ("succeeded", "failed")


class Model(_Response):
    handle: str
    scoring_method: str = "balanced_cosine"
    description: str | None = ""
    state: str = "draft"
    kind: str = "scoring"
    traits: list[Any] = Field(default_factory=list)  # Any: open in the spec
    current_version_id: int | None = None
    version_no: int | None = None
    version_tags: list[str] = Field(default_factory=list)
    zero_data_retention: bool = False
    last_operation: LastOperation | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    max_depth: int | None = None
    additional_terms: str | None = None
    upstream_sources: list[JsonObject] | None = None
    readme_markdown: str | None = None
    auto_prune: JsonObject | None = None
    sample_count: int | None = None
    buffered_feedback: int | None = None
    embedder: str | None = None
    #: People who label each pool text (1 from an older service: every text once).
    votes_wanted: int = 1
    #: False: the owner paused automatic retraining (buffered feedback waits); True from an older service.
    auto_retrain: bool = True
    #: True: annotators see colleagues' votes and comments on a text only once they voted on it.
    blind_labelling: bool = False
    #: The share of each pool suggestion from texts a colleague labelled, unless `suggest` names one.
    overlap: float = 0.0
    #: True: an annotator's labels train only once a reviewer (or `accept_rule`) accepts them.
    review: bool = False
    #: Besides a reviewer, what accepts a pending label: "none" or "agreement".
    accept_rule: str = "none"
    #: False: a person's suggestions are their assignment alone; True: the shared pool follows it.
    shared_pool: bool = True
    #: The share of each person's suggestions that are gold items (0: none; absent from older services).
    gold_rate: float = 0.0
    #: A person whose accuracy on gold is surely under it is flagged to the owner.
    gold_threshold: float = DEFAULT_GOLD_THRESHOLD

    def __repr__(self) -> str:
        # One short line: a notebook shows the model after most cells, and pydantic's repr of every field
        # (traits with their anchors, the readme, …) runs to 1,500 characters. `model_dump()` has them all.
        traits = [str(t.get("key", "?")) if isinstance(t, dict) else str(t) for t in self.traits]
        parts = [repr(self.handle), self.state]
        if self.version_no is not None:
            parts.append(f"v{self.version_no}")
        parts.append(f"traits: {', '.join(traits)}" if traits else "no traits")
        if self.sample_count is not None:
            parts.append(f"{self.sample_count} samples")
        if self.embedder:
            parts.append(self.embedder)
        op = self.last_operation
        if op is not None and op.kind:
            parts.append(f"last {op.kind} {op.status or '?'}")
        return f"Model({', '.join(parts)})"

    __str__ = __repr__

    @property
    def namespace(self) -> str:
        return self.handle.split(".", 1)[0]

    @property
    def name(self) -> str:
        return self.handle.split(".", 1)[1] if "." in self.handle else self.handle

    @property
    def is_busy(self) -> bool:
        return self.state == "busy"
