"""imports and reads linear in the batch: samples and evaluation items indexed by content hash, counts kept

Revision ID: 0007_import_indexes
Revises: 0006_embedder_pinned
Create Date: 2026-11-24

An import checks each new label against the stored ones (same trait, text, quality: stored once). With only
(model_id, trait_id) indexed, each check read every sample of the trait, so a batch of 500 cost time in
proportion to the model's size (52 samples/s at 100,000). (model_id, trait_id, content_sha256)
finds a text's rows directly; (model_id, trait_id, id) serves a trait's samples in id order (the Samples
page's trait filter), so the two replace that index. Evaluation items get the same content index, and the
model row keeps their count (an import answers with the set's total). Pool texts already have a unique
(model_id, content_sha256). Each trait row keeps its samples' count and positive count: every read of a
model or its traits counted them, seconds at a million samples.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_import_indexes"
down_revision: str | Sequence[str] | None = "0006_embedder_pinned"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # if_(not_)exists: a database stamped back to an older revision and migrated again (tests do) has them.
    op.create_index(
        "ix_samples_model_trait_sha",
        "samples",
        ["model_id", "trait_id", "content_sha256"],
        if_not_exists=True,
    )
    op.create_index(
        "ix_samples_model_trait_id", "samples", ["model_id", "trait_id", "id"], if_not_exists=True
    )
    op.drop_index("ix_samples_model_trait", "samples", if_exists=True)
    op.create_index(
        "ix_eval_items_model_trait_sha",
        "eval_items",
        ["model_id", "trait_key", "content_sha256"],
        if_not_exists=True,
    )
    columns = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("models")}
    if "eval_item_count" not in columns:
        with op.batch_alter_table("models", schema=None) as batch_op:
            batch_op.add_column(
                sa.Column("eval_item_count", sa.Integer(), server_default="0", nullable=False)
            )
    counted = "SELECT COUNT(*) FROM eval_items WHERE eval_items.model_id = models.id"
    op.execute(f"UPDATE models SET eval_item_count = ({counted})")
    columns = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("traits")}
    if "sample_count" not in columns:
        with op.batch_alter_table("traits", schema=None) as batch_op:
            batch_op.add_column(sa.Column("sample_count", sa.Integer(), server_default="0", nullable=False))
            batch_op.add_column(
                sa.Column("positive_samples", sa.Integer(), server_default="0", nullable=False)
            )
    mine = "FROM samples WHERE samples.trait_id = traits.id"  # positive: quality >= 0.5 (core.contract)
    op.execute(
        f"UPDATE traits SET sample_count = (SELECT COUNT(*) {mine}), "
        f"positive_samples = (SELECT COUNT(*) {mine} AND samples.quality >= 0.5)"
    )


def downgrade() -> None:
    with op.batch_alter_table("traits", schema=None) as batch_op:
        batch_op.drop_column("positive_samples")
        batch_op.drop_column("sample_count")
    with op.batch_alter_table("models", schema=None) as batch_op:
        batch_op.drop_column("eval_item_count")
    op.drop_index("ix_eval_items_model_trait_sha", "eval_items")
    op.create_index("ix_samples_model_trait", "samples", ["model_id", "trait_id"])
    op.drop_index("ix_samples_model_trait_id", "samples")
    op.drop_index("ix_samples_model_trait_sha", "samples")
