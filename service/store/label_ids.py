"""Label ids: one sequence shared by the feedback buffer and the samples, so a label keeps its id for life.

A label given while a model is trained waits in the buffer (`feedback_labels`) and becomes a sample when a
training takes it in (`service.store.samples.fold_feedback`), keeping its id. Both tables draw their ids
here, so no id is ever given to two labels, and an id's order is the order the labels were given: the one
ordering rule of votes (`service.store.votes.in_order`, core/engine/votes.py "latest").

PostgreSQL draws them from the sequence `label_id_seq` (never rolled back, never waits on a writer); SQLite
from the one row of the table `label_ids`, which its single writer serialises anyway.
"""

from __future__ import annotations

from sqlalchemy import Connection, text
from sqlalchemy.engine.interfaces import ExecutionContext

SEQUENCE = "label_id_seq"


def next_label_ids(conn: Connection, n: int) -> list[int]:
    """`n` new label ids, ascending (a session's: `session.connection()`)."""
    if n <= 0:
        return []
    if conn.dialect.name == "postgresql":
        rows = conn.execute(text(f"SELECT nextval('{SEQUENCE}') FROM generate_series(1, :n)"), {"n": n})
        return sorted(int(r[0]) for r in rows)
    last = conn.execute(text("UPDATE label_ids SET last = last + :n RETURNING last"), {"n": n}).scalar_one()
    return list(range(int(last) - n + 1, int(last) + 1))


def label_id_default(context: ExecutionContext) -> int:
    """A row inserted without an id (a buffered label, a test's row): the next label id."""
    conn = context.connection
    assert conn is not None
    return next_label_ids(conn, 1)[0]
