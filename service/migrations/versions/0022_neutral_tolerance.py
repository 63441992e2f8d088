"""neutral tolerance: each trait's pole counts recounted with the middle as 0.5 within 1e-9

Revision ID: 0022_neutral_tolerance
Revises: 0021_audit_keys_blind
Create Date: 2026-11-26

A mean of votes that is mathematically 0.5 can miss it by a float rounding (0.5000000000000001); the pole rule
(`core.contract.pole_of`) now takes a quality within `NEUTRAL_TOLERANCE` (1e-9) of 0.5 as neutral. Samples
stored before at such a quality were counted on a pole; every trait's counts are recomputed so that deleting
or editing one keeps them right. Nothing else changes.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0022_neutral_tolerance"
down_revision: str | Sequence[str] | None = "0021_audit_keys_blind"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The pole rule at this revision, written out: a migration is history and must not change with the code.
_MINE = "FROM samples WHERE samples.trait_id = traits.id"
_ABOVE, _BELOW = "0.500000001", "0.499999999"


def upgrade() -> None:
    op.execute(
        f"UPDATE traits SET sample_count = (SELECT COUNT(*) {_MINE}), "
        f"positive_samples = (SELECT COUNT(*) {_MINE} AND samples.quality > {_ABOVE}), "
        f"neutral_samples = (SELECT COUNT(*) {_MINE} AND samples.quality >= {_BELOW} "
        f"AND samples.quality <= {_ABOVE})"
    )


def downgrade() -> None:  # the rule of 0011: exactly 0.5 neutral
    op.execute(
        f"UPDATE traits SET positive_samples = (SELECT COUNT(*) {_MINE} AND samples.quality > 0.5), "
        f"neutral_samples = (SELECT COUNT(*) {_MINE} AND samples.quality = 0.5)"
    )
