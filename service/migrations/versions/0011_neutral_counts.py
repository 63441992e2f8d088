"""neutral samples: each trait row counts its samples of quality exactly 0.5 apart from both poles

Revision ID: 0011_neutral_counts
Revises: 0010_content_key_indexes
Create Date: 2026-11-25

Until now a quality of 0.5 counted toward the positive pole (0007's `positive_samples` counted `quality >=
0.5`). A neutral sample defines neither pole (`core.contract.pole_of`): `neutral_samples` counts them, and
every trait's counts are recomputed, so `positive_samples` counts only qualities above 0.5 and the negative
count (`sample_count - positive_samples - neutral_samples`) only those below.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011_neutral_counts"
down_revision: str | Sequence[str] | None = "0010_content_key_indexes"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The pole rule at this revision (core.contract.NEUTRAL_QUALITY), written out: a migration is history and must
# not change with the code.
_MINE = "FROM samples WHERE samples.trait_id = traits.id"


def upgrade() -> None:
    columns = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("traits")}
    if "neutral_samples" not in columns:  # a database stamped back to an older revision already has it
        with op.batch_alter_table("traits", schema=None) as batch_op:
            batch_op.add_column(
                sa.Column("neutral_samples", sa.Integer(), server_default="0", nullable=False)
            )
    op.execute(
        f"UPDATE traits SET sample_count = (SELECT COUNT(*) {_MINE}), "
        f"positive_samples = (SELECT COUNT(*) {_MINE} AND samples.quality > 0.5), "
        f"neutral_samples = (SELECT COUNT(*) {_MINE} AND samples.quality = 0.5)"
    )


def downgrade() -> None:
    with op.batch_alter_table("traits", schema=None) as batch_op:
        batch_op.drop_column("neutral_samples")
    op.execute(f"UPDATE traits SET positive_samples = (SELECT COUNT(*) {_MINE} AND samples.quality >= 0.5)")
