"""a trained model's NULL embedder pinned to the one its active version was trained with

Revision ID: 0006_embedder_pinned
Revises: 0005_thresholds
Create Date: 2026-11-24

NULL meant "the service's default embedder". The default changed (minilm-qint8v2 for new models), and a model
keeps the embedder it was trained with: each trained model with NULL gets the id its active version's metrics
name. An untrained draft keeps NULL (the default: it has nothing to keep).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006_embedder_pinned"
down_revision: str | Sequence[str] | None = "0005_thresholds"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

models = sa.table(
    "models", sa.column("id", sa.Integer), sa.column("embedder", sa.String), sa.column("current_version_id")
)
versions = sa.table("versions", sa.column("id", sa.Integer), sa.column("metrics", sa.JSON))


def upgrade() -> None:
    bind = op.get_bind()
    rows = bind.execute(
        sa.select(models.c.id, versions.c.metrics)
        .join(versions, versions.c.id == models.c.current_version_id)
        .where(models.c.embedder.is_(None))
    ).all()
    for model_id, metrics in rows:
        embedder = (metrics or {}).get("embedder")
        if isinstance(embedder, str) and embedder:
            bind.execute(models.update().where(models.c.id == model_id).values(embedder=embedder))


def downgrade() -> None:
    pass  # the pinned ids are what NULL meant when they were written
