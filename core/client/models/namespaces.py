"""Who the caller is (`KeyInfo`), the people of a namespace and its audit log."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from core.client.models.base import Page, _Response
from core.contract import (
    DEFAULT_ROLE,
    Action,
    role_allows,
)
from core.json_types import JsonObject


class KeyInfo(_Response):
    """`GET /keys/current`: the calling key's scope and owned namespaces (never its secret)."""

    prefix: str
    scope: str
    namespaces: list[str] = Field(default_factory=list)
    created_at: datetime | None = None
    #: The annotator name the key's labels carry (its name, or `key-<prefix>`); None from older services.
    name: str | None = None
    #: `annotator`, `reviewer` or `owner` (core.contract.ROLES); None from services without roles (owner).
    role: str | None = None
    #: `key`, or `person`: someone signed in with an ID token of the team's identity provider.
    kind: str = "key"
    #: The role in each namespace (a person's may differ per namespace); empty from older services.
    roles: dict[str, str] = Field(default_factory=dict)
    #: What the caller may do besides reading (`label`, `review`, `manage`); empty for a scoring key and
    #: from older services.
    actions: list[str] = Field(default_factory=list)
    #: A person's email (their annotator name) and the name their identity provider gives.
    email: str | None = None
    display_name: str | None = None

    @property
    def can_author(self) -> bool:
        return self.scope == "authoring"

    @property
    def is_person(self) -> bool:
        return self.kind == "person"

    def role_in(self, namespace: str | None = None) -> str | None:
        """The role in `namespace` (None: the key's one role); None where the caller has none."""
        if namespace is not None and self.roles:
            return self.roles.get(namespace)
        return self.role or DEFAULT_ROLE

    def may(self, action: Action, namespace: str | None = None) -> bool:
        """Whether the caller may do `action` (in `namespace`, when given: a person's roles differ per
        namespace; a service without roles: an owner)."""
        role = self.role_in(namespace)
        return self.can_author and role is not None and role_allows(role, action)


class SignedOut(_Response):
    """`POST /keys/current/sign-out`: the instant at or before which the person's ID tokens are refused."""

    signed_out_at: datetime


class Member(_Response):
    """Someone in a namespace (`GET /namespaces/{ns}/people`): named by email or provider subject."""

    namespace: str
    member: str
    role: str
    email: str | None = None
    display_name: str | None = None
    signed_in: bool = False


class MemberRemoved(_Response):
    namespace: str
    member: str
    role: str
    removed: bool = True


class AuditEvent(_Response):
    """One event of a namespace's audit log: an irreversible or administrative action (a settle, a vote
    edited or deleted, a model's settings, traits, pool, evaluation set, tags or thresholds changed, a model
    deleted or purged, a run started, a role or key changed), a sign-in or sign-out, or a refused request
    (`kind`: core.contract.AUDIT_KINDS), by `actor`, on the model `handle` (None for a role change or a
    key)."""

    id: int
    at: datetime | None = None
    kind: str
    actor: str
    handle: str | None = None
    #: `trait`, `sample_id`/`feedback_id`, `quality`, the vote's `annotator`; or `key`, `name`, `from`, `to`.
    detail: JsonObject = Field(default_factory=dict)


class AuditPage(Page[AuditEvent]):
    """`GET /namespaces/{ns}/audit`: a page of the log, newest first."""

    namespace: str | None = None
