"""The tables of a labelling campaign beside the votes themselves: assigned work and targets, gold items and
their answers, guidelines and who read them, unsure marks, comments, and bulk removals kept for undo. Their
base, types and helpers are `schema.py`'s; `service/store/__init__.py` imports both, so every table is on
`Base.metadata` whichever is imported first."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    JSON,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from core.contract import (
    MAX_UNDO_TOKEN_CHARS,
    GoldOrigin,
    ReviewStatus,
    TargetPeriod,
)
from core.json_types import JsonObject
from service.store.label_ids import label_id_default
from service.store.schema import Base, UTCDateTime, utcnow


class PoolAssignment(Base):
    """A pool text given to one person: first in their queue, kept from colleagues' until they vote on it."""

    __tablename__ = "pool_assignments"
    __table_args__ = (
        UniqueConstraint("pool_text_id", "annotator"),
        Index("ix_pool_assignments_model_annotator", "model_id", "annotator"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"))
    pool_text_id: Mapped[int] = mapped_column(ForeignKey("pool_texts.id", ondelete="CASCADE"), index=True)
    annotator: Mapped[str] = mapped_column(String(64))
    assigned_by: Mapped[str] = mapped_column(String(64))
    assigned_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class LabelTarget(Base):
    """A person's target on a model: `count` texts labelled per UTC day or in all (`period`)."""

    __tablename__ = "label_targets"
    __table_args__ = (UniqueConstraint("model_id", "annotator"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"))
    annotator: Mapped[str] = mapped_column(String(64))
    count: Mapped[int] = mapped_column(Integer)
    period: Mapped[TargetPeriod] = mapped_column(String(8))


class RemovedLabels(Base):
    """One person's labels an owner removed from a model in one call (service/domain/removal.py), kept as
    rows until `expires_at` so the removal can be undone; then dropped. None under zero-data-retention."""

    __tablename__ = "removed_labels"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"), index=True)
    token: Mapped[str] = mapped_column(String(MAX_UNDO_TOKEN_CHARS), unique=True)
    annotator: Mapped[str] = mapped_column(String(64))
    removed_by: Mapped[str] = mapped_column(String(64))
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    rows: Mapped[JsonObject] = mapped_column(JSON)  # {"samples": […], "feedback": […], "unsure": […]}


class UnsureMark(Base):
    """A person's "unsure" on a text of a trait (docs/api.md, "Unsure and comments"): shown to reviewers,
    never a vote. A table of its own, so no reader of samples (training, agreement, counts) can take it in."""

    __tablename__ = "unsure_marks"
    __table_args__ = (UniqueConstraint("trait_id", "content_sha256", "annotator"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"), index=True)
    trait_id: Mapped[int] = mapped_column(ForeignKey("traits.id", ondelete="CASCADE"))
    text: Mapped[str] = mapped_column(Text)  # trimmed, as a sample's
    content_sha256: Mapped[str] = mapped_column(String(64))
    annotator: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class TextComment(Base):
    """A short comment on a text of a trait, by its author, for reviewers; never training data."""

    __tablename__ = "text_comments"
    __table_args__ = (Index("ix_text_comments_model_id", "model_id", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"))
    trait_id: Mapped[int] = mapped_column(ForeignKey("traits.id", ondelete="CASCADE"))
    text: Mapped[str] = mapped_column(Text)  # trimmed, as a sample's
    content_sha256: Mapped[str] = mapped_column(String(64))
    author: Mapped[str] = mapped_column(String(64))
    body: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class GoldItem(Base):
    """A text of a trait with a known answer (docs/api.md, "Gold items"): mixed into people's suggestions to
    measure each one's accuracy; never a training text nor an evaluation item. Its text is served through a
    pool row of the same content (the label route's way in), which training and the queue leave out."""

    __tablename__ = "gold_items"
    __table_args__ = (UniqueConstraint("trait_id", "content_sha256", name="uq_gold_items_trait_content"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"), index=True)
    trait_id: Mapped[int] = mapped_column(ForeignKey("traits.id", ondelete="CASCADE"))
    text: Mapped[str] = mapped_column(Text)  # trimmed, as a sample's
    content_sha256: Mapped[str] = mapped_column(String(64))
    quality: Mapped[float] = mapped_column(Float)  # the known answer
    origin: Mapped[GoldOrigin] = mapped_column(String(16))
    added_by: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class GoldAnswer(Base):
    """A person's first answer to a gold item, compared to the known answer when given: never a vote."""

    __tablename__ = "gold_answers"
    __table_args__ = (UniqueConstraint("gold_id", "annotator", name="uq_gold_answers_gold_annotator"),)

    # A label id (service/store/label_ids.py): the label route answers an answer with it, as it answers a
    # label with the label's, so no id tells a gold text from another.
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False, default=label_id_default)
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"), index=True)
    gold_id: Mapped[int] = mapped_column(ForeignKey("gold_items.id", ondelete="CASCADE"))
    annotator: Mapped[str] = mapped_column(String(64))
    quality: Mapped[float] = mapped_column(Float)  # the answer
    correct: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # Decided by a reviewer as a label is (docs/api/review.md), so it reads decided as one's labels do;
    # `reviewed_at`: when, as a buffered label accepted after a training waits for the next one.
    review: Mapped[ReviewStatus] = mapped_column(String(16), default="accepted", server_default="accepted")
    reviewed_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    review_comment: Mapped[str | None] = mapped_column(Text, nullable=True)
    reviewed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class GuidelinesVersion(Base):
    """One saved version of a model's labelling guidelines (Markdown): who saved it, when, and what changed.
    Never changed afterwards: each save is a new row, numbered from 1 per model."""

    __tablename__ = "guidelines_versions"
    __table_args__ = (UniqueConstraint("model_id", "version_no"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"), index=True)
    version_no: Mapped[int] = mapped_column(Integer)
    markdown: Mapped[str] = mapped_column(Text)
    note: Mapped[str] = mapped_column(Text, default="")
    author: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class GuidelinesRead(Base):
    """The newest version of a model's guidelines a person said they read (the Label page's notice)."""

    __tablename__ = "guidelines_reads"
    __table_args__ = (UniqueConstraint("model_id", "reader"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"), index=True)
    reader: Mapped[str] = mapped_column(String(64))
    version_no: Mapped[int] = mapped_column(Integer)
    read_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class LabelCorrection(Base):
    """A reviewer's correction of a label's quality (docs/api/review.md, "Corrections"): the label row takes
    the corrected quality (what training and the export read); this row keeps what it said before, who
    corrected it and when. Keyed by the label's id, which a label keeps for life (a buffered label folded
    into the samples too), so no training has to carry it along."""

    __tablename__ = "label_corrections"
    __table_args__ = (Index("ix_label_corrections_model_label", "model_id", "label_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"))
    label_id: Mapped[int] = mapped_column(Integer)
    before: Mapped[float] = mapped_column(Float)
    after: Mapped[float] = mapped_column(Float)
    corrected_by: Mapped[str] = mapped_column(String(64))
    comment: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
