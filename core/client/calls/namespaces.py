"""The service, the calling key, a namespace's people and its audit log."""

from __future__ import annotations

from collections.abc import Iterator

from core.client.calls.base import ClientBase, _require_name
from core.client.models import (
    AuditEvent,
    AuditPage,
    KeyInfo,
    Member,
    MemberRemoved,
    SignedOut,
)
from core.client.paths import path as _path
from core.client.results import (
    Health,
)


class NamespaceCalls(ClientBase):
    def health(self) -> Health:
        return Health.model_validate(self._get("/health"))

    def current_key(self) -> KeyInfo:
        """The key this client sends: its scope and the namespaces it owns."""
        return KeyInfo.model_validate(self._get("/keys/current"))

    def sign_out(self) -> SignedOut:
        """End the signed-in person's sign-in in every tab and browser: the service refuses their ID tokens
        issued until now (`ForbiddenError` for a key: keys are revoked by the operator)."""
        return SignedOut.model_validate(self.request("POST", "/keys/current/sign-out").json())

    def list_people(self, namespace: str) -> list[Member]:
        """The namespace's members and their roles."""
        body = self._get(_path("namespaces", namespace, "people"))
        return [Member.model_validate(m) for m in body.get("items", [])]

    def set_person_role(self, namespace: str, member: str, role: str) -> Member:
        """Add `member` (an email, or a subject at the identity provider) to `namespace` with `role`, or
        change their role. `ConflictError` (`last_owner`) when it would demote the namespace's last owner."""
        _require_name(member, "email")
        path = _path("namespaces", namespace, "people", member.strip())
        return Member.model_validate(self.request("PUT", path, json={"role": role}).json())

    def remove_person(self, namespace: str, member: str) -> MemberRemoved:
        """Take `member` out of `namespace`; the labels they gave stay. `ConflictError` (`last_owner`)."""
        _require_name(member, "email")
        path = _path("namespaces", namespace, "people", member.strip())
        return MemberRemoved.model_validate(self.request("DELETE", path).json())

    def audit_page(self, namespace: str, limit: int | None = None, cursor: str | None = None) -> AuditPage:
        """A page of the namespace's audit log, newest first: settles, settling votes deleted, buffered labels
        withdrawn, role changes. The namespace's owners only (403 otherwise)."""
        body = self._get(_path("namespaces", namespace, "audit"), {"limit": limit, "cursor": cursor})
        return AuditPage.model_validate(body)

    def audit(self, namespace: str, page_size: int | None = None) -> Iterator[AuditEvent]:
        """Every event of the namespace's audit log, newest first."""
        return self._paginate(lambda cursor: self.audit_page(namespace, limit=page_size, cursor=cursor))
