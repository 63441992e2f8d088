"""sample generator model: which text generator wrote a synthesized sample

Revision ID: 0030_sample_generator_model
Revises: 0029_campaign_overlap
Create Date: 2026-11-26

`samples.generator_model` (nullable): the model of the deployment's OpenAI-compatible text generator for a
sample synthesis wrote with it (`source` "generator"); null for every other sample and those stored before.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0030_sample_generator_model"
down_revision: str | Sequence[str] | None = "0029_campaign_overlap"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if "generator_model" not in {c["name"] for c in sa.inspect(op.get_bind()).get_columns("samples")}:
        op.add_column("samples", sa.Column("generator_model", sa.String(length=200), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("samples") as batch:
        batch.drop_column("generator_model")
