"""sign-in audit: the token a person last signed in with

Revision ID: 0028_sign_in_audit
Revises: 0027_sample_source
Create Date: 2026-11-26

`people.signed_in_at` (nullable): the issue time (`iat`) of the newest ID token recorded as a sign-in. A
request whose token is newer is a sign-in (recorded in the audit log); the others are the same sign-in's
requests. Refused sign-in attempts are audit events too, in the service-wide stream (namespace `*`); the
log stays append-only (migration 0021's triggers).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0028_sign_in_audit"
down_revision: str | Sequence[str] | None = "0027_sample_source"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if "signed_in_at" not in {c["name"] for c in sa.inspect(op.get_bind()).get_columns("people")}:
        op.add_column("people", sa.Column("signed_in_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("people") as batch:
        batch.drop_column("signed_in_at")
