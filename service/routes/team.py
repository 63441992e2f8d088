"""GET /models/{h}/team: a labelling team's progress per person and trait; GET /models/{h}/votes: every
vote, paged, for an export (docs/api.md, "Team progress")."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request

from core.contract import MAX_CURSOR_CHARS, VOTES_PAGE
from service.domain import team, text_history
from service.http.auth import AuthoringKey, CtxDep
from service.http.heavy import heavy
from service.routes.common import errors
from service.schemas.team import TeamProgressOut, TextHistory, VotesPage

router = APIRouter(tags=["team"])


@router.get("/models/{handle}/team", response_model=TeamProgressOut, responses=errors(403, 404))
def get_team_progress(handle: str, who: AuthoringKey, ctx: CtxDep) -> TeamProgressOut:
    """Per person and trait: labels (today, UTC, and all), median seconds per decision, agreement with
    colleagues and with settled texts, and the texts still wanting votes."""
    return team.get_progress(ctx, who, handle)


@router.get("/models/{handle}/votes", response_model=VotesPage, responses=errors(400, 403, 404, 429))
def list_votes(
    handle: str,
    who: AuthoringKey,
    ctx: CtxDep,
    request: Request,
    limit: Annotated[int, Query(ge=1, le=VOTES_PAGE.maximum)] = VOTES_PAGE.default,
    cursor: Annotated[str | None, Query(max_length=MAX_CURSOR_CHARS)] = None,
) -> VotesPage:
    """Every vote of the model (samples, buffered feedback labels, unsure marks) with its annotator, time,
    provenance and the version it went into: an export, page by page."""
    with heavy(request, who):
        return team.list_votes(ctx, who, handle, limit, cursor)


@router.get(
    "/models/{handle}/labels/{label_id}/history", response_model=TextHistory, responses=errors(403, 404)
)
def get_text_history(handle: str, label_id: int, who: AuthoringKey, ctx: CtxDep) -> TextHistory:
    """Every vote of the text and trait of label `label_id` the caller may read: who voted, settled or
    marked it unsure, what and when (addition)."""
    return text_history.text_history(ctx, who, handle, label_id)
