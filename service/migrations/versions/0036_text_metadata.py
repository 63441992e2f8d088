"""text metadata and versioned guidelines

Revision ID: 0036_text_metadata
Revises: 0032_label_review
Create Date: 2026-11-27

`pool_texts.metadata` and `samples.metadata` (JSON, null): the extra columns an import keeps beside a text.
`guidelines_versions` (model, version_no, markdown, note, author, created_at): each save of a model's
labelling guidelines, and `guidelines_reads` (model, reader, version_no, read_at): the newest version each
person said they read.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0036_text_metadata"
down_revision: str | Sequence[str] | None = "0035_gold_items"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: The tables whose texts carry metadata.
WITH_METADATA = ("pool_texts", "samples")


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    for table in WITH_METADATA:
        if "metadata" not in {c["name"] for c in inspector.get_columns(table)}:
            op.add_column(table, sa.Column("metadata", sa.JSON(), nullable=True))
    if not inspector.has_table("guidelines_versions"):
        op.create_table(
            "guidelines_versions",
            sa.Column("id", sa.Integer(), primary_key=True),
            sa.Column(
                "model_id", sa.Integer(), sa.ForeignKey("models.id", ondelete="CASCADE"), nullable=False
            ),
            sa.Column("version_no", sa.Integer(), nullable=False),
            sa.Column("markdown", sa.Text(), nullable=False),
            sa.Column("note", sa.Text(), nullable=False),
            sa.Column("author", sa.String(length=64), nullable=False),
            sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
            sa.UniqueConstraint("model_id", "version_no"),
        )
        op.create_index("ix_guidelines_versions_model_id", "guidelines_versions", ["model_id"])
    if not inspector.has_table("guidelines_reads"):
        op.create_table(
            "guidelines_reads",
            sa.Column("id", sa.Integer(), primary_key=True),
            sa.Column(
                "model_id", sa.Integer(), sa.ForeignKey("models.id", ondelete="CASCADE"), nullable=False
            ),
            sa.Column("reader", sa.String(length=64), nullable=False),
            sa.Column("version_no", sa.Integer(), nullable=False),
            sa.Column("read_at", sa.DateTime(timezone=True), nullable=False),
            sa.UniqueConstraint("model_id", "reader"),
        )
        op.create_index("ix_guidelines_reads_model_id", "guidelines_reads", ["model_id"])


def downgrade() -> None:
    op.drop_index("ix_guidelines_reads_model_id", table_name="guidelines_reads")
    op.drop_table("guidelines_reads")
    op.drop_index("ix_guidelines_versions_model_id", table_name="guidelines_versions")
    op.drop_table("guidelines_versions")
    for table in WITH_METADATA:
        with op.batch_alter_table(table) as batch:
            batch.drop_column("metadata")
