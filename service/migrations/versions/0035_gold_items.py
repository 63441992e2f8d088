"""gold items: texts with a known answer mixed into people's suggestions, and each person's answers

Revision ID: 0035_gold_items
Revises: 0032_label_review
Create Date: 2026-11-27

`models.gold_rate` (0: no gold mixed in) and `models.gold_threshold` (0.7): the owner's share of gold in each
suggestion and the accuracy under which a person is flagged. `gold_items` (a trait's text with its known
answer, unique per trait and content) and `gold_answers` (one person's first answer to one gold item, and
whether it matched): neither is a vote, so no reader of samples can take them in.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0035_gold_items"
down_revision: str | Sequence[str] | None = "0034_pool_assignments"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    have = {c["name"] for c in inspector.get_columns("models")}
    if "gold_rate" not in have:
        op.add_column("models", sa.Column("gold_rate", sa.Float(), nullable=False, server_default="0"))
    if "gold_threshold" not in have:
        op.add_column("models", sa.Column("gold_threshold", sa.Float(), nullable=False, server_default="0.7"))
    if not inspector.has_table("gold_items"):
        op.create_table(
            "gold_items",
            sa.Column("id", sa.Integer(), primary_key=True),
            sa.Column(
                "model_id", sa.Integer(), sa.ForeignKey("models.id", ondelete="CASCADE"), nullable=False
            ),
            sa.Column(
                "trait_id", sa.Integer(), sa.ForeignKey("traits.id", ondelete="CASCADE"), nullable=False
            ),
            sa.Column("text", sa.Text(), nullable=False),
            sa.Column("content_sha256", sa.String(length=64), nullable=False),
            sa.Column("quality", sa.Float(), nullable=False),
            sa.Column("origin", sa.String(length=16), nullable=False),
            sa.Column("added_by", sa.String(length=64), nullable=False),
            sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
            sa.UniqueConstraint("trait_id", "content_sha256", name="uq_gold_items_trait_content"),
        )
        op.create_index("ix_gold_items_model_id", "gold_items", ["model_id"])
    if not inspector.has_table("gold_answers"):
        op.create_table(
            "gold_answers",
            sa.Column("id", sa.Integer(), primary_key=True),
            sa.Column(
                "model_id", sa.Integer(), sa.ForeignKey("models.id", ondelete="CASCADE"), nullable=False
            ),
            sa.Column(
                "gold_id", sa.Integer(), sa.ForeignKey("gold_items.id", ondelete="CASCADE"), nullable=False
            ),
            sa.Column("annotator", sa.String(length=64), nullable=False),
            sa.Column("quality", sa.Float(), nullable=False),
            sa.Column("correct", sa.Boolean(), nullable=False),
            sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
            sa.UniqueConstraint("gold_id", "annotator", name="uq_gold_answers_gold_annotator"),
        )
        op.create_index("ix_gold_answers_model_id", "gold_answers", ["model_id"])


def downgrade() -> None:
    op.drop_table("gold_answers")
    op.drop_table("gold_items")
    with op.batch_alter_table("models") as batch_op:
        batch_op.drop_column("gold_threshold")
        batch_op.drop_column("gold_rate")
