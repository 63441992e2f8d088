"""People in a namespace and their roles (`routes/people.py`; docs/api.md, "People")."""

from __future__ import annotations

from pydantic import BaseModel, Field

from core.contract import Role
from service.schemas.common import Strict


class MemberIn(Strict):
    role: Role = Field(description="`annotator` labels, `reviewer` also settles, `owner` also manages")


class MemberOut(BaseModel):
    namespace: str
    member: str = Field(description="The email (lowercased) or the provider subject the membership names")
    role: Role
    email: str | None = Field(
        default=None, description="The person's email (their annotator name), when known"
    )
    display_name: str | None = Field(
        default=None, description="The name the provider gave at their last sign-in"
    )
    signed_in: bool = Field(description="Whether they have signed in here at least once")


class MemberPage(BaseModel):
    items: list[MemberOut]


class MemberRemoved(BaseModel):
    namespace: str
    member: str
    role: Role = Field(description="The role they had")
    removed: bool = True
