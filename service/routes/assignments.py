"""Assigned work: pool texts given to named people (`…/assignments`), moved from one to another, and their
targets (docs/api.md, "Assigned work")."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, status

from core.contract import ANNOTATOR_PATTERN, MAX_ANNOTATOR_CHARS
from service.domain import assignments
from service.http.auth import AuthoringKey, CtxDep
from service.routes.common import errors
from service.schemas.assignments import (
    Assigned,
    AssignIn,
    AssignmentsOut,
    Reassigned,
    ReassignIn,
    TargetIn,
    Unassigned,
)

router = APIRouter(tags=["assignments"])
Person = Annotated[
    str,
    Path(
        max_length=MAX_ANNOTATOR_CHARS,
        pattern=ANNOTATOR_PATTERN,
        description="a person's email or a key's name, as their labels carry it",
    ),
]
PERSON = "/models/{handle}/assignments/{annotator}"


@router.post(
    "/models/{handle}/assignments",
    status_code=status.HTTP_201_CREATED,
    response_model=Assigned,
    responses=errors(403, 404, 409),
)
def assign(handle: str, payload: AssignIn, who: AuthoringKey, ctx: CtxDep) -> Assigned:
    """Give pool texts to a person: these `ids`, or up to `count` texts matching `filter` that nobody has."""
    return assignments.assign(ctx, who, handle, payload)


@router.get("/models/{handle}/assignments", response_model=AssignmentsOut, responses=errors(403, 404))
def list_assignments(handle: str, who: AuthoringKey, ctx: CtxDep) -> AssignmentsOut:
    """Per person: texts assigned, labelled and remaining; their target and how far they are."""
    return assignments.list_assignments(ctx, who, handle)


@router.delete(PERSON, response_model=Unassigned, responses=errors(403, 404, 409, 422))
def unassign(handle: str, annotator: Person, who: AuthoringKey, ctx: CtxDep) -> Unassigned:
    """The person's texts not labelled yet leave their assignment."""
    return assignments.unassign(ctx, who, handle, annotator)


@router.post(PERSON + "/reassign", response_model=Reassigned, responses=errors(403, 404, 409, 422))
def reassign(
    handle: str, annotator: Person, payload: ReassignIn, who: AuthoringKey, ctx: CtxDep
) -> Reassigned:
    """The person's texts not labelled yet become another person's, in one action."""
    return assignments.reassign(ctx, who, handle, annotator, payload)


@router.put(PERSON + "/target", response_model=AssignmentsOut, responses=errors(403, 404, 409, 422))
def set_target(
    handle: str, annotator: Person, payload: TargetIn, who: AuthoringKey, ctx: CtxDep
) -> AssignmentsOut:
    """A person's target: texts per UTC day or in all (`count` null removes it)."""
    return assignments.set_target(ctx, who, handle, annotator, payload)
