"""The calling key's own metadata (`routes/keys_info.py`)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from core.contract import Action, KeyScope, Role


class KeyInfo(BaseModel):
    prefix: str = Field(description="The lookup part of the key (`sk_<prefix>_…`); safe to show")
    scope: KeyScope
    namespaces: list[str] = Field(description="Namespaces the key owns, sorted (`public` is readable by all)")
    created_at: datetime
    name: str = Field(
        description="The annotator name the key's labels carry: its name, or `key-<prefix>` when it has none"
    )
    role: Role = Field(
        description="What the key may do in its namespaces: `annotator` labels, `reviewer` also settles, "
        "`owner` also manages (docs/api.md, Roles)"
    )
    kind: Literal["key", "person"] = Field(
        default="key",
        description="`person`: someone signed in with an ID token of the team's identity provider",
    )
    roles: dict[str, Role] = Field(
        default_factory=dict,
        description="The caller's role in each of its namespaces (a person's may differ)",
    )
    actions: list[Action] = Field(
        default_factory=list,
        description="What the caller may do in its namespaces besides reading (`label`, `review`, `manage`: "
        "its role's); empty for a scoring key, which reads and scores only, whatever `role` says (addition)",
    )
    email: str | None = Field(
        default=None,
        description="A person's email as stored: their annotator name, `name` (the email their first "
        "verified sign-in gave), never the one a later token carries",
    )
    display_name: str | None = Field(
        default=None, description="A person's name, as the identity provider gave it"
    )


class SignedOut(BaseModel):
    signed_out_at: datetime = Field(
        description="Every ID token of this person issued at or before this instant is refused from now on: "
        "every tab and browser they signed in with, copied cookies included"
    )
