"""run_shards: a training's embedding split across the worker processes

Revision ID: 0008_run_shards
Revises: 0007_import_indexes
Create Date: 2026-11-24

A training of many texts embeds them in shards that every worker may claim (service/runs/shards.py); a row
holds a shard's claim, progress and, once done, its vectors until the run ends.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008_run_shards"
down_revision: str | Sequence[str] | None = "0007_import_indexes"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "run_shards",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.String(length=40), nullable=False),
        sa.Column("shard_no", sa.Integer(), nullable=False),
        sa.Column("first_sample_id", sa.Integer(), nullable=False),
        sa.Column("last_sample_id", sa.Integer(), nullable=False),
        sa.Column("texts", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("done_texts", sa.Integer(), nullable=False),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("vectors", sa.LargeBinary(), nullable=True),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("run_id", "shard_no"),
        if_not_exists=True,
    )


def downgrade() -> None:
    op.drop_table("run_shards")
