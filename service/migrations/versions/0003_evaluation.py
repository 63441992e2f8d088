"""version events (history of activations and tag moves), evaluation sets and their results

Revision ID: 0003_evaluation
Revises: 0001
Create Date: 2026-11-23

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003_evaluation"
down_revision: str | Sequence[str] | None = "0002_labelling"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "version_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("model_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("version_no", sa.Integer(), nullable=False),
        sa.Column("tag", sa.String(length=64), nullable=True),
        sa.Column("previous_version_no", sa.Integer(), nullable=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["model_id"], ["models.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("version_events", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_version_events_model_id"), ["model_id"], unique=False)
    op.create_table(
        "eval_items",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("model_id", sa.Integer(), nullable=False),
        sa.Column("trait_key", sa.String(length=64), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("quality", sa.Float(), nullable=False),
        sa.Column("content_sha256", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["model_id"], ["models.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("eval_items", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_eval_items_model_id"), ["model_id"], unique=False)
    op.create_table(
        "evaluations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("model_id", sa.Integer(), nullable=False),
        sa.Column("version_no", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.String(length=40), nullable=False),
        sa.Column("item_count", sa.Integer(), nullable=False),
        sa.Column("metrics", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["model_id"], ["models.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("evaluations", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_evaluations_model_id"), ["model_id"], unique=False)
    # Every version became active when it was created (a successful training activates its version),
    # so the activations of the versions still stored are known exactly; earlier tag moves are not.
    op.execute(
        """
        INSERT INTO version_events (model_id, kind, version_no, tag, previous_version_no, at)
        SELECT v.model_id, 'activated', v.version_no, NULL,
               (SELECT MAX(p.version_no) FROM versions p
                 WHERE p.model_id = v.model_id AND p.version_no < v.version_no),
               v.created_at
        FROM versions v
        """
    )


def downgrade() -> None:
    for table in ("evaluations", "eval_items"):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_index(batch_op.f(f"ix_{table}_model_id"))
        op.drop_table(table)
    with op.batch_alter_table("version_events", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_version_events_model_id"))
    op.drop_table("version_events")
