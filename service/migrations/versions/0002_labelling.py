"""unlabelled pool of texts per model

Revision ID: 0002_labelling
Revises: 0001
Create Date: 2026-11-23

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0002_labelling"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "pool_texts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("model_id", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("content_sha256", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["model_id"], ["models.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("model_id", "content_sha256"),
    )
    with op.batch_alter_table("pool_texts", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_pool_texts_model_id"), ["model_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("pool_texts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_pool_texts_model_id"))
    op.drop_table("pool_texts")
