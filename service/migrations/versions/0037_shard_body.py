"""the embedder a training's shards embed with

Revision ID: 0037_shard_body
Revises: 0036_text_metadata
Create Date: 2026-11-28

`run_shards.embedder` (string, null): the embedder id every worker embeds the shard with. A model set to
`auto` trains on the embedder its training chose, which the model's row does not say; null (shards from
before) is the model's own embedder. The revision id keeps the word of its day: databases store it.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0037_shard_body"
down_revision: str | Sequence[str] | None = "0036_text_metadata"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if "embedder" not in {c["name"] for c in sa.inspect(op.get_bind()).get_columns("run_shards")}:
        op.add_column("run_shards", sa.Column("embedder", sa.String(length=100), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("run_shards") as batch:
        batch.drop_column("embedder")
