"""People who sign in through the team's identity provider, and their roles in each namespace.

A person is their account at the provider, (issuer, subject); their email is shown to people and never
matched again once it has bound them. A membership names someone by email (lowercased) or by subject, so an
owner can add someone who has never signed in; the first account that signs in with that email verified (or
that subject) is bound to it, and from then on only that account has the role. A person's annotator name is
their verified email at their first sign-in, fixed then. Who a verified ID token is, and what it may do, is
decided here: `person_principal`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

from sqlalchemy import Select, func, select, update
from sqlalchemy.orm import Session

from core.contract import ANNOTATOR_RE, MEMBER_RE, NAMESPACE_RE, ROLES, UNNAMED_KEY_PREFIX, Role
from service.store.api_keys import Principal
from service.store.audit import AUTOMATIC_ACTOR, record
from service.store.schema import ApiKey, Membership, Person, utcnow

#: A person's `key_id`: no key row has it (ids start at 1), so nothing of a key is ever found for a person.
NO_KEY_ID = 0


class LastOwner(ValueError):
    """The change would leave a namespace that has an owner without any."""


class SameAccount(ValueError):
    """A new membership for an account that has one in the namespace already (under another name)."""


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
    """What a verified ID token says about its person. The account is (issuer, subject); the email is only
    an attribute, used to bind a membership added by email to the first account that shows it verified."""

    issuer: str
    subject: str
    email: str | None  # None: no email, or one the provider has not verified
    display_name: str | None


class NoAnnotatorName(ValueError):
    """The account has no name it may label under: no verified email, or one a key or another account has."""


def identity_of(issuer: str, claims: Mapping[str, object], emails_verified: bool = False) -> Identity:
    """The person a verified token's claims describe. An email counts only when verified: `email_verified`
    true, or absent from a provider the operator marks as verifying every email it sends
    (`SCORING_OIDC_EMAILS_VERIFIED`; docs/deployment-team.md, "Security model")."""
    subject = str(claims.get("sub") or "")
    email = claims.get("email")
    flag = claims.get("email_verified")
    verified = flag is True or flag == "true" or (flag is None and emails_verified)
    name = claims.get("name") or claims.get("preferred_username")
    return Identity(
        issuer=issuer,
        subject=subject,
        email=email.strip().lower() if isinstance(email, str) and email.strip() and verified else None,
        display_name=str(name)[:255] if name else None,
    )


def account_of(who: Identity) -> dict[str, str | None]:
    """The account and email, as the audit log records a person's actions."""
    return {"issuer": who.issuer, "subject": who.subject, "email": who.email}


def _name_for(session: Session, row: Person, who: Identity) -> str:
    """The annotator name a new account gets: its verified email, unless that is not an email, is an API
    key's name, or is another account's name (their votes would mix)."""
    email = who.email
    usable = email is not None and "@" in email and ANNOTATOR_RE.match(email) is not None
    if email is None or not usable or email.startswith(UNNAMED_KEY_PREFIX):
        raise NoAnnotatorName(
            "The identity provider's token carries no verified email the service can use as your annotator "
            "name: ask the operator to have the provider send a verified `email` claim (scope `email`)."
        )
    if session.scalar(select(ApiKey.id).where(func.lower(ApiKey.name) == email)) is not None:
        raise NoAnnotatorName(f"{email!r} is the name of an API key here, so no person's: ask the operator.")
    other = select(Person.id).where(Person.name == email, Person.id != row.id)
    if session.scalar(other) is not None:
        raise NoAnnotatorName(
            f"Another account already labels as {email!r} here: an email moves no one's votes or roles. "
            "Sign in with the account you used before, or ask the operator."
        )
    return email


def find_person(session: Session, who: Identity) -> Person | None:
    return session.scalar(select(Person).where(Person.issuer == who.issuer, Person.subject == who.subject))


def _unbound(who: Identity) -> Select[tuple[int]]:
    """Memberships no account has yet that this one may bind: named by its verified email, or its subject."""
    return select(Membership.id).where(Membership.person_id.is_(None), Membership.member.in_(members_of(who)))


def needs_record(session: Session, row: Person | None, who: Identity) -> bool:
    """Whether the person's row must be written (first sign-in, a changed email or name, no annotator name
    yet, or a membership waiting for them): most requests only read, so signing in costs no write."""
    if row is None or row.name is None or (row.email, row.display_name) != (who.email, who.display_name):
        return True
    return session.scalar(_unbound(who).limit(1)) is not None


def record_person(session: Session, who: Identity) -> Person:
    """Record the account's sign-in: its row (email and name shown to people), its annotator name at the
    first sign-in, and the memberships it binds (those waiting for its verified email or its subject, that
    no other account has bound). NoAnnotatorName when it has no name it may label under."""
    row = find_person(session, who)
    if row is None:
        row = Person(issuer=who.issuer, subject=who.subject)
        session.add(row)
        session.flush()
    row.email, row.display_name = who.email, who.display_name
    if row.name is None:
        row.name = _name_for(session, row, who)
    _bind(session, row, who)
    session.flush()
    return row


def _strength(role: str) -> int:
    return ROLES.index(role) if role in ROLES else -1


def _bind(session: Session, row: Person, who: Identity) -> None:
    """Bind the memberships waiting for this account, one per namespace (the unique index on namespace and
    account holds it): where it has one already, or two wait (one by email, one by subject), the strongest
    role stays on one membership and the other is merged into it (deleted, and recorded)."""
    held = {m.namespace: m for m in session.scalars(select(Membership).where(Membership.person_id == row.id))}
    waiting = session.scalars(
        select(Membership).where(Membership.id.in_(_unbound(who).scalar_subquery())).order_by(Membership.id)
    ).all()
    for m in waiting:
        kept = held.get(m.namespace)
        if kept is None:
            # `person_id IS NULL` in the update itself: of two accounts signing in at once, one binds.
            won = session.execute(
                update(Membership)
                .where(Membership.id == m.id, Membership.person_id.is_(None))
                .values(person_id=row.id)
                .execution_options(synchronize_session=False)
            )
            if getattr(won, "rowcount", 0):
                session.refresh(m)
                held[m.namespace] = m
            continue
        if _strength(m.role) > _strength(kept.role):
            old = cast(Role, kept.role)
            kept.role, kept.updated_at = m.role, utcnow()
            role_changed(session, AUTOMATIC_ACTOR, m.namespace, kept.member, old, cast(Role, m.role))
        detail = {"member": m.member, "from": m.role, "to": None, "merged_into": kept.member}
        record(session, AUTOMATIC_ACTOR, "role_changed", m.namespace, None, detail)
        session.delete(m)


def members_of(who: Identity) -> list[str]:
    """The member names an unbound membership may give this person: their verified email, their subject."""
    return [m for m in (who.email, who.subject) if m]


def roles_of(session: Session, row: Person) -> dict[str, Role]:
    """The account's role in each namespace: the memberships bound to it (one per namespace)."""
    roles: dict[str, Role] = {}
    rows = session.execute(
        select(Membership.namespace, Membership.role).where(Membership.person_id == row.id)
    )
    for namespace, role in rows:
        if role in ROLES and (namespace not in roles or ROLES.index(role) > ROLES.index(roles[namespace])):
            roles[namespace] = cast(Role, role)
    return roles


def person_principal(session: Session, row: Person, who: Identity) -> Principal:
    """A signed-in person as the service's caller: authoring scope, their namespaces and per-namespace
    roles. No membership: no namespace (service.http.guard answers 403 to all but `GET /keys/current`)."""
    assert row.name is not None  # record_person gives it before any principal is made
    roles = roles_of(session, row)
    return Principal(
        key_id=NO_KEY_ID,
        scope="authoring",
        namespaces=frozenset(roles),
        annotator=row.name,
        roles=roles,
        person_id=row.id,
        account=account_of(who),
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
    ids = [r.person_id for r in rows if r.person_id is not None]
    known = {p.id: p for p in session.scalars(select(Person).where(Person.id.in_(ids)))}
    out = []
    for r in rows:
        person = known.get(r.person_id) if r.person_id is not None else None
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


def _account_for(session: Session, member: str) -> int | None:
    """The account a new membership by `member` belongs to at once: the one that labels under that email,
    else the first that signed in with it verified, else the one with that subject; None: whoever signs in
    first with it (record_person)."""
    for column in (Person.name, Person.email, Person.subject):
        found = session.scalar(select(Person.id).where(column == member).order_by(Person.id).limit(1))
        if found is not None:
            return found
    return None


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
    session: Session, actor: Principal | str, namespace: str, member: str, old: Role | None, new: Role | None
) -> None:
    """The one place a change of someone's role in a namespace is recorded: the audit log's `role_changed`,
    in the change's own transaction (`from` None: added; `to` None: removed). `actor`: the caller's
    annotator name, or the command line's OPERATOR."""
    record(session, actor, "role_changed", namespace, None, {"member": member, "from": old, "to": new})


def set_member(
    session: Session, namespace: str, member: str, role: str, actor: Principal | str
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
        if session.scalar(select(ApiKey.id).where(func.lower(ApiKey.name) == member.lower())) is not None:
            raise ValueError(f"invalid member {member!r}: the name of an API key, so no person's")
        person_id = _account_for(session, member)
        same = next((r for r in rows if person_id is not None and r.person_id == person_id), None)
        if same is not None:  # one membership per account and namespace: its role is changed there
            raise SameAccount(
                f"{member!r} is the account of member {same.member!r} of namespace {namespace!r}: "
                f"change that membership's role instead"
            )
        row = Membership(namespace=namespace, member=member, role=new_role, person_id=person_id)
        session.add(row)
    else:
        old = cast(Role, row.role)
        row.role, row.updated_at = new_role, utcnow()
    _guard_owners(session, namespace, before)
    if old != new_role:
        role_changed(session, actor, namespace, member, old, new_role)
    found = next(m for m in list_members(session, namespace) if m.member == member)
    return found, old


def remove_member(session: Session, namespace: str, member: str, actor: Principal | str) -> Role:
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
