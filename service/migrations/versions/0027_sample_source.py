"""sample source: where a synthesized sample's text came from

Revision ID: 0027_sample_source
Revises: 0022_neutral_tolerance
Create Date: 2026-11-26

`samples.source` (nullable): "pool" for a real text synthesis picked from the model's pool, "template" for a
built-in description of a pole; null for every other sample and those stored before. Nothing else changes.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0027_sample_source"
down_revision: str | Sequence[str] | None = "0022_neutral_tolerance"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if "source" not in {c["name"] for c in sa.inspect(op.get_bind()).get_columns("samples")}:
        op.add_column("samples", sa.Column("source", sa.String(16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("samples") as batch:
        batch.drop_column("source")
