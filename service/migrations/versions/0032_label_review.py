"""label review and quotas: automatic retraining chosen by the owner, storage measured per namespace

Revision ID: 0032_label_review
Revises: 0031_one_membership_per_account
Create Date: 2026-11-27

`models.auto_retrain_set` (false): whether the owner chose `auto_retrain`. Unset, automatic retraining is on
for a model one person writes and off for a team's (service/store/teams.py): a model made before keeps its
value only where it was set, so a team's labels no longer make versions by themselves.
`models.review` (null: on for a team's model) and `models.accept_rule` ("none"), and per label (`samples`,
`feedback_labels`) `review` ("accepted": every label stored before trains as before), `reviewed_by` and
`review_comment`: labels are proposals until accepted. `storage_usage` (namespace, chars, measured_at): a
namespace's characters of text for its quota, and the index `ix_samples_model_annotator` (model_id,
annotator): one person's labels on a model, for theirs (service/store/quotas.py). `removed_labels`: one
person's labels an owner removed in one call, kept for an hour so the removal can be undone.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0032_label_review"
down_revision: str | Sequence[str] | None = "0031_one_membership_per_account"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


#: The tables of labels a reviewer decides on.
REVIEWED = ("samples", "feedback_labels")


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    have = {c["name"] for c in inspector.get_columns("models")}
    if "auto_retrain_set" not in have:
        op.add_column(
            "models",
            sa.Column("auto_retrain_set", sa.Boolean(), nullable=False, server_default=sa.false()),
        )
    if "review" not in have:
        op.add_column("models", sa.Column("review", sa.Boolean(), nullable=True))
    if "accept_rule" not in have:
        op.add_column(
            "models", sa.Column("accept_rule", sa.String(length=16), nullable=False, server_default="none")
        )
    for table in REVIEWED:
        columns = {c["name"] for c in inspector.get_columns(table)}
        if "review" not in columns:
            op.add_column(
                table,
                sa.Column("review", sa.String(length=16), nullable=False, server_default="accepted"),
            )
        if "reviewed_by" not in columns:
            op.add_column(table, sa.Column("reviewed_by", sa.String(length=64), nullable=True))
        if "review_comment" not in columns:
            op.add_column(table, sa.Column("review_comment", sa.Text(), nullable=True))
    if not inspector.has_table("removed_labels"):
        op.create_table(
            "removed_labels",
            sa.Column("id", sa.Integer(), primary_key=True),
            sa.Column(
                "model_id", sa.Integer(), sa.ForeignKey("models.id", ondelete="CASCADE"), nullable=False
            ),
            sa.Column("token", sa.String(length=64), nullable=False, unique=True),
            sa.Column("annotator", sa.String(length=64), nullable=False),
            sa.Column("removed_by", sa.String(length=64), nullable=False),
            sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
            sa.Column("rows", sa.JSON(), nullable=False),
        )
        op.create_index("ix_removed_labels_model_id", "removed_labels", ["model_id"])
    if not inspector.has_table("storage_usage"):
        op.create_table(
            "storage_usage",
            sa.Column("namespace", sa.String(length=64), primary_key=True),
            sa.Column("chars", sa.BigInteger(), nullable=False),
            sa.Column("measured_at", sa.DateTime(timezone=True), nullable=False),
        )
    op.create_index("ix_samples_model_annotator", "samples", ["model_id", "annotator"], if_not_exists=True)


def downgrade() -> None:
    op.drop_index("ix_samples_model_annotator", table_name="samples")
    op.drop_table("storage_usage")
    op.drop_index("ix_removed_labels_model_id", table_name="removed_labels")
    op.drop_table("removed_labels")
    for table in REVIEWED:
        with op.batch_alter_table(table) as batch:
            for column in ("review", "reviewed_by", "review_comment"):
                batch.drop_column(column)
    with op.batch_alter_table("models") as batch:
        for column in ("auto_retrain_set", "review", "accept_rule"):
            batch.drop_column(column)
