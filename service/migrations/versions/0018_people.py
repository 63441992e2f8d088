"""people who sign in through the team's identity provider, and their role in each namespace

Revision ID: 0018_people
Revises: 0017_unsure_and_comments
Create Date: 2026-11-25

`people`: one row per (issuer, subject) that has signed in, with the email and name the provider gave.
`memberships`: (namespace, member, role), the member an email (lowercased) or a provider subject. Nothing
before this revision changes: keys keep working as they did.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018_people"
down_revision: str | Sequence[str] | None = "0017_unsure_and_comments"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    have = set(sa.inspect(op.get_bind()).get_table_names())
    if "people" not in have:  # a database stamped back to an older revision has them already
        op.create_table(
            "people",
            sa.Column("id", sa.Integer(), primary_key=True),
            sa.Column("issuer", sa.String(255), nullable=False),
            sa.Column("subject", sa.String(255), nullable=False),
            sa.Column("email", sa.String(255), nullable=True),
            sa.Column("display_name", sa.String(255), nullable=True),
            sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
            sa.UniqueConstraint("issuer", "subject", name="uq_people_issuer_subject"),
        )
        op.create_index("ix_people_email", "people", ["email"])
    if "memberships" not in have:
        op.create_table(
            "memberships",
            sa.Column("id", sa.Integer(), primary_key=True),
            sa.Column("namespace", sa.String(64), nullable=False),
            sa.Column("member", sa.String(255), nullable=False),
            sa.Column("role", sa.String(16), nullable=False),
            sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
            sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
            sa.UniqueConstraint("namespace", "member", name="uq_memberships_namespace_member"),
        )
        op.create_index("ix_memberships_namespace", "memberships", ["namespace"])
        op.create_index("ix_memberships_member", "memberships", ["member"])


def downgrade() -> None:
    op.drop_table("memberships")
    op.drop_table("people")
