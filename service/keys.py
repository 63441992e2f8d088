"""API keys: minted once, stored as a lookup prefix plus a salted SHA-256 hash."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.contract import NAMESPACE_RE, PUBLIC_NAMESPACE
from service.store.tables import ApiKey

SCOPES = ("authoring", "scoring")
KEY_RE = re.compile(r"\Ask_([0-9a-f]{12})_([A-Za-z0-9_-]{20,100})\Z")


@dataclass(frozen=True)
class Principal:
    key_id: int
    scope: str
    namespaces: frozenset[str]

    def owns(self, namespace: str) -> bool:
        return namespace in self.namespaces

    def can_read(self, namespace: str) -> bool:
        return namespace == PUBLIC_NAMESPACE or namespace in self.namespaces


def _hash(salt: str, secret: str) -> str:
    return hashlib.sha256(f"{salt}:{secret}".encode()).hexdigest()


def create_key(session: Session, namespaces: list[str], scope: str) -> str:
    """Store a new key and return it in clear (the only time it is ever visible)."""
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {', '.join(SCOPES)}")
    if not namespaces:
        raise ValueError("at least one namespace is needed")
    for ns in namespaces:
        if not NAMESPACE_RE.match(ns):
            raise ValueError(f"invalid namespace {ns!r}: lowercase letters, digits, '_' and '-'")
    prefix = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    salt = secrets.token_hex(16)
    session.add(
        ApiKey(
            prefix=prefix,
            salt=salt,
            key_hash=_hash(salt, secret),
            scope=scope,
            namespaces=sorted(set(namespaces)),
        )
    )
    return f"sk_{prefix}_{secret}"


def authenticate(session: Session, key: str) -> Principal | None:
    match = KEY_RE.match(key)
    if not match:
        return None
    prefix, secret = match.groups()
    row = session.scalar(select(ApiKey).where(ApiKey.prefix == prefix))
    if row is None or row.revoked_at is not None:
        return None
    if not hmac.compare_digest(row.key_hash, _hash(row.salt, secret)):
        return None
    return Principal(key_id=row.id, scope=row.scope, namespaces=frozenset(row.namespaces))
