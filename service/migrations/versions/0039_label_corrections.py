"""label corrections: a reviewer's corrected quality beside the vote it corrects

Revision ID: 0039_label_corrections
Revises: 0038_label_ids
Create Date: 2026-11-28

`label_corrections`: one row per correction of a label (by its id, kept for life), with the quality before
and after, the reviewer and the time. The label row holds the corrected quality, so training and the votes
export need no change; this table keeps the original vote and who corrected it visible.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0039_label_corrections"
down_revision: str | Sequence[str] | None = "0038_label_ids"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if sa.inspect(op.get_bind()).has_table("label_corrections"):
        return
    op.create_table(
        "label_corrections",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("model_id", sa.Integer(), sa.ForeignKey("models.id", ondelete="CASCADE"), nullable=False),
        sa.Column("label_id", sa.Integer(), nullable=False),
        sa.Column("before", sa.Float(), nullable=False),
        sa.Column("after", sa.Float(), nullable=False),
        sa.Column("corrected_by", sa.String(length=64), nullable=False),
        sa.Column("comment", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_label_corrections_model_label", "label_corrections", ["model_id", "label_id"])


def downgrade() -> None:
    op.drop_table("label_corrections")
