"""samples keep the id of their row in the file they came from (`source_id`), so an export joins back to it

Revision ID: 0012_source_id
Revises: 0011_neutral_counts
Create Date: 2026-12-10

Samples stored before have none (null). 200 characters: core.contract.MAX_SOURCE_ID_CHARS when this was
written (a migration keeps the number it was written with).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012_source_id"
down_revision: str | Sequence[str] | None = "0011_neutral_counts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # A database stamped back to an older revision already has the column.
    if "source_id" not in {c["name"] for c in sa.inspect(op.get_bind()).get_columns("samples")}:
        with op.batch_alter_table("samples", schema=None) as batch_op:
            batch_op.add_column(sa.Column("source_id", sa.String(length=200), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("samples", schema=None) as batch_op:
        batch_op.drop_column("source_id")
