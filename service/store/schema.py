"""Database schema (SQLAlchemy 2.0 typed ORM). Portable between SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TypedDict

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    case,
    false,
    func,
    literal,
    literal_column,
    true,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.sql.elements import ColumnElement, SQLCoreOperations

from core.contract import (
    DEFAULT_GOLD_THRESHOLD,
    DEFAULT_ROLE,
    DEFAULT_VOTES_WANTED,
    MAX_GENERATOR_MODEL_CHARS,
    MAX_SOURCE_ID_CHARS,
    NEUTRAL_QUALITY,
    NEUTRAL_TOLERANCE,
    AcceptRule,
    Aggregation,
    AuditKind,
    ModelState,
    Provenance,
    ReviewStatus,
    RunStatus,
    TraitKind,
    VersionTrigger,
)
from core.json_types import JsonObject
from service.store.label_ids import label_id_default

#: The largest id or version number a row can hold: 32-bit INTEGER columns on PostgreSQL, which refuses a
#: larger value even in a comparison (a 500), so a request naming a larger one finds nothing.
MAX_INT = 2**31 - 1


#: How much of a text's SHA-256 (hex) the duplicate checks' indexes hold: 64 bits, so two texts of a trait
#: share a key about once in 10^7 million-sample traits (the full hash then tells them apart). The whole hash
#: made those index entries four times as large: at 100,000 samples an import's batch spent three times as
#: long in SQLite.
CONTENT_KEY_CHARS = 16


def key_of(digest: str) -> str:
    """A content hash's key, as `content_key` reads it from a column."""
    return digest[:CONTENT_KEY_CHARS]


def content_key(column: SQLCoreOperations[str]) -> ColumnElement[str]:
    """The indexed prefix of a content hash column. Its bounds are written into the SQL, not bound: SQLite and
    PostgreSQL use an expression index only for the very expression it was built on."""
    return func.substr(column, literal_column("1"), literal_column(str(CONTENT_KEY_CHARS)))


def pole_sql(quality: SQLCoreOperations[float]) -> ColumnElement[str]:
    """`core.contract.pole_of` in SQL, for counting a table's rows per pole in the database."""
    above, below = literal(NEUTRAL_QUALITY + NEUTRAL_TOLERANCE), literal(NEUTRAL_QUALITY - NEUTRAL_TOLERANCE)
    return case((quality > above, "positive"), (quality < below, "negative"), else_="neutral")


def utcnow() -> datetime:
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on every backend (SQLite drops the zone)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is not None and value.tzinfo is None:
            raise ValueError("naive datetime")
        return value.astimezone(UTC) if value is not None else None

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    pass


class ApiKey(Base):
    __tablename__ = "api_keys"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    prefix: Mapped[str] = mapped_column(String(32), unique=True)
    salt: Mapped[str] = mapped_column(String(64))
    key_hash: Mapped[str] = mapped_column(String(64))
    scope: Mapped[str] = mapped_column(String(16))
    namespaces: Mapped[list[str]] = mapped_column(JSON)
    # The annotator name the key's labels carry (core.contract.ANNOTATOR_RE); null: `key-<prefix>`.
    name: Mapped[str | None] = mapped_column(String(64), nullable=True, unique=True)
    # What the key may do in its namespaces (core.contract.ROLE_ACTIONS); keys from before roles: owner.
    role: Mapped[str] = mapped_column(String(16), default=DEFAULT_ROLE, server_default=DEFAULT_ROLE)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # When the key stops working (`keys create --expires-in`); null: never.
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class Person(Base):
    """Someone who signed in through the team's identity provider (docs/api.md, "People"): known by the
    provider's (issuer, subject); the email is their annotator name. Kept when they leave a namespace, as the
    votes they gave are."""

    __tablename__ = "people"
    __table_args__ = (
        UniqueConstraint("issuer", "subject", name="uq_people_issuer_subject"),
        UniqueConstraint("name", name="uq_people_name"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    issuer: Mapped[str] = mapped_column(String(255))
    subject: Mapped[str] = mapped_column(String(255))
    # Their verified email at their last sign-in (None: none verified): shown to people, never matched.
    email: Mapped[str | None] = mapped_column(String(255), nullable=True, index=True)
    display_name: Mapped[str | None] = mapped_column(String(255), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # The annotator name their labels carry: their verified email at their first sign-in, then fixed.
    name: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # ID tokens issued (`iat`) at or before it are refused: set by sign-out and by an idle timeout.
    signed_out_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # Their last accepted request (written at most once a minute), for the idle timeout.
    last_seen_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # The issue time (`iat`) of the newest token recorded as a sign-in: a newer one is a new sign-in.
    signed_in_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class Membership(Base):
    """A person's role in a namespace, named by their email (or their subject at the provider), so an owner
    can add someone before their first sign-in; bound to their account (`person_id`) at that sign-in."""

    __tablename__ = "memberships"
    __table_args__ = (
        UniqueConstraint("namespace", "member", name="uq_memberships_namespace_member"),
        # One membership per account in a namespace (migration 0031); unbound ones (null) are not counted.
        Index("uq_memberships_namespace_person", "namespace", "person_id", unique=True),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    namespace: Mapped[str] = mapped_column(String(64), index=True)
    member: Mapped[str] = mapped_column(String(255), index=True)  # an email, lowercased, or a subject
    role: Mapped[str] = mapped_column(String(16))
    # The account it belongs to, bound once at the first sign-in that matches `member` (a verified email,
    # or the subject); null until then. Only this account has the role, whatever email it shows later.
    person_id: Mapped[int | None] = mapped_column(ForeignKey("people.id"), nullable=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class Model(Base):
    __tablename__ = "models"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    handle: Mapped[str] = mapped_column(String(140), unique=True)
    namespace: Mapped[str] = mapped_column(String(64), index=True)
    description: Mapped[str] = mapped_column(Text, default="")
    scoring_method: Mapped[str] = mapped_column(String(32), default="balanced_cosine")
    kind: Mapped[str] = mapped_column(String(32), default="scoring")
    state: Mapped[ModelState] = mapped_column(String(16), default="draft", index=True)
    zero_data_retention: Mapped[bool] = mapped_column(Boolean, default=False)
    max_depth: Mapped[int] = mapped_column(Integer, default=1)
    additional_terms: Mapped[str | None] = mapped_column(Text, nullable=True)
    upstream_sources: Mapped[list[JsonObject] | None] = mapped_column(JSON, nullable=True)
    readme_markdown: Mapped[str | None] = mapped_column(Text, nullable=True)
    auto_prune: Mapped[JsonObject | None] = mapped_column(JSON, nullable=True)
    # The embedder id chosen at create time; NULL (models created before the field) = the service default.
    embedder: Mapped[str | None] = mapped_column(String(100), nullable=True)
    # Zero-data-retention: the annotators' agreement (numbers only) computed just before votes were purged.
    kept_agreement: Mapped[JsonObject | None] = mapped_column(JSON, nullable=True)
    # No FK: versions reference models, and a cycle would complicate deletes and migrations.
    current_version_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    last_run_id: Mapped[str | None] = mapped_column(String(40), nullable=True)
    # How many evaluation items the model holds, kept as they are added and removed: an import's answer
    # reports it, and counting the rows would cost in proportion to the set.
    eval_item_count: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # How many people label each pool text (claims, docs/api.md "Claims and votes wanted").
    votes_wanted: Mapped[int] = mapped_column(
        Integer, default=DEFAULT_VOTES_WANTED, server_default=str(DEFAULT_VOTES_WANTED)
    )
    # False: a full feedback buffer waits (the owner paused the labelling campaign's automatic versions).
    auto_retrain: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())
    # True: the owner chose `auto_retrain`; false: the default applies (on alone, off for a team:
    # service/store/teams.py).
    auto_retrain_set: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # Annotators' labels wait for a reviewer (docs/api.md "Review"): null, on for a team's model
    # (service/store/teams.py); true or false: the owner's choice.
    review: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    # Besides a reviewer, what accepts a pending label (core.contract.ACCEPT_RULES).
    accept_rule: Mapped[AcceptRule] = mapped_column(String(16), default="none", server_default="none")
    # True: an annotator sees colleagues' votes and comments on a text only once they voted on it.
    blind_labelling: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # The share of each pool suggestion taken from texts a colleague labelled, when a request gives none.
    overlap: Mapped[float] = mapped_column(Float, default=0.0, server_default="0")
    # False: a person's queue is their assignment alone; true: the shared pool follows it.
    shared_pool: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())
    # The share of each person's suggestions that are gold items (service/domain/gold_queue.py); 0: none.
    gold_rate: Mapped[float] = mapped_column(Float, default=0.0, server_default="0")
    # A person whose accuracy on gold is surely under it is flagged to the owner (service/domain/gold.py).
    gold_threshold: Mapped[float] = mapped_column(
        Float, default=DEFAULT_GOLD_THRESHOLD, server_default=str(DEFAULT_GOLD_THRESHOLD)
    )
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)


class Trait(Base):
    __tablename__ = "traits"
    __table_args__ = (UniqueConstraint("model_id", "key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"), index=True)
    key: Mapped[str] = mapped_column(String(64))
    name: Mapped[str] = mapped_column(String(100))
    positive_label: Mapped[str] = mapped_column(String(100))
    negative_label: Mapped[str] = mapped_column(String(100))
    description: Mapped[str] = mapped_column(Text, default="")
    aggregation: Mapped[Aggregation] = mapped_column(String(8), default="mean")
    kind: Mapped[TraitKind] = mapped_column(String(16), default="extrinsic")
    explained_variance: Mapped[float] = mapped_column(Float, default=0.0)  # from discovery
    # How people label it: null, by its two poles; else {"points": N, "names": [N words], "unsure": bool}
    # (service/domain/scales.py).
    scale: Mapped[JsonObject | None] = mapped_column(JSON, nullable=True)
    # The trait's samples, those on the positive pole and the neutral ones (quality 0.5, on neither pole),
    # kept as samples come and go (count_samples in service/store/samples.py): counting a million rows on
    # every read of a model or its traits took seconds. The negative pole holds the rest.
    sample_count: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    positive_samples: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    neutral_samples: Mapped[int] = mapped_column(Integer, default=0, server_default="0")

    @property
    def negative_samples(self) -> int:
        return self.sample_count - self.positive_samples - self.neutral_samples


class LabelIdCounter(Base):
    """SQLite's label ids (service/store/label_ids.py): one row, the last id given. PostgreSQL draws them
    from the sequence `label_id_seq` and leaves this table empty."""

    __tablename__ = "label_ids"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    last: Mapped[int] = mapped_column(Integer)


class SampleRow(Base):
    __tablename__ = "samples"
    __table_args__ = (
        # A trait's samples in id order: the Samples page filtered by trait, whatever the trait's share.
        Index("ix_samples_model_trait_id", "model_id", "trait_id", "id"),
        # One person's labels on a model: their quota (service/store/quotas.py).
        Index("ix_samples_model_annotator", "model_id", "annotator"),
    )

    # A label id (service/store/label_ids.py): a buffered label folded in keeps the id it was given.
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False, default=label_id_default)
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"), index=True)
    trait_id: Mapped[int] = mapped_column(ForeignKey("traits.id", ondelete="CASCADE"))
    text: Mapped[str] = mapped_column(Text)
    quality: Mapped[float] = mapped_column(Float)
    # The point of its trait's scale the quality lies on (core.contract.scale_point); null: a pole trait's
    # label, or a quality between points.
    point: Mapped[int | None] = mapped_column(Integer, nullable=True)
    provenance: Mapped[Provenance] = mapped_column(String(16), default="authored")
    source_url: Mapped[str | None] = mapped_column(Text, nullable=True)
    content_sha256: Mapped[str] = mapped_column(String(64))
    # Who gave the label (a key's annotator name or an external rater); null: machine-made or from before.
    annotator: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # A reviewer's vote that settles the text (decides its pole; the other votes stay).
    adjudicated: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # The id of its row in the file it came from (an export joins back to that file); null: none given.
    source_id: Mapped[str | None] = mapped_column(String(MAX_SOURCE_ID_CHARS), nullable=True)
    # Where a synthesized sample's text came from: "pool" (a real text) or "template"; null: not synthesized.
    source: Mapped[str | None] = mapped_column(String(16), nullable=True)
    # The model of the generator that wrote a `source` "generator" sample; null for every other sample.
    generator_model: Mapped[str | None] = mapped_column(String(MAX_GENERATOR_MODEL_CHARS), nullable=True)
    # Where the label stands (core.contract.REVIEW_STATUSES): only `accepted` trains; who decided and why.
    review: Mapped[ReviewStatus] = mapped_column(String(16), default="accepted", server_default="accepted")
    reviewed_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    review_comment: Mapped[str | None] = mapped_column(Text, nullable=True)
    # Extra columns of the file the label came from, kept as context beside the text (docs/api.md "Text
    # metadata"); null: none kept.
    meta: Mapped[JsonObject | None] = mapped_column("metadata", JSON(none_as_null=True), nullable=True)
    # The version whose training took the label in (counted it among the votes it trained on); null: none
    # yet (pending review, rejected, a gold text's, a vote its annotator changed before any training), or
    # cleared by a correction or a decision since. Read through service/domain/trained.py.
    trained_in: Mapped[int | None] = mapped_column(Integer, nullable=True)


# A text's rows of a trait: an import's duplicate check.
Index(
    "ix_samples_model_trait_key",
    SampleRow.model_id,
    SampleRow.trait_id,
    content_key(SampleRow.content_sha256),
)


class FeedbackLabel(Base):
    """Labels from score feedback waiting for automatic retraining."""

    __tablename__ = "feedback_labels"

    # A label id (service/store/label_ids.py), kept when a training folds the label into the samples.
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False, default=label_id_default)
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"), index=True)
    trait_key: Mapped[str] = mapped_column(String(64))
    text: Mapped[str] = mapped_column(Text)
    quality: Mapped[float] = mapped_column(Float)
    annotator: Mapped[str | None] = mapped_column(String(64), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # Where the label stands (core.contract.REVIEW_STATUSES): only `accepted` trains; who decided and why.
    review: Mapped[ReviewStatus] = mapped_column(String(16), default="accepted", server_default="accepted")
    reviewed_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    review_comment: Mapped[str | None] = mapped_column(Text, nullable=True)


class Version(Base):
    __tablename__ = "versions"
    __table_args__ = (UniqueConstraint("model_id", "version_no"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"), index=True)
    version_no: Mapped[int] = mapped_column(Integer)
    triggered_by: Mapped[VersionTrigger] = mapped_column(String(32))
    param_hash: Mapped[str] = mapped_column(String(128))
    sample_count: Mapped[int] = mapped_column(Integer)
    run_id: Mapped[str | None] = mapped_column(String(40), nullable=True)
    metrics: Mapped[JsonObject] = mapped_column(JSON)
    # Large: loaded only when asked for (version reads with an authoring key, scoring).
    snapshot: Mapped[JsonObject] = mapped_column(JSON, deferred=True)
    # Per-trait decision thresholds chosen on the evaluation set: {key: {"threshold", "target", ...}}.
    thresholds: Mapped[JsonObject | None] = mapped_column(JSON, nullable=True)
    # The texts the version trained on, as content keys (service/store/heldout.py): its evaluations leave
    # them out. NULL: trained before the record was kept, or under zero-data-retention (no trace of a text).
    trained_keys: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True, deferred=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class Tag(Base):
    __tablename__ = "tags"
    __table_args__ = (UniqueConstraint("model_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(64))
    version_id: Mapped[int] = mapped_column(ForeignKey("versions.id", ondelete="CASCADE"), index=True)


class RunProgress(TypedDict):
    """How far a run is (the API's `last_operation.progress`)."""

    fraction: float  # in [0, 1]
    phase: str
    message: str


class RunError(TypedDict):
    """Why a run failed for good (the API's `last_operation.error`)."""

    code: str
    message: str


class Run(Base):
    """A background run: the source of truth for status, progress, attempts and errors."""

    __tablename__ = "runs"
    __table_args__ = (Index("ix_runs_model_status", "model_id", "status"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(
        String(16)
    )  # train | retrain | backfill | discover | synthesize | evaluate | reopen
    status: Mapped[RunStatus] = mapped_column(String(16), default="queued", index=True)
    options: Mapped[JsonObject] = mapped_column(JSON)  # effort, triggered_by, synth_type, ...
    idempotency_key: Mapped[str | None] = mapped_column(String(64), nullable=True, index=True)
    progress: Mapped[RunProgress] = mapped_column(JSON)
    error: Mapped[RunError | None] = mapped_column(JSON, nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    # The state the model returns to if the run fails for good.
    return_state: Mapped[ModelState] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    heartbeat_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class RunShard(Base):
    """One shard of a training's embedding (service/runs/shards.py): the distinct texts of the model's samples
    with ids in [first_sample_id, last_sample_id], embedded by whichever worker claims it."""

    __tablename__ = "run_shards"
    __table_args__ = (UniqueConstraint("run_id", "shard_no"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    shard_no: Mapped[int] = mapped_column(Integer)
    first_sample_id: Mapped[int] = mapped_column(Integer)
    last_sample_id: Mapped[int] = mapped_column(Integer)
    texts: Mapped[int] = mapped_column(Integer)  # distinct texts in the shard
    status: Mapped[str] = mapped_column(String(16), default="queued")  # queued | running | done
    attempts: Mapped[int] = mapped_column(Integer, default=0)  # a holder's writes are conditional on it
    done_texts: Mapped[int] = mapped_column(Integer, default=0)  # progress of the holder
    heartbeat_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # The embedder every worker embeds it with: the one the training chose (NULL: the model's embedder).
    embedder: Mapped[str | None] = mapped_column(String(100), nullable=True)
    # float32, texts x dim, in the shard's text order; NULL for a shard the run's own worker embedded (it
    # keeps those vectors in memory) until the run ends.
    vectors: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True, deferred=True)


class PoolText(Base):
    """A model's unlabelled texts: candidates for labelling (the Label page's suggestions)."""

    __tablename__ = "pool_texts"
    __table_args__ = (UniqueConstraint("model_id", "content_sha256"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"), index=True)
    text: Mapped[str] = mapped_column(Text)
    content_sha256: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # Extra columns of the imported file, kept beside the text (docs/api.md "Text metadata"); null: none.
    meta: Mapped[JsonObject | None] = mapped_column("metadata", JSON(none_as_null=True), nullable=True)


class PoolClaim(Base):
    """A pool text handed to one person for a trait, theirs until they label or release it or the lease
    ends (service/domain/claims.py). One row per (text, trait, person): a person never holds a text twice;
    how many people may hold it at once (votes wanted) is decided under the model row's lock."""

    __tablename__ = "pool_claims"
    __table_args__ = (
        UniqueConstraint("pool_text_id", "trait_key", "annotator"),
        Index("ix_pool_claims_model_trait", "model_id", "trait_key", "expires_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"))
    # A text deleted from the pool takes its claims with it.
    pool_text_id: Mapped[int] = mapped_column(ForeignKey("pool_texts.id", ondelete="CASCADE"), index=True)
    trait_key: Mapped[str] = mapped_column(String(64))
    annotator: Mapped[str] = mapped_column(String(64))
    claimed_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    # Votes plus claims the text could take when this claim was granted (votes wanted, or one more for an
    # overlap pick): past it (a colleague's label meanwhile) the claim is not renewed and its label refused.
    cap: Mapped[int] = mapped_column(Integer, server_default="1")


class RateBucket(Base):
    """A token bucket of service/store/rate_limits.py: `tokens` left at `at` (Unix seconds)."""

    __tablename__ = "rate_buckets"

    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    tokens: Mapped[float] = mapped_column(Float)
    at: Mapped[float] = mapped_column(Float)


class VersionEvent(Base):
    """When a version became active and when a tag pointed where (GET /models/{h}/history).

    Version numbers, not ids: the history outlives versions that auto-prune deletes."""

    __tablename__ = "version_events"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(16))  # activated | tagged | untagged | reopened
    version_no: Mapped[int] = mapped_column(Integer)
    tag: Mapped[str | None] = mapped_column(String(64), nullable=True)
    previous_version_no: Mapped[int | None] = mapped_column(Integer, nullable=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class EvalItem(Base):
    """A labelled evaluation item: held out, never read by training (docs/api.md, Evaluation sets)."""

    __tablename__ = "eval_items"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"), index=True)
    trait_key: Mapped[str] = mapped_column(String(64))
    text: Mapped[str] = mapped_column(Text)
    quality: Mapped[float] = mapped_column(Float)
    content_sha256: Mapped[str] = mapped_column(String(64))
    annotator: Mapped[str | None] = mapped_column(String(64), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


Index(
    "ix_eval_items_model_trait_key",
    EvalItem.model_id,
    EvalItem.trait_key,
    content_key(EvalItem.content_sha256),
)
# A text's items of any trait: is a pool or sample text in the evaluation set (service/store/heldout.py).
Index("ix_eval_items_model_key", EvalItem.model_id, content_key(EvalItem.content_sha256))


class Evaluation(Base):
    """The result of one evaluation run: a version's metrics on the evaluation set at that time."""

    __tablename__ = "evaluations"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"), index=True)
    version_no: Mapped[int] = mapped_column(Integer)
    run_id: Mapped[str] = mapped_column(String(40))
    item_count: Mapped[int] = mapped_column(Integer)
    metrics: Mapped[JsonObject] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class AuditEvent(Base):
    """Who settled a text, edited or deleted a vote, withdrew a buffered label, deleted a model or pool
    texts, made or revoked a key or changed a role, and when (service/store/audit.py). No text:
    zero-data-retention leaves no byte of a text, and the log outlives purges. Append-only: database
    triggers refuse UPDATE and DELETE (migration 0021)."""

    __tablename__ = "audit_events"
    # A namespace's events, newest first: the log's one read.
    __table_args__ = (Index("ix_audit_events_namespace_id", "namespace", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    namespace: Mapped[str] = mapped_column(String(63))
    kind: Mapped[AuditKind] = mapped_column(String(32))
    # The caller's annotator name (a key's name or `key-<prefix>`), or `operator` for the command line.
    actor: Mapped[str] = mapped_column(String(64))
    # The model it concerns (its handle: models are archived, never deleted); null for a role change.
    handle: Mapped[str | None] = mapped_column(String(127), nullable=True)
    detail: Mapped[JsonObject] = mapped_column(JSON)


class StorageUsage(Base):
    """The characters of text a namespace keeps (service/store/quotas.py): measured every
    `quota_measure_interval_s`, each write adding what it stores in between."""

    __tablename__ = "storage_usage"

    namespace: Mapped[str] = mapped_column(String(64), primary_key=True)
    chars: Mapped[int] = mapped_column(BigInteger)
    measured_at: Mapped[datetime] = mapped_column(UTCDateTime())
