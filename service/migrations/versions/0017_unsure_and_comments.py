"""unsure marks and comments on texts: what an annotator was unsure of, and notes for reviewers

Revision ID: 0017_unsure_and_comments
Revises: 0016_claims_and_campaign
Create Date: 2026-11-25

Two new tables, never read by training: `unsure_marks` (a person's "unsure" on a text of a trait, one per
person, trait and text) and `text_comments`. Nothing stored before changes.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017_unsure_and_comments"
down_revision: str | Sequence[str] | None = "0016_claims_and_campaign"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    tables = sa.inspect(op.get_bind()).get_table_names()  # stamped back to an older revision: keep them
    if "unsure_marks" not in tables:
        op.create_table(
            "unsure_marks",
            sa.Column("id", sa.Integer(), nullable=False),
            sa.Column(
                "model_id", sa.Integer(), sa.ForeignKey("models.id", ondelete="CASCADE"), nullable=False
            ),
            sa.Column(
                "trait_id", sa.Integer(), sa.ForeignKey("traits.id", ondelete="CASCADE"), nullable=False
            ),
            sa.Column("text", sa.Text(), nullable=False),
            sa.Column("content_sha256", sa.String(64), nullable=False),
            sa.Column("annotator", sa.String(64), nullable=False),
            sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
            sa.PrimaryKeyConstraint("id"),
            sa.UniqueConstraint("trait_id", "content_sha256", "annotator"),
        )
        op.create_index("ix_unsure_marks_model_id", "unsure_marks", ["model_id"])
    if "text_comments" not in tables:
        op.create_table(
            "text_comments",
            sa.Column("id", sa.Integer(), nullable=False),
            sa.Column(
                "model_id", sa.Integer(), sa.ForeignKey("models.id", ondelete="CASCADE"), nullable=False
            ),
            sa.Column(
                "trait_id", sa.Integer(), sa.ForeignKey("traits.id", ondelete="CASCADE"), nullable=False
            ),
            sa.Column("text", sa.Text(), nullable=False),
            sa.Column("content_sha256", sa.String(64), nullable=False),
            sa.Column("author", sa.String(64), nullable=False),
            sa.Column("body", sa.Text(), nullable=False),
            sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
            sa.PrimaryKeyConstraint("id"),
        )
        op.create_index("ix_text_comments_model_id", "text_comments", ["model_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_text_comments_model_id", "text_comments")
    op.drop_table("text_comments")
    op.drop_index("ix_unsure_marks_model_id", "unsure_marks")
    op.drop_table("unsure_marks")
