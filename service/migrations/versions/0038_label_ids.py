"""label ids: one id sequence for buffered labels and samples

Revision ID: 0038_label_ids
Revises: 0037_shard_body
Create Date: 2026-11-28

A buffered label folded into the samples by a training keeps its id (service/store/label_ids.py), so both
tables draw ids from one sequence: PostgreSQL's sequence `label_id_seq`, SQLite's one-row table `label_ids`.
Buffered labels stored before took ids of their own table, which samples' ids may repeat: each moves above
every id given so far, in the order they were given (ids shift by one offset, so their order stays); so do
gold answers, whose id the label route answers with as it answers a label with its own.

`samples.trained_in` (integer, null): the version whose training took the label in (the votes export's
`version_no`). Labels stored before: an accepted one's is the first version created after it was given (the
rule the export read before); the others' null.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0038_label_ids"
down_revision: str | Sequence[str] | None = "0037_shard_body"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: Tables whose rows move into the label ids: buffered labels, and gold answers (the label route answers an
#: answer with its id, which must read as any label's).
MOVED = ("feedback_labels", "gold_answers")


def upgrade() -> None:
    bind = op.get_bind()
    if "label_ids" not in sa.inspect(bind).get_table_names():
        op.create_table(
            "label_ids",
            sa.Column("id", sa.Integer(), nullable=False),
            sa.Column("last", sa.Integer(), nullable=False),
            sa.PrimaryKeyConstraint("id"),
        )
    if "trained_in" not in {c["name"] for c in sa.inspect(bind).get_columns("samples")}:
        op.add_column("samples", sa.Column("trained_in", sa.Integer(), nullable=True))
        bind.execute(
            sa.text(
                "UPDATE samples SET trained_in = (SELECT MIN(v.version_no) FROM versions v "
                "WHERE v.model_id = samples.model_id AND v.created_at >= samples.created_at) "
                "WHERE review = 'accepted'"
            )
        )
    last = bind.execute(sa.text("SELECT COALESCE(MAX(id), 0) FROM samples")).scalar_one()
    for table in MOVED:
        top = bind.execute(sa.text(f"SELECT COALESCE(MAX(id), 0) FROM {table}")).scalar_one()
        # Every id + offset lies above every id given so far: the shift collides with no row.
        offset = max(last, top)
        bind.execute(sa.text(f"UPDATE {table} SET id = id + :offset"), {"offset": offset})
        last = max(last, bind.execute(sa.text(f"SELECT COALESCE(MAX(id), 0) FROM {table}")).scalar_one())
    if bind.dialect.name == "postgresql":
        op.execute(f"CREATE SEQUENCE IF NOT EXISTS label_id_seq START WITH {last + 1}")
        for table in ("samples", *MOVED):
            op.execute(f"ALTER TABLE {table} ALTER COLUMN id SET DEFAULT nextval('label_id_seq')")
    else:
        bind.execute(sa.text("DELETE FROM label_ids"))
        bind.execute(sa.text("INSERT INTO label_ids (id, last) VALUES (1, :last)"), {"last": last})


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for table in ("samples", *MOVED):
            op.execute(f"ALTER TABLE {table} ALTER COLUMN id SET DEFAULT nextval('{table}_id_seq')")
            op.execute(
                f"SELECT setval('{table}_id_seq', (SELECT COALESCE(MAX(id), 0) + 1 FROM {table}), false)"
            )
        op.execute("DROP SEQUENCE IF EXISTS label_id_seq")
    op.drop_table("label_ids")
    with op.batch_alter_table("samples") as batch:
        batch.drop_column("trained_in")
