"""`keys create | role | revoke`: the operator's API keys, each change in its namespaces' audit log."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from core.contract import DEFAULT_ROLE, ROLES
from service.commands.options import add_storage_options, settings_of

if TYPE_CHECKING:
    from datetime import datetime

    from sqlalchemy.orm import Session


def new_key(
    session: Session,
    namespaces: list[str],
    scope: str,
    name: str | None = None,
    role: str = DEFAULT_ROLE,
    expires_at: datetime | None = None,
) -> str:
    """A new key, recorded in each namespace's audit log as the operator's `key_created` (and an authoring
    key's `role_changed` to its role)."""
    from core.contract import annotator_of
    from service.store.api_keys import create_key
    from service.store.audit import OPERATOR, record

    key = create_key(session, namespaces, scope, name, role, expires_at)
    prefix = key.split("_")[1]
    created = {
        "key": prefix,
        "name": annotator_of(name, prefix),
        "scope": scope,
        "expires_at": expires_at.isoformat() if expires_at else None,
    }
    for ns in sorted(set(namespaces)):
        record(session, OPERATOR, "key_created", ns, None, created)
    if scope == "authoring":  # a role given is a role change, in each namespace's audit log
        detail = {"key": prefix, "name": annotator_of(name, prefix), "from": None, "to": role}
        for ns in sorted(set(namespaces)):
            record(session, OPERATOR, "role_changed", ns, None, detail)
    return key


def keys_create(args: argparse.Namespace) -> int:
    from datetime import timedelta

    from sqlalchemy.exc import IntegrityError

    from service.store.db import make_engine, make_session_factory, migrate, transaction
    from service.store.schema import utcnow

    settings = settings_of(args)
    engine = make_engine(settings.database_url)
    migrate(engine)
    try:
        with transaction(make_session_factory(engine)) as s:
            expires_at = None
            if args.expires_in_days is not None:
                if args.expires_in_days <= 0:
                    raise ValueError("--expires-in-days must be a positive number of days")
                expires_at = utcnow() + timedelta(days=args.expires_in_days)
            key = new_key(s, args.namespace, args.scope, args.name, args.role, expires_at)
    except IntegrityError:  # the same name created by another process at the same moment
        print(f"error: the name {args.name!r} is taken by another key: choose another", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        engine.dispose()
    named = f" named {args.name}" if args.name else ""
    role = f" ({args.role})" if args.scope == "authoring" else ""
    until = f", valid until {expires_at:%Y-%m-%d %H:%M} UTC" if expires_at else ""
    print(
        f"Created {args.scope} key{named}{role} for namespace(s) {', '.join(args.namespace)}{until}. "
        "It is shown only once:"
    )
    print(key)
    return 0


def keys_role(args: argparse.Namespace) -> int:
    from core.contract import annotator_of
    from service.store.api_keys import set_role
    from service.store.audit import OPERATOR, record
    from service.store.db import make_engine, make_session_factory, migrate, transaction

    engine = make_engine(settings_of(args).database_url)
    migrate(engine)
    try:
        with transaction(make_session_factory(engine)) as s:
            row, old = set_role(s, args.key, args.role)
            name = annotator_of(row.name, row.prefix)
            if old != args.role:
                detail = {"key": row.prefix, "name": name, "from": old, "to": args.role}
                for ns in sorted(row.namespaces):
                    record(s, OPERATOR, "role_changed", ns, None, detail)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        engine.dispose()
    if old == args.role:
        print(f"Key {name} is {old} already: nothing changed.")
    else:
        print(
            f"Key {name} is now {args.role} (was {old}) in namespace(s) {', '.join(sorted(row.namespaces))}."
        )
    return 0


def keys_revoke(args: argparse.Namespace) -> int:
    """`keys revoke NAME`: the key stops working at once (401 on its next request), recorded in its
    namespaces' audit logs; its votes keep its name."""
    from core.contract import annotator_of
    from service.store.api_keys import revoke_key
    from service.store.audit import OPERATOR, record
    from service.store.db import make_engine, make_session_factory, migrate, transaction

    engine = make_engine(settings_of(args).database_url)
    migrate(engine)
    try:
        with transaction(make_session_factory(engine)) as s:
            row = revoke_key(s, args.key)
            name = annotator_of(row.name, row.prefix)
            for ns in sorted(row.namespaces):
                record(s, OPERATOR, "key_revoked", ns, None, {"key": row.prefix, "name": name})
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        engine.dispose()
    print(f"Key {name} is revoked: it no longer works in namespace(s) {', '.join(sorted(row.namespaces))}.")
    return 0


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    keys = sub.add_parser("keys", help="API keys").add_subparsers(dest="keys_command", required=True)
    p = keys.add_parser("create", help="create a key and print it on the last line")
    p.add_argument("--namespace", action="append", required=True, help="namespace the key owns (repeatable)")
    p.add_argument("--scope", choices=("authoring", "scoring"), required=True)
    p.add_argument(
        "--name",
        help="the annotator name the key's labels carry (unique; default: key-<prefix>), e.g. alice",
    )
    p.add_argument(
        "--role",
        choices=ROLES,
        default=DEFAULT_ROLE,
        help="what an authoring key may do: annotator labels, reviewer also settles, owner also manages "
        f"(default: {DEFAULT_ROLE})",
    )
    p.add_argument(
        "--expires-in-days",
        type=float,
        help="the key stops working this many days from now (401 afterwards; default: never)",
    )
    add_storage_options(p)
    p.set_defaults(func=keys_create)
    p = keys.add_parser(
        "role", help="change an authoring key's role (recorded in its namespaces' audit logs)"
    )
    p.add_argument("key", help="the key's name, or its prefix (the part after sk_)")
    p.add_argument("--role", choices=ROLES, required=True)
    add_storage_options(p)
    p.set_defaults(func=keys_role)
    p = keys.add_parser("revoke", help="revoke a key: 401 from its next request (recorded in the audit log)")
    p.add_argument("key", help="the key's name, or its prefix (the part after sk_)")
    add_storage_options(p)
    p.set_defaults(func=keys_revoke)
