"""Zero-data-retention purges: delete a model's texts, then erase their bytes from every file they reached.

The rows go in the caller's transaction; `erase` runs after it committed: it forgets the texts' embeddings
from the cache file and truncates the SQLite WALs, which still hold the old page images. With
`secure_delete` on every SQLite connection (service/store/db.py, core/embedders/cache.py), no byte of a purged
text or of its sha256 is left in the data directory. PostgreSQL's guarantee is narrower
(docs/service-writes.md).
"""

from __future__ import annotations

import hashlib
import logging

from sqlalchemy import Engine, delete, select, update
from sqlalchemy.orm import Session

from service.domain.embedding import Embedders
from service.store.campaign_schema import GoldAnswer, GoldItem, TextComment, UnsureMark
from service.store.db import truncate_wal
from service.store.schema import EvalItem, FeedbackLabel, Model, PoolText, SampleRow, Trait, Version

log = logging.getLogger("service.retention")


def purge_texts(session: Session, model_id: int) -> list[str]:
    """Delete the model's samples, feedback, pool, evaluation and gold texts, its unsure marks and comments
    (and what its versions recorded of the texts they trained on); returns their sha256 for `erase`."""
    texts: set[str] = set()
    session.execute(delete(GoldAnswer).where(GoldAnswer.model_id == model_id))  # before their items
    for table in (SampleRow, FeedbackLabel, PoolText, EvalItem, GoldItem, UnsureMark, TextComment):
        texts |= set(session.scalars(select(table.text).where(table.model_id == model_id)))
        session.execute(delete(table).where(table.model_id == model_id))
    session.execute(update(Model).where(Model.id == model_id).values(eval_item_count=0))
    # The versions' records of what they trained on are content keys: part of the texts' sha256.
    session.execute(update(Version).where(Version.model_id == model_id).values(trained_keys=None))
    session.execute(
        update(Trait)
        .where(Trait.model_id == model_id)
        .values(sample_count=0, positive_samples=0, neutral_samples=0)
    )
    return sorted(hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts)


def erase(engine: Engine, embedders: Embedders, digests: list[str]) -> None:
    """After the purge committed: forget the cached embeddings of the texts, truncate the WALs."""
    if not digests:
        return
    cache_ok = embedders.forget(digests)
    db_ok = truncate_wal(engine)
    if not (cache_ok and db_ok):  # long-running readers; the next purge or checkpoint will finish it
        log.warning("zero-data-retention purge: a WAL could not be truncated yet (busy readers)")
