"""per-model embedder chosen at create time

Revision ID: 0004_zeroshot2
Revises: 0003_evaluation
Create Date: 2026-11-23

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004_zeroshot2"
down_revision: str | Sequence[str] | None = "0003_evaluation"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Nullable, no default: models created before keep NULL, which means the service's default embedder.
    with op.batch_alter_table("models", schema=None) as batch_op:
        batch_op.add_column(sa.Column("embedder", sa.String(length=100), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("models", schema=None) as batch_op:
        batch_op.drop_column("embedder")
