"""GET /models/{h}/agreement: the annotators' agreement per trait, and the texts they disagree on most."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from core.contract import AGREEMENT_LIMIT, MAX_LABEL_CHARS
from service.domain import agreement
from service.http.auth import AuthoringKey, CtxDep
from service.routes.common import errors
from service.schemas.agreement import AgreementOut

router = APIRouter(tags=["samples"])


@router.get("/models/{handle}/agreement", response_model=AgreementOut, responses=errors(403, 404))
def get_agreement(
    handle: str,
    who: AuthoringKey,
    ctx: CtxDep,
    trait: Annotated[
        str | None, Query(max_length=MAX_LABEL_CHARS, description="a trait key or name; absent: all")
    ] = None,
    limit: Annotated[
        int, Query(ge=1, le=AGREEMENT_LIMIT.maximum, description="most disagreed texts listed per trait")
    ] = AGREEMENT_LIMIT.default,
) -> AgreementOut:
    """Per trait: Krippendorff's alpha (interval on quality, nominal on the pole), pairwise agreement of
    the annotators, and the most disagreed texts with their votes (docs/api.md, "Agreement")."""
    return agreement.get_agreement(ctx, who, handle, trait, limit)
