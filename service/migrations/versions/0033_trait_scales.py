"""rating scales: a trait labelled on a scale of points, and the point each label gave

Revision ID: 0033_trait_scales
Revises: 0032_label_review
Create Date: 2026-11-27

`traits.scale` (JSON, null): null, the trait is labelled by its two poles as before; else
{"points": N, "names": [...], "unsure": bool}. `samples.point` (null): the point of the trait's scale a
label's quality lies on; every label stored before is a pole trait's, so null.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0033_trait_scales"
down_revision: str | Sequence[str] | None = "0032_label_review"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    if "scale" not in {c["name"] for c in inspector.get_columns("traits")}:
        op.add_column("traits", sa.Column("scale", sa.JSON(), nullable=True))
    if "point" not in {c["name"] for c in inspector.get_columns("samples")}:
        op.add_column("samples", sa.Column("point", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("samples") as batch:
        batch.drop_column("point")
    with op.batch_alter_table("traits") as batch:
        batch.drop_column("scale")
