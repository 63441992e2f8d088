"""an append-only audit log, key expiry, blind labelling

Revision ID: 0021_audit_keys_blind
Revises: 0020_limits
Create Date: 2026-11-26

`audit_events`: triggers refuse UPDATE and DELETE (and TRUNCATE on PostgreSQL), so no code path, route or
hand-written statement edits the log. `api_keys.expires_at`: an optional end of a key's life (null: none).
`models.blind_labelling`: annotators see colleagues' votes and comments on a text only once they voted on it.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021_audit_keys_blind"
down_revision: str | Sequence[str] | None = "0020_limits"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

REFUSAL = "the audit log is append-only"


def _columns(table: str) -> set[str]:
    return {c["name"] for c in sa.inspect(op.get_bind()).get_columns(table)}


def upgrade() -> None:
    # Each step checks first: a database stamped back to an older revision has them already.
    if "expires_at" not in _columns("api_keys"):
        with op.batch_alter_table("api_keys") as batch:
            batch.add_column(sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True))
    if "blind_labelling" not in _columns("models"):
        with op.batch_alter_table("models") as batch:
            batch.add_column(
                sa.Column("blind_labelling", sa.Boolean(), nullable=False, server_default=sa.false())
            )
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "CREATE OR REPLACE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS "
            f"$$ BEGIN RAISE EXCEPTION '{REFUSAL}'; END $$"
        )
        op.execute(
            "CREATE OR REPLACE TRIGGER audit_events_no_change BEFORE UPDATE OR DELETE ON audit_events "
            "FOR EACH ROW EXECUTE FUNCTION audit_events_append_only()"
        )
        op.execute(
            "CREATE OR REPLACE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events "
            "FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only()"
        )
    else:
        for event in ("UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER IF NOT EXISTS audit_events_no_{event.lower()} "
                f"BEFORE {event} ON audit_events BEGIN SELECT RAISE(ABORT, '{REFUSAL}'); END"
            )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER audit_events_no_truncate ON audit_events")
        op.execute("DROP TRIGGER audit_events_no_change ON audit_events")
        op.execute("DROP FUNCTION audit_events_append_only()")
    else:
        op.execute("DROP TRIGGER audit_events_no_update")
        op.execute("DROP TRIGGER audit_events_no_delete")
    with op.batch_alter_table("models") as batch:
        batch.drop_column("blind_labelling")
    with op.batch_alter_table("api_keys") as batch:
        batch.drop_column("expires_at")
