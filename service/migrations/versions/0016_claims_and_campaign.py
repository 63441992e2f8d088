"""claims on pool texts, votes wanted per text, and pausing a model's automatic retraining

Revision ID: 0016_claims_and_campaign
Revises: 0015_audit_and_provenance
Create Date: 2026-11-25

`pool_claims`: a suggestion handed to one person stays theirs for a lease, so a team labels disjoint texts.
`models.votes_wanted` (1: every text once, as before) and `models.auto_retrain` (true: as before).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016_claims_and_campaign"
down_revision: str | Sequence[str] | None = "0015_audit_and_provenance"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    have = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("models")}
    # A database stamped back to an older revision has them already.
    with op.batch_alter_table("models", schema=None) as batch_op:
        if "votes_wanted" not in have:
            batch_op.add_column(sa.Column("votes_wanted", sa.Integer(), nullable=False, server_default="1"))
        if "auto_retrain" not in have:
            batch_op.add_column(
                sa.Column("auto_retrain", sa.Boolean(), nullable=False, server_default=sa.true())
            )
    op.create_table(
        "pool_claims",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("model_id", sa.Integer(), nullable=False),
        sa.Column("pool_text_id", sa.Integer(), nullable=False),
        sa.Column("trait_key", sa.String(length=64), nullable=False),
        sa.Column("annotator", sa.String(length=64), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["model_id"], ["models.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["pool_text_id"], ["pool_texts.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("pool_text_id", "trait_key", "annotator"),
        if_not_exists=True,
    )
    op.create_index(
        "ix_pool_claims_model_trait",
        "pool_claims",
        ["model_id", "trait_key", "expires_at"],
        if_not_exists=True,
    )
    op.create_index("ix_pool_claims_pool_text_id", "pool_claims", ["pool_text_id"], if_not_exists=True)


def downgrade() -> None:
    op.drop_table("pool_claims")
    with op.batch_alter_table("models", schema=None) as batch_op:
        batch_op.drop_column("auto_retrain")
        batch_op.drop_column("votes_wanted")
