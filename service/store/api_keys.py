"""API keys: minted once, stored as a lookup prefix plus a salted SHA-256 hash."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import cast

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.contract import (
    ANNOTATOR_RE,
    DEFAULT_ROLE,
    NAMESPACE_RE,
    PUBLIC_NAMESPACE,
    ROLES,
    UNNAMED_KEY_PREFIX,
    Action,
    Role,
    annotator_of,
    role_allows,
)
from service.store.schema import ApiKey, Membership, Person, utcnow

SCOPES = ("authoring", "scoring")
KEY_RE = re.compile(r"\Ask_([0-9a-f]{12})_([A-Za-z0-9_-]{20,100})\Z")


@dataclass(frozen=True)
class Principal:
    key_id: int
    scope: str
    namespaces: frozenset[str]
    #: The name the key's labels carry: the key's name, or `key-<prefix>` (core.contract.annotator_of).
    annotator: str
    #: Its role in each namespace it belongs to (core.contract.ROLE_ACTIONS): a key has one role in all of
    #: them (a scoring key: owner, and its scope forbids every write); a person may differ per namespace.
    roles: Mapping[str, Role] = field(default_factory=dict)
    #: A person signed in through the identity provider (service/store/people.py): their row's id, and
    #: `key_id` is 0. None for a key.
    person_id: int | None = None
    #: A person's account and email, as the audit log records them: {"issuer", "subject", "email"}.
    account: Mapping[str, str | None] | None = None

    @property
    def is_person(self) -> bool:
        return self.person_id is not None

    def role_in(self, namespace: str) -> Role | None:
        return self.roles.get(namespace)

    def may(self, action: Action, namespace: str) -> bool:
        role = self.roles.get(namespace)
        return role is not None and role_allows(role, action)

    def owns(self, namespace: str) -> bool:
        return namespace in self.namespaces

    def can_read(self, namespace: str) -> bool:
        return namespace == PUBLIC_NAMESPACE or namespace in self.namespaces


def _hash(salt: str, secret: str) -> str:
    return hashlib.sha256(f"{salt}:{secret}".encode()).hexdigest()


class NameTaken(ValueError):
    """`keys create --name` with a name another key has."""


def check_key_name(name: str) -> None:
    if not ANNOTATOR_RE.match(name):
        raise ValueError(
            f"invalid name {name!r}: 1-64 characters, ASCII letters, digits, '.', '_', '@' and '-', "
            "starting with a letter or digit"
        )
    if name.startswith(UNNAMED_KEY_PREFIX):
        raise ValueError(f"invalid name {name!r}: '{UNNAMED_KEY_PREFIX}…' names the keys that have no name")


def create_key(
    session: Session,
    namespaces: list[str],
    scope: str,
    name: str | None = None,
    role: str = DEFAULT_ROLE,
    expires_at: datetime | None = None,
) -> str:
    """Store a new key and return it in clear (the only time it is ever visible). `name`: the annotator
    name its labels carry, unique in the service (NameTaken otherwise); `expires_at`: when it stops
    working (None: never)."""
    if name is not None:
        check_key_name(name)
        if session.scalar(select(ApiKey.id).where(ApiKey.name == name)) is not None:
            raise NameTaken(f"the name {name!r} is taken by another key: choose another")
        if session.scalar(select(Person.id).where(Person.name == name.lower())) is not None:
            raise NameTaken(f"the name {name!r} is a person's annotator name: choose another")
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {', '.join(SCOPES)}")
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}")
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
            name=name,
            role=role,
            expires_at=expires_at,
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
    if row.expires_at is not None and row.expires_at <= utcnow():
        return None
    if not hmac.compare_digest(row.key_hash, _hash(row.salt, secret)):
        return None
    return Principal(
        key_id=row.id,
        scope=row.scope,
        namespaces=frozenset(row.namespaces),
        annotator=annotator_of(row.name, row.prefix),
        roles=dict.fromkeys(row.namespaces, cast(Role, row.role)),
    )


def reserved_annotators(session: Session, who: Principal, names: set[str]) -> list[str]:
    """Those of `names` the caller may not label as: another key's name, any `key-…` name but the
    caller's own (those name the unnamed keys), or a person's email (a member's, or someone's who signed
    in). No one posts votes as a colleague."""
    names = names - {who.annotator}
    taken = {n for n in names if n.startswith(UNNAMED_KEY_PREFIX)}
    rest = names - taken
    if rest:
        taken |= set(
            session.scalars(select(ApiKey.name).where(ApiKey.name.in_(rest), ApiKey.id != who.key_id))
        )
        taken |= set(session.scalars(select(Membership.member).where(Membership.member.in_(rest))))
        for column in (Person.name, Person.email):
            people = select(column).where(column.in_(rest))
            if who.person_id is not None:
                people = people.where(Person.id != who.person_id)
            taken |= {e for e in session.scalars(people) if e}
    return sorted(taken)


def set_role(session: Session, key: str, role: str) -> tuple[ApiKey, str]:
    """Give the key named `key` (its name, or its prefix) the role `role`; returns the key's row and the
    role it had. ValueError for an unknown role, or no such key (revoked keys included: they do nothing)."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}")
    row = session.scalar(
        select(ApiKey).where((ApiKey.name == key) | (ApiKey.prefix == key), ApiKey.revoked_at.is_(None))
    )
    if row is None:
        raise ValueError(f"no key named {key!r} (give a key's name or its prefix, the part after sk_)")
    if row.scope != "authoring":
        raise ValueError(f"key {key!r} is a scoring key: it reads and scores only, whatever its role")
    old, row.role = row.role, role
    return row, old


def revoke_key(session: Session, key: str) -> ApiKey:
    """Revoke the key named `key` (its name, or its prefix): from now on it gets 401 like an unknown key.
    Its row stays (its votes keep their name; the name stays taken). ValueError: no such live key."""
    row = session.scalar(
        select(ApiKey).where((ApiKey.name == key) | (ApiKey.prefix == key), ApiKey.revoked_at.is_(None))
    )
    if row is None:
        raise ValueError(f"no live key named {key!r} (give a key's name or its prefix, the part after sk_)")
    row.revoked_at = utcnow()
    return row
