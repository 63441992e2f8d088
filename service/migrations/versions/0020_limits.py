"""rate-limit buckets, and the place a pool claim holds

Revision ID: 0020_limits
Revises: 0019_identity
Create Date: 2026-11-26

`rate_buckets`: one token bucket per (what, namespace, key or person), in the database every API process
shares, so a fleet's limits hold across its processes. `pool_claims.cap`: how many votes and claims the text
could take when the claim was granted (votes wanted, or one more for an overlap pick): a renewal and a label
check against it, so a text labelled by someone else meanwhile leaves the holder's queue.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020_limits"
down_revision: str | Sequence[str] | None = "0019_identity"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    have = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("pool_claims")}
    if "cap" not in have:  # a database stamped back to an older revision has it already
        with op.batch_alter_table("pool_claims", schema=None) as batch_op:
            batch_op.add_column(sa.Column("cap", sa.Integer(), nullable=False, server_default="1"))
    op.create_table(
        "rate_buckets",
        sa.Column("key", sa.String(length=255), nullable=False),
        sa.Column("tokens", sa.Float(), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("key"),
        if_not_exists=True,
    )


def downgrade() -> None:
    op.drop_table("rate_buckets")
    with op.batch_alter_table("pool_claims", schema=None) as batch_op:
        batch_op.drop_column("cap")
