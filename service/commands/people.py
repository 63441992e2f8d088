"""`people` and `audit`: who is in a namespace with what role, and the audit log as the operator reads it."""

from __future__ import annotations

import argparse
import sys

from core.contract import ROLES
from service.commands.options import add_storage_options, settings_of


def people_command(args: argparse.Namespace) -> int:
    """`people add | remove | list`: who is in a namespace, with what role (the operator's way to add a
    team's first owner; owners then manage people from the workbench or the API)."""
    from service.store.audit import OPERATOR
    from service.store.db import make_engine, make_session_factory, migrate, transaction
    from service.store.people import (
        NotAMember,
        list_members,
        member_namespaces,
        remove_member,
        set_member,
    )

    engine = make_engine(settings_of(args).database_url)
    migrate(engine)
    member: str = getattr(args, "email", None) or getattr(args, "subject", None) or ""
    try:
        with transaction(make_session_factory(engine)) as s:
            if args.people_command == "add":
                row, old = set_member(s, args.namespace, member, args.role, OPERATOR)
                change = "added" if old is None else f"was {old}"
                print(f"{row.member} is {row.role} in namespace {row.namespace} ({change})")
            elif args.people_command == "remove":
                role = remove_member(s, args.namespace, member, OPERATOR)
                print(f"{member} ({role}) removed from namespace {args.namespace}; their labels stay")
            else:
                namespaces = [args.namespace] if args.namespace else member_namespaces(s)
                for ns in namespaces:
                    for m in list_members(s, ns):
                        print("\t".join([m.namespace, m.member, m.role, m.display_name or ""]).rstrip("\t"))
    except (ValueError, NotAMember) as exc:  # a bad role or name, or the last owner (LastOwner)
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        engine.dispose()
    return 0


def audit_command(args: argparse.Namespace) -> int:
    """`audit [--namespace NS] [--limit N]`: the newest events, newest first, one JSON object a line; by
    default the service-wide stream (refused sign-in attempts, sign-ins of people in no namespace), which
    no API route serves."""
    import json

    from service.store.audit import SERVICE, latest
    from service.store.db import make_engine, make_session_factory, migrate, transaction

    engine = make_engine(settings_of(args).database_url)
    migrate(engine)
    try:
        with transaction(make_session_factory(engine)) as s:
            for e in latest(s, args.namespace or SERVICE, args.limit):
                event = {"id": e.id, "at": e.at.isoformat(), "namespace": e.namespace, "kind": e.kind}
                print(json.dumps({**event, "actor": e.actor, "handle": e.handle, "detail": e.detail}))
    finally:
        engine.dispose()
    return 0


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    people = sub.add_parser("people", help="people who sign in, and their role in a namespace")
    people_sub = people.add_subparsers(dest="people_command", required=True)
    for name, what in (
        ("add", "add someone to a namespace, or change their role"),
        ("remove", "take someone out"),
    ):
        p = people_sub.add_parser(name, help=what)
        p.add_argument("--namespace", required=True)
        who = p.add_mutually_exclusive_group(required=True)
        who.add_argument("--email", help="their email at the identity provider (their annotator name)")
        who.add_argument("--subject", help="their subject (`sub`) at the identity provider, instead")
        if name == "add":
            p.add_argument(
                "--role",
                required=True,
                choices=ROLES,
                help="annotator labels, reviewer also settles, owner also manages",
            )
        add_storage_options(p)
        p.set_defaults(func=people_command)
    p = people_sub.add_parser("list", help="members and roles, tab-separated")
    p.add_argument("--namespace", help="one namespace (default: every namespace with members)")
    add_storage_options(p)
    p.set_defaults(func=people_command)

    p = sub.add_parser("audit", help="read the audit log: the service-wide stream, or a namespace's")
    p.add_argument("--namespace", help="a namespace's log (default: the service-wide stream, `*`)")
    p.add_argument("--limit", type=int, default=100, help="the newest this many events (default 100)")
    add_storage_options(p)
    p.set_defaults(func=audit_command)
