"""Assigned work (`routes/assignments.py`): pool texts given to named people, their targets, and the pool's
search filter, which both the pool's list and an assignment take."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, BeforeValidator, Field

from core.contract import MAX_ASSIGNED, MAX_BULK_LABELS, MAX_METADATA_KEYS, MAX_POOL_QUERY_CHARS, TargetPeriod
from service.schemas.common import NOT_BLANK, JsonInt, MetadataFilter, Strict, integral
from service.schemas.samples import Annotator

#: How many texts: an assignment's `count`, a target's (a JSON integer, bounded in the OpenAPI document too).
TextCount = Annotated[int, Field(ge=1, le=MAX_ASSIGNED), BeforeValidator(integral)]
PoolQuery = Annotated[str, Field(min_length=1, max_length=MAX_POOL_QUERY_CHARS, json_schema_extra=NOT_BLANK)]


class PoolFilterIn(Strict):
    """Which pool texts: every condition given must hold (none: the whole pool)."""

    q: PoolQuery | None = Field(default=None, description="Texts containing this phrase (letter case aside).")
    meta: MetadataFilter | None = Field(
        default=None,
        description="Texts whose metadata has each of these values, compared as text (the number 7 matches "
        f'`"7"`), as the pool list\'s `meta=key:value`; at most {MAX_METADATA_KEYS} keys (addition).',
    )


class AssignIn(Strict):
    annotator: Annotator = Field(description="Who the texts are for: a person's email or a key's name.")
    ids: list[JsonInt] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_BULK_LABELS,
        description="These pool texts (given to the person even if assigned to a colleague too).",
    )
    filter: PoolFilterIn | None = Field(
        default=None,
        description="Instead of `ids`: the pool texts that match, oldest first, among those assigned to "
        "nobody and the person has not labelled.",
    )
    count: TextCount | None = Field(
        default=None,
        description="With `filter` (or alone: the whole pool), at most this many texts.",
    )


class Assigned(BaseModel):
    handle: str
    annotator: str
    assigned: int = Field(description="Texts newly assigned to the person by this request.")
    already: int = Field(description="Of the texts named or matched, those the person had already.")
    total: int = Field(description="The person's assignment now, labelled texts included.")


class TargetIn(Strict):
    count: TextCount | None = Field(description="Texts to label per period; null removes the target.")
    period: TargetPeriod = Field(default="day", description="`day` (UTC) or `total`.")


class TargetOut(BaseModel):
    count: int
    period: TargetPeriod


class PersonWork(BaseModel):
    annotator: str
    assigned: int = Field(description="Texts assigned to the person.")
    labelled: int = Field(description="Of `assigned`, those the person has voted on (any trait).")
    remaining: int = Field(description="`assigned` less `labelled`.")
    target: TargetOut | None
    labelled_today: int = Field(description="Pool texts and samples the person labelled today (UTC).")
    labelled_total: int = Field(description="… and in all, on this model.")
    progress: float | None = Field(
        description="Of the target, the share reached (today's or the total, by its period; capped at 1); "
        "null without a target."
    )


class AssignmentsOut(BaseModel):
    handle: str
    shared_pool: bool = Field(description="Whether queues go on to the shared pool after the assignment.")
    people: list[PersonWork]


class ReassignIn(Strict):
    to: Annotator = Field(description="Who takes the person's texts they have not labelled.")


class Reassigned(BaseModel):
    handle: str
    annotator: str
    to: str
    moved: int = Field(description="Texts now the other person's (their claims on them ended).")


class Unassigned(BaseModel):
    handle: str
    annotator: str
    removed: int = Field(description="The person's texts not labelled yet that left their assignment.")
