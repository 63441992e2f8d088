"""The API's rules that more than one layer needs, each in one place (docs/api.md states them).

The client, the engine, the service's schemas and the workbench's pages import these; this module depends on
nothing but the standard library, so importing it costs nothing and creates no cycle.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Literal, NamedTuple, get_args

# -- texts ------------------------------------------------------------------------------------------------

#: Every text field (sample, score, pool, evaluation, Perspective comment): at most this many characters.
MAX_TEXT_CHARS = 20_000
#: Trait names and pole labels; so a trait reference (a key or a name) is at most this long too.
MAX_LABEL_CHARS = 100
#: A model's or a trait's `description`, and a model's `additional_terms`.
MAX_DESCRIPTION_CHARS = 10_000
#: A model's `readme_markdown`.
MAX_README_CHARS = 100_000
#: A URL: an upstream source's `url`, a sample's `source_url`.
MAX_URL_CHARS = 2_000
#: A sample's `source_id`: the id of its row in the file it came from, so an export joins back to that file.
MAX_SOURCE_ID_CHARS = 200
#: The generator model a deployment names (`SCORING_GENERATOR_MODEL`), stored on the samples it wrote.
MAX_GENERATOR_MODEL_CHARS = 200
#: A comment on a text (`POST …/comments`'s `body`), in characters: a short note, not a document.
MAX_COMMENT_CHARS = 1_000
#: A text's metadata (extra columns an import keeps beside a pool text or a sample): at most this many keys,
#: each key at most MAX_METADATA_KEY_CHARS, each value a string, number, true/false or null, and the whole
#: object, as compact JSON, at most MAX_METADATA_BYTES (a context column, not a second text).
MAX_METADATA_KEYS = 20
MAX_METADATA_KEY_CHARS = 64
MAX_METADATA_BYTES = 4_000
#: A metadata filter (the pool's `meta=key:value`, an assignment's `filter.meta`): at most MAX_METADATA_KEYS
#: pairs, each key within MAX_METADATA_KEY_CHARS, each value at most this many characters (no stored value
#: is longer, so none longer could match).
MAX_METADATA_FILTER_VALUE_CHARS = MAX_METADATA_BYTES
#: A model's labelling guidelines (Markdown), and the note saying what a new version of them changed.
MAX_GUIDELINES_CHARS = 100_000
MAX_GUIDELINES_NOTE_CHARS = 500
#: An upstream source's `title` and `license`; a model lists at most MAX_UPSTREAM_SOURCES of them.
MAX_SOURCE_TITLE_CHARS = 500
MAX_SOURCE_LICENSE_CHARS = 200
MAX_UPSTREAM_SOURCES = 100
#: A model's `max_depth` (1 to this; stored, no effect on `balanced_cosine`).
MAX_DEPTH = 8
#: The auto-prune override's `keep_unnamed` (0 to this).
MAX_KEEP_UNNAMED = 100_000


def text_too_long_message(length: int, where: str = "text") -> str:
    """The one wording of the `text_too_long` error, wherever a text is checked."""
    return f"{where} has {length:,} characters; the limit is {MAX_TEXT_CHARS:,}"


#: Column names read as the rows' own ids (each sample's `source_id`), first found first, any case: the
#: workbench's file import proposes that column, and a notebook's DataFrame import takes it.
ID_COLUMNS = (
    "source_id",
    "id",
    "example_id",
    "item_id",
    "sample_id",
    "row_id",
    "text_id",
    "doc_id",
    "uid",
    "uuid",
)


def id_column(columns: Iterable[object]) -> str | None:
    """The first of `columns` named like an id column (`ID_COLUMNS`, any case, trimmed), else None."""
    named = {str(c).strip().lower(): str(c) for c in reversed(list(columns))}
    return next((named[n] for n in ID_COLUMNS if n in named), None)


def source_id_text(value: object) -> str | None:
    """A file's id cell as a sample's `source_id`: its text, trimmed; a whole number without ".0" (an id
    column with gaps reads as floats: 17.0 is the id 17); None when blank (NaN: an empty cell read by pandas).
    Its length is checked where it is used, against MAX_SOURCE_ID_CHARS."""
    if isinstance(value, float):
        if value != value:
            return None
        if value.is_integer():
            value = int(value)
    text = "" if value is None else str(value).strip()
    return text or None


# -- quality and poles ------------------------------------------------------------------------------------

#: Score feedback labels a model buffers before an automatic retraining, unless the service is set up with
#: another number (SCORING_RETRAIN_BUFFER; the API does not report it, so the workbench names this default).
DEFAULT_RETRAIN_BUFFER = 20

#: A score (calibrated, in [0, 1]) halfway between the poles: at or above it, a score's `label` is the
#: positive pole's. Calibration maps the midpoint between a trait's two prototypes here.
SCORE_MIDPOINT = 0.5
#: The decision threshold of a trait that has none set on its version (evaluation's accuracy and F1, the
#: comparison of two evaluations): the score midpoint.
DEFAULT_DECISION_THRESHOLD = SCORE_MIDPOINT


def decision_threshold(thresholds: Mapping[str, Any] | None, trait: str) -> float:
    """A version's decision threshold for `trait`, from its stored thresholds (`{trait: {"threshold": …}}`):
    the one set on that version, else the default. Never another version's: a threshold is chosen on its
    own version's scores."""
    entry = (thresholds or {}).get(trait) or {}
    return float(entry.get("threshold", DEFAULT_DECISION_THRESHOLD))


#: A quality exactly at the middle of the axis is neutral: it counts toward neither pole (training, counts,
#: flags, agreement, thresholds and evaluation all read this one rule through `pole_of`).
NEUTRAL_QUALITY = 0.5
#: How far from the middle a quality may lie and still be the middle: a mean of votes that is mathematically
#: 0.5 (0.416667 and 0.583333, or 5/12 and 7/12) may miss it by float rounding (about 1e-16), and must be
#: neutral as 0.5 typed is. Far below any quality a person means (a 1e-7 step is a pole).
NEUTRAL_TOLERANCE = 1e-9
Pole = Literal["positive", "negative", "neutral"]
POLES: tuple[Pole, ...] = get_args(Pole)
#: The rule in words, for messages that name it (the engine's and the service's `trait_one_pole`).
POLE_RULE = (
    f"quality above {NEUTRAL_QUALITY} is the positive pole, below it the negative; "
    f"exactly {NEUTRAL_QUALITY} is neutral and counts toward neither"
)


def pole_of(quality: float) -> Pole:
    """The pole a quality belongs to: above the middle positive, below it negative, at it neutral (within
    `NEUTRAL_TOLERANCE`, which absorbs the rounding of a mean of votes)."""
    if quality > NEUTRAL_QUALITY + NEUTRAL_TOLERANCE:
        return "positive"
    if quality < NEUTRAL_QUALITY - NEUTRAL_TOLERANCE:
        return "negative"
    return "neutral"


# -- rating scales ------------------------------------------------------------------------------------------

#: A trait labelled on a scale has this many points, at least and at most (keys 1..N on the Label page);
#: a trait without a scale is labelled by its two poles.
MIN_SCALE_POINTS = 3
MAX_SCALE_POINTS = 7


def scale_quality(point: int, points: int) -> float:
    """Point `point` (1..points) of a scale as a quality: the points spread evenly over 0..1."""
    return (point - 1) / (points - 1)


#: A quality this near a point's lies on it: a file's ratings arrive as qualities rounded to 6 decimals
#: (1/6 as 0.166667), and a scale's points are at least 1/6 apart.
SCALE_TOLERANCE = 1e-6


def scale_point(quality: float, points: int) -> int | None:
    """The point of a `points`-point scale a quality lies on (within `SCALE_TOLERANCE`), else None: a
    graded label between two points (a mean of ratings, a machine's quality) is on no point."""
    nearest = round(quality * (points - 1))
    return nearest + 1 if abs(quality - scale_quality(nearest + 1, points)) <= SCALE_TOLERANCE else None


def nearer_pole_is_positive(score: float) -> bool:
    """Whether a score's `label` is the positive pole's (the midpoint itself counts as positive)."""
    return score >= SCORE_MIDPOINT


# -- trait keys -------------------------------------------------------------------------------------------

#: A trait key has at most this many characters, suffix included.
MAX_TRAIT_KEY = 48
#: Traits per model, however they arrive (added or discovered); so also traits per request and feedback labels
#: per score request (one per trait).
MAX_TRAITS = 50
#: Traits one discovery run adds at most (fewer when the model has less room under MAX_TRAITS).
MAX_DISCOVERED_TRAITS = 3
_NON_KEY = re.compile(r"[^a-z0-9]+")


def trait_key(name: str) -> str:
    """A name's key: lower-case, runs of anything but [a-z0-9] as `_`, trimmed, at most 48, else `trait`."""
    key = _NON_KEY.sub("_", name.lower()).strip("_")[:MAX_TRAIT_KEY].strip("_")
    return key or "trait"


def unique_trait_key(key: str, taken: Collection[str]) -> str:
    """`key`, or `key_2`, `key_3`, ... when taken; shortened so the result stays within 48 characters."""
    if key not in taken:
        return key
    n = 2
    while True:
        suffix = f"_{n}"
        candidate = key[: MAX_TRAIT_KEY - len(suffix)] + suffix
        if candidate not in taken:
            return candidate
        n += 1


# -- handles, tags, version numbers ------------------------------------------------------------------------

#: A namespace, and a model's name (its handle's part after the dot): at most this many characters each.
MAX_NAMESPACE_CHARS = 63
#: `<namespace>.<name>`: from `a.b` to two full-length parts and the dot.
MIN_HANDLE_CHARS = 3
MAX_HANDLE_CHARS = 2 * MAX_NAMESPACE_CHARS + 1
#: A tag has at most this many characters.
MAX_TAG_CHARS = 64
#: A version reference (a path's `{v}`, a body's or query's `version`, `a` and `b`) is `vN` or a tag: no
#: longer string can name a version, so none is read. (A tag route answers an over-long name `invalid_tag`.)
MAX_VERSION_REF_CHARS = MAX_TAG_CHARS
#: A cursor as the service signs it is far shorter; a longer one is refused unread.
MAX_CURSOR_CHARS = 1_000
#: The `kind` filter of `GET /models` (an unknown kind lists nothing, so only its length is bounded).
MAX_KIND_CHARS = 32

# Whole-string patterns (\A…\Z: `$` would also match before a trailing newline), ASCII digits only.
_NAME = f"[a-z0-9][a-z0-9_-]{{0,{MAX_NAMESPACE_CHARS - 1}}}"
NAMESPACE_RE = re.compile(rf"\A{_NAME}\Z")
HANDLE_RE = re.compile(rf"\A({_NAME})\.({_NAME})\Z")
#: The catalog every key reads; a model's namespace is the part of its handle before the dot.
PUBLIC_NAMESPACE = "public"
#: HANDLE_RE as a JSON Schema (ECMA) pattern, for the OpenAPI document.
HANDLE_PATTERN = f"^{_NAME}\\.{_NAME}$"
#: NAMESPACE_RE as a JSON Schema (ECMA) pattern, for the OpenAPI document.
NAMESPACE_PATTERN = f"^{_NAME}$"
TAG_PATTERN = f"[A-Za-z0-9][A-Za-z0-9._-]{{0,{MAX_TAG_CHARS - 1}}}"
TAG_RE = re.compile(rf"\A{TAG_PATTERN}\Z")
VERSION_NO_RE = re.compile(r"\Av([0-9]+)\Z")
#: A run id (docs/api.md: opaque, `run_<32 hex>`); anything else names no run.
RUN_ID_RE = re.compile(r"\Arun_[0-9a-f]{32}\Z")
#: Not a tag: it would read as a version number (`v3`, and `V3` too).
TAG_LIKE_VERSION_RE = re.compile(r"\A[vV][0-9]+\Z")

# -- annotators (who gave a label: docs/api.md, "Annotators and votes") -------------------------------------

#: A key's name, and an annotator given with a label: whole string, ASCII.
MAX_ANNOTATOR_CHARS = 64
_ANNOTATOR = f"[A-Za-z0-9][A-Za-z0-9._@-]{{0,{MAX_ANNOTATOR_CHARS - 1}}}"
ANNOTATOR_RE = re.compile(rf"\A{_ANNOTATOR}\Z")
#: ANNOTATOR_RE as a JSON Schema (ECMA) pattern, for the OpenAPI document.
ANNOTATOR_PATTERN = f"^{_ANNOTATOR}$"
#: An unnamed key labels as `key-<prefix>`; no key may be named so (it would pass for another key).
UNNAMED_KEY_PREFIX = "key-"


#: A namespace's member (docs/api.md, "People"): an email, which is their annotator name (so ANNOTATOR_RE), or
#: the person's subject at the identity provider (no '@').
MAX_MEMBER_CHARS = 255
_SUBJECT = f"[A-Za-z0-9][A-Za-z0-9._+|:=-]{{0,{MAX_MEMBER_CHARS - 1}}}"
MEMBER_RE = re.compile(rf"\A(?:{_ANNOTATOR}|{_SUBJECT})\Z")
#: MEMBER_RE as a JSON Schema (ECMA) pattern, for the OpenAPI document.
MEMBER_PATTERN = f"^(?:{_ANNOTATOR}|{_SUBJECT})$"


def annotator_of(name: str | None, prefix: str) -> str:
    """The annotator name a key labels as: its name, or `key-<prefix>` when it has none."""
    return name if name else f"{UNNAMED_KEY_PREFIX}{prefix}"


#: `overlap` of `POST …/pool/suggest`: the share of picks routed to texts another annotator labelled.
MAX_OVERLAP = 0.5
#: A model's `gold_rate`: the share of each person's suggestions that are gold items (docs/api.md, "Gold
#: items"); more than half would make the queue mostly checks. 0: no gold is mixed in.
MAX_GOLD_RATE = 0.5
#: A model's `gold_threshold`: a person whose accuracy on gold is surely under it (the upper end of its
#: interval) is flagged to the owner. 0.7: well above chance (0.5) on two poles, below a careful person.
DEFAULT_GOLD_THRESHOLD = 0.7
#: The confidence of the interval of a person's accuracy on gold (Wilson's score interval).
GOLD_CONFIDENCE = 0.95
#: Where a gold item came from: imported with its answer, or promoted from a settled text.
GoldOrigin = Literal["imported", "promoted"]
#: A model's `votes_wanted`: how many people label each pool text before it leaves everyone's queue.
DEFAULT_VOTES_WANTED = 1
MAX_VOTES_WANTED = 10
#: How long a suggestion handed out with `claim` stays its person's (SCORING_CLAIM_LEASE_S): long enough to
#: read and label a queue of texts, short enough that a closed tab frees them soon.
DEFAULT_CLAIM_LEASE_S = 300.0
#: Live claims one person holds on one trait of a model (SCORING_CLAIMS_PER_PERSON): twice the Label page's
#: batch of 20 suggestions (it asks for the next batch while the last few are still queued), so two people
#: asking for the most cannot hold a whole pool between them.
DEFAULT_CLAIMS_PER_PERSON = 40

# -- rate limits and quotas (docs/api.md "Limits"; settings of the same names in service/config) -----------

#: Writes (labels, feedback labels, comments, claims, imports, edits: every POST, PUT, PATCH and DELETE but
#: scoring) of one key or person in one namespace: a bucket of WRITE_BURST refilled at WRITE_RATE_PER_S.
#: A person labelling as fast as they can press keys stays under it; a script flooding gets 429.
DEFAULT_WRITE_RATE_PER_S = 10.0
DEFAULT_WRITE_BURST = 120
#: Imports (`POST …/samples`, `…/pool`, `…/evaluation-set`) take from a bucket of their own, in requests, so
#: batching is never punished (docs/benchmarks/scale.md); one under SMALL_IMPORT_ROWS rows takes a write token
#: too, so a flood of one-row imports meets the writes bucket as a flood of labels does.
DEFAULT_IMPORT_RATE_PER_S = 100.0
DEFAULT_IMPORT_BURST = 200
SMALL_IMPORT_ROWS = 50
#: Score requests of one key or person in a namespace: enforced only while another caller scores too.
DEFAULT_SCORE_RATE_PER_S = 50.0
DEFAULT_SCORE_BURST = 500
#: Scoring's work in characters per key or person (SCORING_SCORE_CHARS_PER_S, SCORING_SCORE_CHARS_BURST): an
#: owner's budget for shared deployments, off (0) by default: the fair share (service/domain/fair_share.py)
#: shares the cores by texts and tokens and never slows a caller alone, as a fixed budget did.
DEFAULT_SCORE_CHARS_PER_S = 0.0
DEFAULT_SCORE_CHARS_BURST = 100_000
#: The characters one score request may carry in all (SCORING_SCORE_REQUEST_CHARS): its answer comes in
#: seconds; the budget's burst, so a request within the cap always passes once the budget is full.
DEFAULT_SCORE_REQUEST_CHARS = 100_000
#: Scoring one caller may have in flight while another caller scores too, in the fair share's tokens (a text
#: costs 16 plus its tokens after the window cut): four full requests; past it 429, never to a caller alone.
DEFAULT_SCORE_CALLER_COST = 200_000
#: Suggestion, pool and listing requests one caller may have in flight at once while another caller has such
#: requests too (SCORING_HEAVY_PER_CALLER): a Label page's suggestion and a listing beside it; past it 429,
#: never to a caller alone.
DEFAULT_HEAVY_PER_CALLER = 2
#: Automatic retrainings a model starts in an hour (SCORING_RETRAINS_PER_HOUR): past it, labels wait in the
#: buffer, and the first label after the hour retrains on all of them.
DEFAULT_RETRAINS_PER_HOUR = 60
#: Storage quotas (docs/api.md "Rate limits and quotas"): a non-owner's labels on one model (rows, characters)
#: and a namespace's characters of text in all; far above a campaign's (`python -m benchmarks.team`).
#: A training holds all of one model's texts at once (embedding is cut and pieced: docs/benchmarks/memory.md):
#: 500 M characters are ~0.5-2 GB in one worker; the million-sample benchmark's model (~260 M) fits.
DEFAULT_LABEL_QUOTA_ROWS = 50_000
DEFAULT_LABEL_QUOTA_CHARS = 50_000_000
DEFAULT_NAMESPACE_QUOTA_CHARS = 500_000_000
#: Refused sign-in attempts one API process records a minute, from one source address and from all: past
#: them an attempt is counted, not recorded (the next recorded one from that source says how many), so a
#: flood of forged tokens cannot fill the disk.
MAX_REFUSED_SIGN_INS_PER_SOURCE = 5
MAX_REFUSED_SIGN_INS = 60
#: Refused authorisations (403) one API process records a minute, per caller and from all, past which they
#: are counted the same way: a caller's refused writes also meet its write bucket, its refused reads none.
MAX_REFUSED_ACCESS_PER_CALLER = 30
MAX_REFUSED_ACCESS = 300
#: Comments one person keeps on one text of a trait, and on one model.
MAX_COMMENTS_PER_TEXT = 20
MAX_COMMENTS_PER_PERSON = 500

# -- allowed values ----------------------------------------------------------------------------------------

ModelState = Literal["draft", "busy", "ready", "failed", "archived"]
TrainEffort = Literal["low", "medium", "high", "max"]
DiscoverEffort = Literal["low", "medium", "high", "xhigh", "max"]
Aggregation = Literal["mean", "max", "min"]
Provenance = Literal["authored", "synthesized", "discovered", "feedback", "imported"]
#: What a sample's input may say it is: the caller's own label (`authored`), or a row of a file import
#: (`imported`: not the importer's vote; docs/api.md "Roles").
InputProvenance = Literal["authored", "imported"]
#: A trait's kind: defined by its samples (extrinsic), or found by discovery (intrinsic).
TraitKind = Literal["extrinsic", "intrinsic"]
#: What made a version: a training, a retune, a retraining on buffered feedback, a backfill.
VersionTrigger = Literal["train", "retune", "retrain_buffered", "backfill"]
SuggestMode = Literal["auto", "typical", "uncertain", "diverse", "positive", "negative"]
SynthType = Literal["from_traits", "diversify"]
#: A run's status (`last_operation.status`): `cancelled` is an addition (POST …/runs/{run_id}/cancel).
RunStatus = Literal["queued", "running", "succeeded", "failed", "cancelled"]
KeyScope = Literal["authoring", "scoring"]
#: What an authoring key or a person may do in its namespaces (docs/api.md "Roles"), each all the one before.
Role = Literal["annotator", "reviewer", "owner"]
#: Background runs; `last_operation.kind` also says `reopen`, an operation done within its request.
RunKind = Literal["train", "retrain", "backfill", "discover", "synthesize", "evaluate"]

MODEL_STATES: tuple[ModelState, ...] = get_args(ModelState)
TRAIN_EFFORTS: tuple[TrainEffort, ...] = get_args(TrainEffort)
#: Discovery and synthesis take the same efforts.
DISCOVER_EFFORTS: tuple[DiscoverEffort, ...] = get_args(DiscoverEffort)
AGGREGATIONS: tuple[Aggregation, ...] = get_args(Aggregation)
PROVENANCES: tuple[Provenance, ...] = get_args(Provenance)
SUGGEST_MODES: tuple[SuggestMode, ...] = get_args(SuggestMode)
#: The kinds of flag a check of the samples raises (core.engine.flags), in the order they are listed.
FLAG_KINDS = ("likely mislabelled", "contested", "outlier")
SYNTH_TYPES: tuple[SynthType, ...] = get_args(SynthType)
RUN_KINDS: tuple[RunKind, ...] = get_args(RunKind)
RUN_STATUSES: tuple[RunStatus, ...] = get_args(RunStatus)
#: A run still to be done: it may be cancelled, and it keeps its model `busy`.
RUNS_IN_FLIGHT: tuple[RunStatus, ...] = ("queued", "running")
INPUT_PROVENANCES: tuple[InputProvenance, ...] = get_args(InputProvenance)
ROLES: tuple[Role, ...] = get_args(Role)
#: A key created without a role: what every key could do before roles existed.
DEFAULT_ROLE: Role = "owner"

# -- roles: what each may do (the service enforces this table; the workbench hides what it refuses) ---------

#: `label`: post labels and votes, ask for suggestions, withdraw one's own buffered label; `review`: settle a
#: disagreement, withdraw anyone's buffered label; `manage`: everything else that writes (imports, trains,
#: reopens, tags, evaluation sets, settings, people).
Action = Literal["label", "review", "manage"]
ROLE_ACTIONS: dict[Role, frozenset[Action]] = {
    "annotator": frozenset({"label"}),
    "reviewer": frozenset({"label", "review"}),
    "owner": frozenset({"label", "review", "manage"}),
}


def role_allows(role: str, action: Action) -> bool:
    """Whether `role` may do `action` (a role this table does not know: nothing)."""
    return action in ROLE_ACTIONS.get(role, frozenset())  # type: ignore[call-overload]


def least_role(action: Action) -> Role:
    """The first role that may do `action`, for the message of a refusal."""
    return next(r for r in ROLES if action in ROLE_ACTIONS[r])


#: What the audit log records (docs/api.md "Audit log"): every irreversible or administrative action (a
#: settle, a vote edited or deleted, a model's settings, traits, pool, evaluation set, tags and thresholds
#: changed, a model deleted or purged, a run asked for or started by labels, a role or key changed), sign-ins
#: and refused authorisations. A label's own row (a vote, a note, a claim) names its author and time.
AuditKind = Literal[
    "settled",
    "unsettled",
    "feedback_withdrawn",
    "role_changed",
    "vote_edited",
    "vote_deleted",
    "model_deleted",
    "pool_deleted",
    "key_created",
    "key_revoked",
    "signed_in",
    "sign_in_refused",
    "model_created",
    "model_changed",
    "model_reopened",
    "model_purged",
    "traits_changed",
    "samples_imported",
    "pool_added",
    "evaluation_set_changed",
    "run_started",
    "run_cancelled",
    "tag_moved",
    "threshold_changed",
    "note_deleted",
    "signed_out",
    "access_refused",
    "labels_reviewed",
    "label_corrected",
    "labels_removed",
    "labels_restored",
    "assignments_changed",
    "pool_labelled",
    "gold_changed",
    "guidelines_changed",
]
AUDIT_KINDS: tuple[AuditKind, ...] = get_args(AuditKind)

#: Where a label stands (docs/api.md "Review"): an annotator's label on a reviewed model is `pending` until a
#: reviewer (or the owner's agreement rule) accepts or rejects it; only `accepted` labels train.
ReviewStatus = Literal["accepted", "pending", "rejected"]
REVIEW_STATUSES: tuple[ReviewStatus, ...] = get_args(ReviewStatus)
ReviewDecision = Literal["accept", "reject"]
#: How a reviewed model accepts labels besides a reviewer: `none`, or `agreement` (a text's votes, once they
#: reach the votes wanted, at least 2, all on one pole: each pending one is accepted).
AcceptRule = Literal["none", "agreement"]
ACCEPT_RULES: tuple[AcceptRule, ...] = get_args(AcceptRule)
#: How long a bulk removal of one person's labels can be undone (its `undo` token), in seconds.
REMOVAL_UNDO_S = 3600
#: The characters of a removal's `undo` token at most (the service makes 32).
MAX_UNDO_TOKEN_CHARS = 64
#: Labels one review decision names, and the characters of its comment.
MAX_REVIEW_ITEMS = 500
MAX_REVIEW_COMMENT_CHARS = 1_000


# -- embedders a model may be created with, by name (core.embedders.registry maps them to ids) ---------------

#: The cheapest embedder (multilingual-e5-small in int8, ~100 languages: docs/embedders.md), embedding where
#: nothing names one: the local engine, `auto` before its first version. A model keeps its embedder for good.
DEFAULT_EMBEDDER = "e5-small-qint8"
AUTO_EMBEDDER = "auto"  # new models' default: each training keeps the embedder that serves it best (0019)
MPNET_EMBEDDER = "mpnet-base"  # the larger English embedder; a model may name it where installed
BLEND_EMBEDDER = "blend"  # e5-small-qint8 and mpnet-base trained alike, scored by their mean (0020)
_SHIPPED = (DEFAULT_EMBEDDER, BLEND_EMBEDDER, MPNET_EMBEDDER, "minilm-qint8v2", "minilm", "e5-small")
EMBEDDER_NAMES = (AUTO_EMBEDDER, *_SHIPPED)
#: Tests' and benchmarks' model-free embedder: `SCORING_EMBEDDER` and `get_embedder` take it, a model never.
TEST_EMBEDDER = "hashing"

# -- the error envelope's codes ------------------------------------------------------------------------------

#: The envelope's `code` for a status when nothing more specific applies: the service answers framework
#: errors (unknown route, wrong method, …) with these, and the client names an error body without an envelope
#: (a proxy's page) the same way.
STATUS_ERROR_CODES: Mapping[int, str] = MappingProxyType(
    {
        400: "bad_request",
        401: "unauthorized",
        403: "forbidden",
        404: "not_found",
        405: "method_not_allowed",
        409: "conflict",
        413: "payload_too_large",
        415: "unsupported_media_type",
        422: "validation_error",
        429: "rate_limited",
        500: "internal_error",
        503: "unavailable",
        507: "storage_full",
    }
)

# -- sizes of requests and pages ---------------------------------------------------------------------------

#: Samples in one `POST …/samples` (all or none).
MAX_SAMPLES_PER_REQUEST = 500
#: Items in one `POST …/evaluation-set` (all or none): the samples' bound.
MAX_EVAL_ITEMS_PER_REQUEST = MAX_SAMPLES_PER_REQUEST
#: Texts in one `POST …/score` (or compare) request.
MAX_SCORE_TEXTS = 100
#: Probe texts in one `POST …/traits/preview`.
MAX_PREVIEW_TEXTS = 20
#: Texts in one `POST …/pool` request.
MAX_POOL_TEXTS_PER_REQUEST = 1000
#: Pool texts one bulk label (`POST …/pool/label`) or one assignment by ids names at most.
MAX_BULK_LABELS = 500
#: Characters of a pool search (`q`): a phrase to find in the texts, not a text.
MAX_POOL_QUERY_CHARS = 200
#: Texts one assignment gives a person at most (`count`), and a person's target at most.
MAX_ASSIGNED = 100_000
#: A person's target counts texts labelled per UTC day, or in all.
TargetPeriod = Literal["day", "total"]
TARGET_PERIODS: tuple[TargetPeriod, ...] = get_args(TargetPeriod)
#: Items in one `POST …/gold` (all or none), and the gold items a model holds: a gold set is a few hundred
#: known answers, listed whole.
MAX_GOLD_ITEMS_PER_REQUEST = MAX_SAMPLES_PER_REQUEST
MAX_GOLD_ITEMS = 5000


class PageSize(NamedTuple):
    """A paginated list's `limit`: its default and its largest accepted value."""

    default: int
    maximum: int


MODELS_PAGE = PageSize(50, 250)
VERSIONS_PAGE = PageSize(50, 250)
SAMPLES_PAGE = PageSize(100, 500)
POOL_PAGE = PageSize(100, 500)
#: `POST …/pool/suggest`'s `k`: suggestions in one answer.
SUGGESTIONS = PageSize(10, 100)
#: `GET …/evaluation/compare`'s `limit`: disagreements in one answer.
DISAGREEMENTS = PageSize(20, 1000)
#: Points of a trait's curve in `GET …/pr-curve` at most (the threshold's choice itself uses every one).
MAX_PR_POINTS = 500


def threshold_choice(curve: Sequence[tuple[float, float, float]], target: str, value: float) -> int | None:
    """The point of a precision-recall curve, `(threshold, precision, recall)` by rising threshold, that a
    decision threshold for `target` (`precision` or `recall`) ≥ `value` takes: the best other measure among
    the points reaching it, ties to the higher threshold (fewer positives); None when none reaches it."""
    reach, other = (1, 2) if target == "precision" else (2, 1)
    ok = [i for i, point in enumerate(curve) if point[reach] >= value - 1e-12]
    return max(ok, key=lambda i: (curve[i][other], curve[i][0])) if ok else None


#: A trait's `anchor_sample_ids`: at most this many ids per pole.
ANCHORS_PER_POLE = 3
#: `GET …/feedback`'s `limit`: buffered feedback labels in one page.
FEEDBACK_PAGE = PageSize(100, 500)
#: `limit` of `GET …/agreement`: the most disagreed texts listed per trait.
AGREEMENT_LIMIT = PageSize(20, 100)
#: `GET /namespaces/{ns}/audit`'s `limit`: audit events in one page.
AUDIT_PAGE = PageSize(100, 500)
#: A search's words (`GET …/my-labels`'s `q`): a few words, short enough for any server's request line.
MAX_SEARCH_CHARS = 200
#: `GET …/my-labels`'s `limit`: the caller's own labels in one page.
MY_LABELS_PAGE = PageSize(50, 500)
#: `GET …/guidelines/versions`'s `limit`: versions of a model's guidelines in one page.
GUIDELINES_PAGE = PageSize(20, 200)
#: `GET …/review`'s `limit`: labels of the review queue in one page.
REVIEW_PAGE = PageSize(100, 500)
#: `GET …/votes`'s `limit`: votes of the export in one page.
VOTES_PAGE = PageSize(500, 1000)
#: `GET …/unsure` and `GET …/comments`: unsure marks or comments in one page.
NOTES_PAGE = PageSize(100, 500)

# -- the Perspective-compatible surface (docs/perspective.md) ------------------------------------------------

#: Languages a request may name (`languages`).
MAX_PERSPECTIVE_LANGUAGES = 20
#: A request's `clientToken`, echoed back.
MAX_CLIENT_TOKEN_CHARS = 1_000
