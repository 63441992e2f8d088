"""Typed request and response models, one module per resource (as `core.client.calls`)."""

from core.client.models.base import DeleteResult, Page, RunRef, _Input, _Response
from core.client.models.feedback import FeedbackLabel, FeedbackPage, FeedbackWithdrawn
from core.client.models.labels import (
    Guidelines,
    GuidelinesPage,
    GuidelinesVersion,
    MyLabel,
    MyLabelPage,
    MyLabelWithdrawn,
)
from core.client.models.model import LastOperation, Model
from core.client.models.namespaces import AuditEvent, AuditPage, KeyInfo, Member, MemberRemoved, SignedOut
from core.client.models.pool import (
    ClaimReleased,
    PoolImportReport,
    PoolLabel,
    PoolPage,
    PoolText,
    Suggestion,
    Suggestions,
)
from core.client.models.review import (
    LabelsRemoved,
    LabelsRestored,
    PersonReview,
    Reviewed,
    ReviewItem,
    ReviewPage,
)
from core.client.models.samples import Duplicate, ImportReport, RowError, Sample, SampleInput, Settled
from core.client.models.scoring import CompareResult, CompareSide, ScoreResult, TraitDelta, TraitScore
from core.client.models.traits import Trait, TraitInput, TraitPreview
from core.client.models.versions import HistoryEvent, TagDeleteResult, TagResult, Version

__all__ = [
    "AuditEvent",
    "AuditPage",
    "ClaimReleased",
    "CompareResult",
    "CompareSide",
    "DeleteResult",
    "Duplicate",
    "FeedbackLabel",
    "FeedbackPage",
    "FeedbackWithdrawn",
    "Guidelines",
    "GuidelinesPage",
    "GuidelinesVersion",
    "HistoryEvent",
    "ImportReport",
    "KeyInfo",
    "LastOperation",
    "Member",
    "MemberRemoved",
    "SignedOut",
    "Model",
    "MyLabel",
    "MyLabelPage",
    "MyLabelWithdrawn",
    "Page",
    "PoolImportReport",
    "PoolLabel",
    "PoolPage",
    "PoolText",
    "PersonReview",
    "LabelsRemoved",
    "LabelsRestored",
    "ReviewItem",
    "ReviewPage",
    "Reviewed",
    "RowError",
    "RunRef",
    "Sample",
    "SampleInput",
    "Settled",
    "ScoreResult",
    "Suggestion",
    "Suggestions",
    "TagDeleteResult",
    "TagResult",
    "Trait",
    "TraitDelta",
    "TraitInput",
    "TraitPreview",
    "TraitScore",
    "Version",
    "_Input",
    "_Response",
]
