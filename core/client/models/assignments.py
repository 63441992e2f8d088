"""Assigned work: pool texts given to named people, their targets, and what one action moved or removed."""

from __future__ import annotations

from pydantic import Field

from core.client.models.base import _Response


class Assigned(_Response):
    """`POST …/assignments`: texts newly given to the person, those they had, and their assignment now."""

    handle: str
    annotator: str
    assigned: int = 0
    already: int = 0
    total: int = 0


class Target(_Response):
    """A person's target: `count` texts labelled per UTC `day`, or in all (`total`)."""

    count: int
    period: str = "day"


class PersonWork(_Response):
    """One person's assignment and target: `remaining` texts of theirs not labelled yet; `progress` the
    share of the target reached (today's count or the total, by its period; None without a target)."""

    annotator: str
    assigned: int = 0
    labelled: int = 0
    remaining: int = 0
    target: Target | None = None
    labelled_today: int = 0
    labelled_total: int = 0
    progress: float | None = None


class Assignments(_Response):
    """`GET …/assignments`: each person's work, and whether queues go on to the shared pool."""

    handle: str
    shared_pool: bool = True
    people: list[PersonWork] = Field(default_factory=list)


class Reassigned(_Response):
    handle: str
    annotator: str
    to: str
    moved: int = 0


class Unassigned(_Response):
    handle: str
    annotator: str
    removed: int = 0
