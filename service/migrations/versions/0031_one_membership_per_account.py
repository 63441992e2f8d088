"""one membership per (namespace, account)

Revision ID: 0031_one_membership_per_account
Revises: 0030_sample_generator_model
Create Date: 2026-11-27

A person could hold two memberships in one namespace: one added by their email and one by their subject,
both bound to their account at sign-in. The unique index `uq_memberships_namespace_person` on
(`namespace`, `person_id`) forbids it from now on (unbound memberships, `person_id` null, are not counted:
NULLs are distinct in a unique index on both databases). Existing duplicates are merged first: the membership
with the strongest role stays (owner, then reviewer, then annotator; the oldest of equals), which is the role
the person already had (the service took the strongest), so nobody gains or loses a permission; each other
one is deleted and recorded in its namespace's audit log as the operator's `role_changed` to none, naming
the membership it was merged into.
"""

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

from core.contract import ROLES  # weakest first: the order the service ranks roles in

revision: str = "0031_one_membership_per_account"
down_revision: str | Sequence[str] | None = "0030_sample_generator_model"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEX = "uq_memberships_namespace_person"


def upgrade() -> None:
    bind = op.get_bind()
    if INDEX in {i["name"] for i in sa.inspect(bind).get_indexes("memberships")}:
        return
    memberships = sa.table(
        "memberships",
        sa.column("id", sa.Integer),
        sa.column("namespace", sa.String),
        sa.column("member", sa.String),
        sa.column("role", sa.String),
        sa.column("person_id", sa.Integer),
    )
    events = sa.table(
        "audit_events",
        sa.column("at", sa.DateTime(timezone=True)),
        sa.column("namespace", sa.String),
        sa.column("kind", sa.String),
        sa.column("actor", sa.String),
        sa.column("handle", sa.String),
        sa.column("detail", sa.JSON),
    )
    rows = bind.execute(
        sa.select(memberships).where(memberships.c.person_id.is_not(None)).order_by(memberships.c.id)
    ).all()
    groups: dict[tuple[str, int], list[sa.Row[tuple[int, str, str, str, int]]]] = {}
    for row in rows:
        groups.setdefault((row.namespace, row.person_id), []).append(row)
    now = datetime.now(UTC)
    for (namespace, _person), group in groups.items():
        if len(group) < 2:
            continue
        strength = {r.id: ROLES.index(r.role) if r.role in ROLES else -1 for r in group}
        kept = max(group, key=lambda r: (strength[r.id], -r.id))
        for gone in group:
            if gone.id == kept.id:
                continue
            bind.execute(sa.delete(memberships).where(memberships.c.id == gone.id))
            detail = {"member": gone.member, "from": gone.role, "to": None, "merged_into": kept.member}
            bind.execute(
                sa.insert(events).values(
                    at=now,
                    namespace=namespace,
                    kind="role_changed",
                    actor="operator",
                    handle=None,
                    detail=detail,
                )
            )
    op.create_index(INDEX, "memberships", ["namespace", "person_id"], unique=True)


def downgrade() -> None:
    op.drop_index(INDEX, "memberships")
