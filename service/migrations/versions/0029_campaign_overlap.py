"""campaign overlap: the owner's share of suggestions taken from texts a colleague labelled

Revision ID: 0029_campaign_overlap
Revises: 0028_sign_in_audit
Create Date: 2026-11-26

`models.overlap` (float, default 0): the `overlap` a pool suggestion uses when the request gives none, set by
the model's owner as a campaign setting; 0 for every model stored before, which is how they behaved.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0029_campaign_overlap"
down_revision: str | Sequence[str] | None = "0028_sign_in_audit"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if "overlap" not in {c["name"] for c in sa.inspect(op.get_bind()).get_columns("models")}:
        op.add_column("models", sa.Column("overlap", sa.Float(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("models") as batch:
        batch.drop_column("overlap")
