"""label review and quotas: automatic retraining chosen by the owner, storage measured per namespace

Revision ID: 0032_label_review
Revises: 0030_sample_generator_model
Create Date: 2026-11-27

`models.auto_retrain_set` (false): whether the owner chose `auto_retrain`. Unset, automatic retraining is on
for a model one person writes and off for a team's (service/store/teams.py): a model made before keeps its
value only where it was set, so a team's labels no longer make versions by themselves.
`storage_usage` (namespace, chars, measured_at): a namespace's characters of text for its quota, and the index
`ix_samples_model_annotator` (model_id, annotator): one person's labels on a model, for theirs
(service/store/quotas.py).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0032_label_review"
down_revision: str | Sequence[str] | None = "0030_sample_generator_model"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    have = {c["name"] for c in inspector.get_columns("models")}
    if "auto_retrain_set" not in have:
        op.add_column(
            "models",
            sa.Column("auto_retrain_set", sa.Boolean(), nullable=False, server_default=sa.false()),
        )
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
    with op.batch_alter_table("models") as batch:
        batch.drop_column("auto_retrain_set")
