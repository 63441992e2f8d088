"""a person is their account: memberships bound to it, a fixed annotator name, sessions that end

Revision ID: 0019_identity
Revises: 0018_people
Create Date: 2026-11-26

`memberships.person_id`: the account (people row) a membership belongs to, set once, when the first
account with the membership's email verified (or its subject) signs in; from then on only that account
has the role, whatever email it or another account later shows. `people.name`: the annotator name a
person's labels carry, fixed at their first sign-in (their verified email then). `people.signed_out_at`:
ID tokens issued at or before it are refused (sign-out, an idle timeout). `people.last_seen_at`: their
last accepted request, to the minute. Existing memberships start unbound: each binds at its member's next
sign-in under these rules.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019_identity"
down_revision: str | Sequence[str] | None = "0018_people"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    if "name" in {c["name"] for c in inspector.get_columns("people")}:
        return  # a database stamped back to an older revision has them already
    with op.batch_alter_table("people") as batch:
        batch.add_column(sa.Column("name", sa.String(64), nullable=True))
        batch.add_column(sa.Column("signed_out_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("last_seen_at", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("people") as batch:  # apart: SQLite's batch cannot order it with the columns
        batch.create_unique_constraint("uq_people_name", ["name"])
    with op.batch_alter_table("memberships") as batch:
        batch.add_column(sa.Column("person_id", sa.Integer(), nullable=True))
        batch.create_foreign_key("fk_memberships_person", "people", ["person_id"], ["id"])
        batch.create_index("ix_memberships_person_id", ["person_id"])


def downgrade() -> None:
    with op.batch_alter_table("memberships") as batch:
        batch.drop_index("ix_memberships_person_id")
        batch.drop_constraint("fk_memberships_person", type_="foreignkey")
        batch.drop_column("person_id")
    with op.batch_alter_table("people") as batch:
        batch.drop_constraint("uq_people_name", type_="unique")
        batch.drop_column("last_seen_at")
        batch.drop_column("signed_out_at")
        batch.drop_column("name")
