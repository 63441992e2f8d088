"""People who sign in through the team's identity provider, and their roles in each namespace.

A person is known by the provider's (issuer, subject); their annotator name is their email. A membership
names them by email (lowercased) or by subject, so an owner can add someone who has never signed in. Who a
verified ID token is, and what it may do, is decided here: `person_principal`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from core.contract import ANNOTATOR_RE, MEMBER_RE, NAMESPACE_RE, ROLES, Role
from service.store.api_keys import Principal
from service.store.audit import record
from service.store.tables import ApiKey, Membership, Person, utcnow

#: A person's `key_id`: no key row has it (ids start at 1), so nothing of a key is ever found for a person.
NO_KEY_ID = 0


class LastOwner(ValueError):
    """The change would leave a namespace that has an owner without any."""


class NotAMember(LookupError):
    """No membership of that member in that namespace."""


def normal_member(member: str) -> str:
    """The stored form of a member: an email lowercased (providers differ in case), a subject as given.
    ValueError for anything else."""
    member = member.strip()
    if not MEMBER_RE.match(member):
        raise ValueError(
            f"invalid member {member!r}: an email (their annotator name: 1-64 ASCII letters, digits, '.', "
            "'_', '@' and '-'), or the person's subject at the identity provider"
        )
    return member.lower() if "@" in member else member


def check_namespace(namespace: str) -> None:
    if not NAMESPACE_RE.match(namespace):
        raise ValueError(f"invalid namespace {namespace!r}: lowercase letters, digits, '_' and '-'")


def check_role(role: str) -> Role:
    for known in ROLES:
        if role == known:
            return known
    raise ValueError(f"unknown role {role!r}: one of {', '.join(ROLES)}")


@dataclass(frozen=True)
class Identity:
    """What a verified ID token says about its person."""

    issuer: str
    subject: str
    email: str | None  # None: no email, or one the provider says it has not verified
    display_name: str | None


class NoAnnotatorName(ValueError):
    """The token carries neither an email nor a subject that can be an annotator name."""


def identity_of(issuer: str, claims: Mapping[str, object]) -> Identity:
    """The person a verified token's claims describe. An email counts unless `email_verified` is false
    (several providers leave the claim out altogether, and only an issuer the operator trusts is accepted)."""
    subject = str(claims.get("sub") or "")
    email = claims.get("email")
    verified = claims.get("email_verified", True) not in (False, "false")
    name = claims.get("name") or claims.get("preferred_username")
    return Identity(
        issuer=issuer,
        subject=subject,
        email=email.strip().lower() if isinstance(email, str) and email.strip() and verified else None,
        display_name=str(name)[:255] if name else None,
    )


def annotator_name(who: Identity) -> str:
    """The name a person's labels carry: their email, else their subject when it can be one."""
    for name in (who.email, who.subject):
        if name and ANNOTATOR_RE.match(name):
            return name
    raise NoAnnotatorName(
        "The identity provider's token carries no email the service can use as an annotator name: ask the "
        "operator to have the provider send a verified `email` claim (scope `email`)."
    )


def find_person(session: Session, who: Identity) -> Person | None:
    return session.scalar(select(Person).where(Person.issuer == who.issuer, Person.subject == who.subject))


def needs_record(row: Person | None, who: Identity) -> bool:
    """Whether the person's row must be written (first sign-in, or a changed email or name): most requests
    only read, so signing in costs no write transaction."""
    return row is None or (row.email, row.display_name) != (who.email, who.display_name)


def record_person(session: Session, who: Identity) -> Person:
    row = find_person(session, who)
    if row is None:
        row = Person(issuer=who.issuer, subject=who.subject)
        session.add(row)
    row.email, row.display_name = who.email, who.display_name
    session.flush()
    return row


def members_of(who: Identity) -> list[str]:
    """The member names a membership may give this person: their email and their subject."""
    return [m for m in (who.email, who.subject) if m]


def roles_of(session: Session, who: Identity) -> dict[str, Role]:
    """The person's role in each namespace. Named both by email and by subject in one namespace: the higher
    role counts."""
    roles: dict[str, Role] = {}
    rows = session.execute(
        select(Membership.namespace, Membership.role).where(Membership.member.in_(members_of(who)))
    )
    for namespace, role in rows:
        if role in ROLES and (namespace not in roles or ROLES.index(role) > ROLES.index(roles[namespace])):
            roles[namespace] = cast(Role, role)
    return roles


def person_principal(session: Session, row: Person, who: Identity) -> Principal:
    """A signed-in person as the service's caller: authoring scope, their namespaces and per-namespace
    roles. No membership: no namespace (service.http.guard answers 403 to all but `GET /keys/current`)."""
    roles = roles_of(session, who)
    return Principal(
        key_id=NO_KEY_ID,
        scope="authoring",
        namespaces=frozenset(roles),
        annotator=annotator_name(who),
        roles=roles,
        person_id=row.id,
    )


# -- memberships: who is in a namespace, with what role ------------------------------------------------------


@dataclass(frozen=True)
class MemberRow:
    namespace: str
    member: str
    role: Role
    #: From the person's last sign-in, when they have signed in (matched by email or subject).
    display_name: str | None
    email: str | None
    signed_in: bool


def list_members(session: Session, namespace: str) -> list[MemberRow]:
    rows = session.scalars(
        select(Membership).where(Membership.namespace == namespace).order_by(Membership.member)
    ).all()
    names = [r.member for r in rows]
    people = session.scalars(select(Person).where(or_(Person.email.in_(names), Person.subject.in_(names))))
    known: dict[str, Person] = {}
    for p in people:
        for name in (p.email, p.subject):
            if name:
                known.setdefault(name, p)
    out = []
    for r in rows:
        person = known.get(r.member)
        out.append(
            MemberRow(
                namespace=r.namespace,
                member=r.member,
                role=cast(Role, r.role),
                display_name=person.display_name if person else None,
                email=person.email if person else (r.member if "@" in r.member else None),
                signed_in=person is not None,
            )
        )
    return out


def member_namespaces(session: Session) -> list[str]:
    return sorted(set(session.scalars(select(Membership.namespace))))


def _owners(session: Session, namespace: str) -> int:
    """The namespace's owners: owner memberships, and live authoring keys with the owner role."""
    people = session.scalars(
        select(Membership.id).where(Membership.namespace == namespace, Membership.role == "owner")
    ).all()
    keys = session.scalars(
        select(ApiKey).where(ApiKey.revoked_at.is_(None), ApiKey.scope == "authoring", ApiKey.role == "owner")
    ).all()
    return len(people) + sum(1 for k in keys if namespace in k.namespaces)


def _guard_owners(session: Session, namespace: str, before: int) -> None:
    session.flush()
    if before > 0 and _owners(session, namespace) == 0:
        raise LastOwner(f"namespace {namespace!r} would have no owner left: make someone else an owner first")


def role_changed(
    session: Session, actor: str, namespace: str, member: str, old: Role | None, new: Role | None
) -> None:
    """The one place a change of someone's role in a namespace is recorded: the audit log's `role_changed`,
    in the change's own transaction (`from` None: added; `to` None: removed). `actor`: the caller's
    annotator name, or the command line's OPERATOR."""
    record(session, actor, "role_changed", namespace, None, {"member": member, "from": old, "to": new})


def set_member(
    session: Session, namespace: str, member: str, role: str, actor: str
) -> tuple[MemberRow, Role | None]:
    """Add `member` to `namespace` with `role`, or change their role. Returns the membership and the role
    before (None: newly added). LastOwner when it demotes the namespace's last owner (nothing changed then:
    the caller's transaction rolls back)."""
    check_namespace(namespace)
    member, new_role = normal_member(member), check_role(role)
    # Lock the namespace's memberships (PostgreSQL) so two demotions cannot each see the other owner.
    rows = session.scalars(
        select(Membership).where(Membership.namespace == namespace).with_for_update()
    ).all()
    row = next((r for r in rows if r.member == member), None)
    before = _owners(session, namespace)
    old: Role | None = None
    if row is None:
        row = Membership(namespace=namespace, member=member, role=new_role)
        session.add(row)
    else:
        old = cast(Role, row.role)
        row.role, row.updated_at = new_role, utcnow()
    _guard_owners(session, namespace, before)
    if old != new_role:
        role_changed(session, actor, namespace, member, old, new_role)
    found = next(m for m in list_members(session, namespace) if m.member == member)
    return found, old


def remove_member(session: Session, namespace: str, member: str, actor: str) -> Role:
    """Take `member` out of `namespace`; returns the role they had. NotAMember, or LastOwner (nothing
    changed). Their person row and the labels they gave stay."""
    check_namespace(namespace)
    member = normal_member(member)
    rows = session.scalars(
        select(Membership).where(Membership.namespace == namespace).with_for_update()
    ).all()
    row = next((r for r in rows if r.member == member), None)
    if row is None:
        raise NotAMember(f"{member!r} is not a member of namespace {namespace!r}")
    before = _owners(session, namespace)
    role = cast(Role, row.role)
    session.delete(row)
    _guard_owners(session, namespace, before)
    role_changed(session, actor, namespace, member, role, None)
    return role
