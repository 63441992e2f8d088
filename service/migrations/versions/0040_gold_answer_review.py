"""gold answer review: a reviewer decides an answer to a gold item as a label

Revision ID: 0040_gold_answer_review
Revises: 0039_label_corrections
Create Date: 2026-11-29

`gold_answers.review` ("accepted"), `reviewed_by`, `review_comment` and `reviewed_at`: an answer reads as its
person's label (docs/api/team.md, "Gold secrecy"), so on a reviewed model it waits for a reviewer and is
decided as one. Answers stored before on a model under review (`models.review` true, or null: a team's) read
as pending there, so they start pending; the others accepted, as they read.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0040_gold_answer_review"
down_revision: str | Sequence[str] | None = "0039_label_corrections"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = ("review", "reviewed_by", "review_comment", "reviewed_at")


def upgrade() -> None:
    have = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("gold_answers")}
    if "review" not in have:
        op.add_column(
            "gold_answers",
            sa.Column("review", sa.String(length=16), nullable=False, server_default="accepted"),
        )
        op.execute(
            "UPDATE gold_answers SET review = 'pending' "
            "WHERE model_id IN (SELECT id FROM models WHERE review IS NULL OR review)"
        )
    if "reviewed_by" not in have:
        op.add_column("gold_answers", sa.Column("reviewed_by", sa.String(length=64), nullable=True))
    if "review_comment" not in have:
        op.add_column("gold_answers", sa.Column("review_comment", sa.Text(), nullable=True))
    if "reviewed_at" not in have:
        op.add_column("gold_answers", sa.Column("reviewed_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("gold_answers") as batch:
        for column in COLUMNS:
            batch.drop_column(column)
