"""the audit log: settles, withdrawn buffered labels and role changes; samples may be `imported`

Revision ID: 0015_audit_and_provenance
Revises: 0014_key_roles
Create Date: 2026-11-25

`audit_events` is new (nothing before it was recorded). Provenance `imported` needs no change of the schema:
`samples.provenance` is a string, and rows stored before keep what they say (`authored`).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015_audit_and_provenance"
down_revision: str | Sequence[str] | None = "0014_key_roles"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if "audit_events" in sa.inspect(op.get_bind()).get_table_names():  # stamped back to an older revision
        return
    op.create_table(
        "audit_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("namespace", sa.String(63), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("actor", sa.String(64), nullable=False),
        sa.Column("handle", sa.String(127), nullable=True),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_audit_events_namespace_id", "audit_events", ["namespace", "id"])


def downgrade() -> None:
    op.drop_index("ix_audit_events_namespace_id", "audit_events")
    op.drop_table("audit_events")
