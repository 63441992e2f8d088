"""the evaluation set is held out: what each version trained on, and an evaluation text found by content key

Revision ID: 0013_heldout
Revises: 0012_source_id
Create Date: 2026-12-08

`versions.trained_keys`: the content keys of the texts a version trained on (service/store/heldout.py), so
its evaluations leave those texts out. Versions trained before keep NULL: nothing records what they trained
on, and their evaluations say so (`excluded_trained` null). `ix_eval_items_model_key` finds a text's
evaluation items of any trait, so a pool or sample import asks the set about its texts at the cost of its
own size.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013_heldout"
down_revision: str | Sequence[str] | None = "0012_source_id"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KEY = sa.text("substr(content_sha256, 1, 16)")  # as tables.content_key writes it


def upgrade() -> None:
    have = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("versions")}
    if "trained_keys" not in have:  # a database stamped back to an older revision has it already
        with op.batch_alter_table("versions", schema=None) as batch_op:
            batch_op.add_column(sa.Column("trained_keys", sa.LargeBinary(), nullable=True))
    op.create_index("ix_eval_items_model_key", "eval_items", ["model_id", KEY], if_not_exists=True)


def downgrade() -> None:
    op.drop_index("ix_eval_items_model_key", "eval_items")
    with op.batch_alter_table("versions", schema=None) as batch_op:
        batch_op.drop_column("trained_keys")
