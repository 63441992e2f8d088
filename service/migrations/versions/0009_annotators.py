"""annotators: a key's name; who gave each label (samples, feedback, evaluation items); adjudicated votes;
the agreement a zero-data-retention model keeps after its votes are purged

Revision ID: 0009_annotators
Revises: 0008_run_shards
Create Date: 2026-12-01

Rows stored before keep `annotator` null ("unattributed"): nobody knows who gave them.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009_annotators"
down_revision: str | Sequence[str] | None = "0008_run_shards"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _missing(table: str, names: tuple[str, ...]) -> set[str]:
    """Those of `names` the table lacks (a database stamped back to an older revision already has them)."""
    have = {c["name"] for c in sa.inspect(op.get_bind()).get_columns(table)}
    return set(names) - have


def upgrade() -> None:
    if _missing("api_keys", ("name",)):
        with op.batch_alter_table("api_keys", schema=None) as batch_op:
            batch_op.add_column(sa.Column("name", sa.String(length=64), nullable=True))
            batch_op.create_unique_constraint("uq_api_keys_name", ["name"])
    missing = _missing("samples", ("annotator", "adjudicated"))
    if missing:
        with op.batch_alter_table("samples", schema=None) as batch_op:
            if "annotator" in missing:
                batch_op.add_column(sa.Column("annotator", sa.String(length=64), nullable=True))
            if "adjudicated" in missing:
                batch_op.add_column(
                    sa.Column("adjudicated", sa.Boolean(), server_default=sa.false(), nullable=False)
                )
    for table in ("feedback_labels", "eval_items"):
        if _missing(table, ("annotator",)):
            with op.batch_alter_table(table, schema=None) as batch_op:
                batch_op.add_column(sa.Column("annotator", sa.String(length=64), nullable=True))
    if _missing("models", ("kept_agreement",)):
        with op.batch_alter_table("models", schema=None) as batch_op:
            batch_op.add_column(sa.Column("kept_agreement", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("models", schema=None) as batch_op:
        batch_op.drop_column("kept_agreement")
    for table in ("eval_items", "feedback_labels"):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_column("annotator")
    with op.batch_alter_table("samples", schema=None) as batch_op:
        batch_op.drop_column("adjudicated")
        batch_op.drop_column("annotator")
    with op.batch_alter_table("api_keys", schema=None) as batch_op:
        batch_op.drop_constraint("uq_api_keys_name", type_="unique")
        batch_op.drop_column("name")
