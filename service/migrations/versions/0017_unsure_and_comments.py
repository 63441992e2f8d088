"""unsure marks and comments on texts: what an annotator was unsure of, and notes for reviewers

Revision ID: 0017_unsure_and_comments
Revises: 0016_claims_and_campaign
Create Date: 2026-11-25

Two new tables, never read by training: `unsure_marks` (a person's "unsure" on a text of a trait, one per
person, trait and text) and `text_comments`. Nothing stored before changes.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017_unsure_and_comments"
down_revision: str | Sequence[str] | None = "0016_claims_and_campaign"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    tables = sa.inspect(op.get_bind()).get_table_names()  # stamped back to an older revision: keep them
    if "unsure_marks" not in tables:
        _notes_table(
            "unsure_marks",
            "annotator",
            unique=sa.UniqueConstraint("trait_id", "content_sha256", "annotator"),
            index=["model_id"],
        )
    if "text_comments" not in tables:
        _notes_table(
            "text_comments", "author", sa.Column("body", sa.Text(), nullable=False), index=["model_id", "id"]
        )


def _notes_table(
    name: str,
    signer: str,
    *more: sa.Column[str],
    unique: sa.UniqueConstraint | None = None,
    index: list[str],
) -> None:
    """A table of notes on a model's texts: a text of a trait (and its digest), who wrote the note (`signer`),
    the `more` columns, when; the index `ix_<name>_model_id` over `index`."""
    op.create_table(
        name,
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("model_id", sa.Integer(), sa.ForeignKey("models.id", ondelete="CASCADE"), nullable=False),
        sa.Column("trait_id", sa.Integer(), sa.ForeignKey("traits.id", ondelete="CASCADE"), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("content_sha256", sa.String(64), nullable=False),
        sa.Column(signer, sa.String(64), nullable=False),
        *more,
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        *([unique] if unique is not None else []),
    )
    op.create_index(f"ix_{name}_model_id", name, index)


def downgrade() -> None:
    for name in ("text_comments", "unsure_marks"):
        op.drop_index(f"ix_{name}_model_id", name)
        op.drop_table(name)
