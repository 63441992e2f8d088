"""duplicate checks read a 64-bit prefix of the content hash: indexes a quarter of the size

Revision ID: 0010_content_key_indexes
Revises: 0009_annotators
Create Date: 2026-11-25

The (model, trait, content hash) indexes of 0007 held the whole 64-character hash. Each new sample or
evaluation item goes into them at a random place, so once they outgrow the page cache every insert reads and
dirties a page: at 100,000 samples a batch of 500 spent three times as long in SQLite as at 1,000.
The first 16 characters (64 bits, `service.store.schema.CONTENT_KEY_CHARS`) find a text's rows as well;
the rows' whole hash tells apart the texts that share them.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010_content_key_indexes"
down_revision: str | Sequence[str] | None = "0009_annotators"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KEY = sa.text("substr(content_sha256, 1, 16)")  # as tables.content_key writes it


def upgrade() -> None:
    op.create_index(
        "ix_samples_model_trait_key", "samples", ["model_id", "trait_id", KEY], if_not_exists=True
    )
    op.drop_index("ix_samples_model_trait_sha", "samples", if_exists=True)
    op.create_index(
        "ix_eval_items_model_trait_key", "eval_items", ["model_id", "trait_key", KEY], if_not_exists=True
    )
    op.drop_index("ix_eval_items_model_trait_sha", "eval_items", if_exists=True)


def downgrade() -> None:
    op.create_index(
        "ix_eval_items_model_trait_sha", "eval_items", ["model_id", "trait_key", "content_sha256"]
    )
    op.drop_index("ix_eval_items_model_trait_key", "eval_items")
    op.create_index("ix_samples_model_trait_sha", "samples", ["model_id", "trait_id", "content_sha256"])
    op.drop_index("ix_samples_model_trait_key", "samples")
