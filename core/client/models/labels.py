"""One's own labels on a model, and the model's versioned labelling guidelines."""

from __future__ import annotations

from datetime import datetime

from core.client.models.base import Page, _Response
from core.json_types import JsonObject


class MyLabel(_Response):
    """One of the caller's labels: `kind` `sample` (a vote) or `feedback` (buffered for the next version).
    `trained`: trained into a version, so no longer changed or withdrawn."""

    kind: str
    id: int
    trait: str
    text: str
    quality: float
    point: int | None = None  # the point of its trait's scale (None: a pole trait, or from an older service)
    created_at: datetime
    review: str = "accepted"
    adjudicated: bool = False
    trained: bool = False
    metadata: JsonObject | None = None


class MyLabelPage(Page[MyLabel]):
    handle: str
    total: int = 0  # the caller's labels that match the filters, on every page


class MyLabelWithdrawn(_Response):
    handle: str
    kind: str
    id: int
    deleted: bool = True


class Guidelines(_Response):
    """A model's current guidelines (`version_no` 0: none yet), and the caller's last read of them."""

    handle: str
    version_no: int = 0
    markdown: str = ""
    note: str = ""
    author: str | None = None
    created_at: datetime | None = None
    read_version_no: int = 0
    changed_since_read: bool = False


class GuidelinesVersion(_Response):
    """One saved version: who, when, what changed."""

    version_no: int
    markdown: str
    note: str = ""
    author: str
    created_at: datetime
    lines_added: int = 0
    lines_removed: int = 0


class GuidelinesPage(Page[GuidelinesVersion]):
    handle: str
