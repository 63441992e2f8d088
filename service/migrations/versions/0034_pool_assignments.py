"""pool assignments: texts given to named people, their targets, and whether the shared pool follows

Revision ID: 0034_pool_assignments
Revises: 0032_label_review
Create Date: 2026-11-27

`pool_assignments` (model_id, pool_text_id, annotator, assigned_by, assigned_at; one row per text and person):
a person's queue serves them first. `label_targets` (model_id, annotator, count, period "day" or "total"): a
person's target. `models.shared_pool` (true): false keeps a person's queue to their assignment, so every
model made before serves the shared pool as it did.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0034_pool_assignments"
down_revision: str | Sequence[str] | None = "0033_trait_scales"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    if "shared_pool" not in {c["name"] for c in inspector.get_columns("models")}:
        op.add_column(
            "models", sa.Column("shared_pool", sa.Boolean(), nullable=False, server_default=sa.true())
        )
    if not inspector.has_table("pool_assignments"):
        op.create_table(
            "pool_assignments",
            sa.Column("id", sa.Integer(), primary_key=True),
            sa.Column(
                "model_id", sa.Integer(), sa.ForeignKey("models.id", ondelete="CASCADE"), nullable=False
            ),
            sa.Column(
                "pool_text_id",
                sa.Integer(),
                sa.ForeignKey("pool_texts.id", ondelete="CASCADE"),
                nullable=False,
            ),
            sa.Column("annotator", sa.String(length=64), nullable=False),
            sa.Column("assigned_by", sa.String(length=64), nullable=False),
            sa.Column("assigned_at", sa.DateTime(timezone=True), nullable=False),
            sa.UniqueConstraint("pool_text_id", "annotator"),
        )
        op.create_index("ix_pool_assignments_pool_text_id", "pool_assignments", ["pool_text_id"])
        op.create_index("ix_pool_assignments_model_annotator", "pool_assignments", ["model_id", "annotator"])
    if not inspector.has_table("label_targets"):
        op.create_table(
            "label_targets",
            sa.Column("id", sa.Integer(), primary_key=True),
            sa.Column(
                "model_id", sa.Integer(), sa.ForeignKey("models.id", ondelete="CASCADE"), nullable=False
            ),
            sa.Column("annotator", sa.String(length=64), nullable=False),
            sa.Column("count", sa.Integer(), nullable=False),
            sa.Column("period", sa.String(length=8), nullable=False),
            sa.UniqueConstraint("model_id", "annotator"),
        )


def downgrade() -> None:
    op.drop_table("label_targets")
    op.drop_index("ix_pool_assignments_model_annotator", table_name="pool_assignments")
    op.drop_index("ix_pool_assignments_pool_text_id", table_name="pool_assignments")
    op.drop_table("pool_assignments")
    with op.batch_alter_table("models") as batch:
        batch.drop_column("shared_pool")
