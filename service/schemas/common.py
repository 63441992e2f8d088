"""The pieces every resource's bodies share: the strict request base, the text rule, the string patterns
the OpenAPI document states, integers and qualities as JSON sends them, and the small bodies several routes
answer."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, field_validator
from pydantic.config import JsonDict
from pydantic_core import PydanticCustomError

from core.contract import (
    MAX_LABEL_CHARS,
    MAX_METADATA_BYTES,
    MAX_METADATA_FILTER_VALUE_CHARS,
    MAX_METADATA_KEY_CHARS,
    MAX_METADATA_KEYS,
    MAX_TEXT_CHARS,
    text_too_long_message,
)
from core.engine import validate_text
from core.engine.errors import EngineError

# The same rules as JSON Schema patterns (ECMA syntax) for the OpenAPI document, so generated clients and
# schemathesis know them: no NUL anywhere (service.process.api adds it to every string), and not blank.
NO_NUL_PATTERN = "^[^\\x00]*$"
# What Python's str.strip() removes, spelt out: `\s` differs between regex engines (\x1c-\x1f, \x85, \ufeff).
_SPACE = "\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"
NOT_BLANK_PATTERN = f"^[^\\x00]*[^{_SPACE}\\x00][^\\x00]*$"
NOT_BLANK: JsonDict = {"pattern": NOT_BLANK_PATTERN}
# A metadata filter `key:value` as the service takes it: a key that is not blank, a colon, a value, no NUL
# anywhere (a NUL is refused by the guard, a blank key with 422 `invalid_metadata_filter`).
META_FILTER_RULE_PATTERN = f"^[^:\\x00]*[^:{_SPACE}\\x00][^:\\x00]*:[^\\x00]*$"
# Text no database can store as given (PostgreSQL refuses NUL; no UTF-8 encodes a lone surrogate).
UNSTORABLE_RE = re.compile("[\x00\ud800-\udfff]")


def integral(value: object) -> object:
    # JSON has one number type and JSON Schema's "integer" is any number without a fraction, so 4.0 is 4;
    # 4.5, "4" and true are still refused by the strict int check that follows.
    if type(value) is float and value.is_integer():
        return int(value)
    return value


#: A request integer: 4 or 4.0, nothing else.
JsonInt = Annotated[int, BeforeValidator(integral)]

#: A label's quality: a JSON number in [0, 1]. Strict, so "0.5" and true are refused (an integer is still a
#: number); NaN and the infinities fail the bounds, as every comparison with NaN is false.
Quality = Annotated[float, Field(ge=0.0, le=1.0, strict=True)]

#: A trait as a request names it: its key or its name (the route resolves which).
TraitRef = Annotated[str, Field(min_length=1, max_length=MAX_LABEL_CHARS)]


class Strict(BaseModel):
    """Request bodies: unknown fields and loosely typed values are refused. `"0.5"` is not a quality and `1`
    is not `true` (zero-data-retention must never be switched by a guess); an integer is still a number."""

    model_config = ConfigDict(extra="forbid", strict=True)

    @field_validator("*", mode="before")  # before the type check: pydantic words surrogates oddly
    @classmethod
    def _storable(cls, value: object) -> object:
        if has_unstorable(value):
            raise PydanticCustomError(
                "invalid_character", "must not contain NUL characters (\\u0000) or lone surrogates"
            )
        return value


def has_unstorable(value: object) -> bool:
    """Whether a string (or a list of them) holds a character one of the databases cannot store."""
    if isinstance(value, str):
        return UNSTORABLE_RE.search(value) is not None
    if isinstance(value, list):
        return any(has_unstorable(v) for v in value)
    return False


def check_metadata(
    value: dict[str, str | int | float | bool | None],
) -> dict[str, str | int | float | bool | None]:
    """A text's metadata within its bounds (core/contract.py), every key and value storable; 422
    `invalid_metadata` saying which bound it passed."""
    if len(value) > MAX_METADATA_KEYS:
        raise PydanticCustomError(
            "invalid_metadata", f"metadata has {len(value)} keys; the limit is {MAX_METADATA_KEYS}"
        )
    for key, item in value.items():
        # A filter is `key:value` and names the key in a JSON path (SQLite's), where `"` and `\` break it.
        if any(c in key for c in ':"\\'):
            raise PydanticCustomError(
                "invalid_metadata", f'a metadata key has no :, " or \\ in it: {key[:80]!r}'
            )
        if not key.strip() or len(key) > MAX_METADATA_KEY_CHARS:
            raise PydanticCustomError(
                "invalid_metadata",
                f"a metadata key is 1-{MAX_METADATA_KEY_CHARS} characters, not blank: {key[:80]!r}",
            )
        if has_unstorable(key) or has_unstorable(item):
            raise PydanticCustomError(
                "invalid_metadata", "metadata must not contain NUL characters (\\u0000) or lone surrogates"
            )
        if isinstance(item, float) and not math.isfinite(item):
            raise PydanticCustomError("invalid_metadata", f"metadata {key!r} is not a finite number")
    size = len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())
    if size > MAX_METADATA_BYTES:
        raise PydanticCustomError(
            "invalid_metadata",
            f"metadata takes {size:,} bytes as JSON; the limit is {MAX_METADATA_BYTES:,} (keep fewer or "
            "shorter columns)",
        )
    return value


#: A text's metadata (docs/api.md "Text metadata"): the extra columns of an imported row, each a string,
#: number, true/false or null, within core/contract.py's bounds.
Metadata = Annotated[
    dict[str, str | int | float | bool | None],
    Field(
        json_schema_extra={
            "maxProperties": MAX_METADATA_KEYS,
            "propertyNames": {
                "maxLength": MAX_METADATA_KEY_CHARS,
                "pattern": f'^[^:"\\\\\\x00]*[^:"\\\\\\x00{_SPACE}][^:"\\\\\\x00]*$',
            },
        },
        description=f"Extra columns kept beside the text: at most {MAX_METADATA_KEYS} keys of at most "
        f"{MAX_METADATA_KEY_CHARS} characters, each value a string, number, true/false or null, at most "
        f"{MAX_METADATA_BYTES:,} bytes as JSON (addition).",
    ),
    AfterValidator(check_metadata),
]


def metadata_filter_problem(pairs: Sequence[tuple[str, str]]) -> str | None:
    """What puts a metadata filter (key, value pairs) outside its bounds (core/contract.py), or None. The
    pool's `meta=` and an assignment's `filter.meta` both refuse with it: 422 `invalid_metadata_filter`."""
    if len(pairs) > MAX_METADATA_KEYS:
        return f"{len(pairs)} metadata filters; the limit is {MAX_METADATA_KEYS}"
    for key, value in pairs:
        if not key.strip() or len(key) > MAX_METADATA_KEY_CHARS:
            return (
                f"a metadata filter's key is 1-{MAX_METADATA_KEY_CHARS} characters, not blank: {key[:80]!r}"
            )
        if len(value) > MAX_METADATA_FILTER_VALUE_CHARS:
            return (
                f"a metadata filter's value is at most {MAX_METADATA_FILTER_VALUE_CHARS:,} characters; "
                f"{key[:80]!r} has {len(value):,}"
            )
        if has_unstorable(key) or has_unstorable(value):
            return "a metadata filter must not contain NUL characters (\\u0000) or lone surrogates"
    return None


def check_metadata_filter(value: dict[str, str]) -> dict[str, str]:
    if problem := metadata_filter_problem(list(value.items())):
        raise PydanticCustomError("invalid_metadata_filter", problem)
    return value


#: A metadata filter in a body: {key: value}, each a text's metadata `key` whose value, as text, is `value`.
MetadataFilter = Annotated[
    dict[str, str],
    Field(
        json_schema_extra={
            "maxProperties": MAX_METADATA_KEYS,
            "propertyNames": {"maxLength": MAX_METADATA_KEY_CHARS, "pattern": NOT_BLANK_PATTERN},
            "additionalProperties": {"type": "string", "maxLength": MAX_METADATA_FILTER_VALUE_CHARS},
        },
    ),
    AfterValidator(check_metadata_filter),
]


def check_text(value: str, where: str = "text") -> str:
    """The engine's text rule, reported with the engine's error code; the length is counted as sent (the
    schema's maxLength, and no work on a longer string), then the engine trims and checks it."""
    if len(value) > MAX_TEXT_CHARS:
        message = text_too_long_message(len(value), where)
        raise PydanticCustomError("text_too_long", message)

    try:
        return validate_text(value, where=where)
    except EngineError as exc:
        raise PydanticCustomError(exc.code, str(exc)) from None


# The schema states the documented rule (1-20,000 characters, not blank); check_text alone enforces it, so a
# too-long or empty text is always `text_too_long` / `empty_text` with the same sentence (a length bound in
# Field would answer first, with pydantic's words).
TEXT_SCHEMA: JsonDict = {"minLength": 1, "maxLength": MAX_TEXT_CHARS, **NOT_BLANK}
Text = Annotated[str, Field(json_schema_extra=TEXT_SCHEMA), AfterValidator(check_text)]


class Deleted(BaseModel):
    handle: str
    deleted: bool


class EmbedderGraph(BaseModel):
    embedder: str = Field(description="The embedder's id.")
    name: str = Field(description="Its short name (`e5-small-qint8`, `mpnet-base`).")
    state: Literal["built", "building", "not built"] = Field(
        description="Its int8 graph on this machine: `building` from the service's first start (minutes of "
        "CPU, once, for mpnet-base); a training that needs it meanwhile waits for it."
    )


class Health(BaseModel):
    status: str
    version: str
    embedders: list[EmbedderGraph] = Field(
        default_factory=list,
        description="(addition) The embedders' int8 graphs and whether each is built yet.",
    )
