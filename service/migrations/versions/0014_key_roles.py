"""keys carry a role: annotator, reviewer or owner

Revision ID: 0014_key_roles
Revises: 0013_heldout
Create Date: 2026-11-25

Every key from before roles could do everything in its namespaces: it stays an owner (the server default).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014_key_roles"
down_revision: str | Sequence[str] | None = "0013_heldout"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    have = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("api_keys")}
    if "role" not in have:  # a database stamped back to an older revision has it already
        with op.batch_alter_table("api_keys", schema=None) as batch_op:
            batch_op.add_column(sa.Column("role", sa.String(16), nullable=False, server_default="owner"))


def downgrade() -> None:
    with op.batch_alter_table("api_keys", schema=None) as batch_op:
        batch_op.drop_column("role")
