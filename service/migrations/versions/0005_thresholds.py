"""per-trait decision thresholds stored with each version

Revision ID: 0005_thresholds
Revises: 0004_zeroshot2
Create Date: 2026-11-23

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_thresholds"
down_revision: str | Sequence[str] | None = "0004_zeroshot2"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("versions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("thresholds", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("versions", schema=None) as batch_op:
        batch_op.drop_column("thresholds")
