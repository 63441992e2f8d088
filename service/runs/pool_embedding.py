"""The worker's step after a pool import: embed the texts it added into the embedding cache.

Not a run: no row in the runs table, no claim, no heartbeat, and it never keeps a model from training. The
cache is only a head start: a suggestion embeds whatever this step has not reached (a lost message or a
worker that stopped mid-way costs time, never a wrong answer), so nothing here is retried or recovered.
One step covers one import request's new texts (at most a request's 1,000), so runs queued behind it wait
for one batch, never for a whole pool.
"""

from __future__ import annotations

import logging

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from service.domain.embedding import Embedders
from service.domain.pool_index import embedding_step
from service.store.db import transaction
from service.store.embedders import model_embedder
from service.store.schema import Model, PoolText

log = logging.getLogger("service.runs")


#: Pool texts a step embeds when a whole pool is embedded again (a new embedder): one import request's most.
STEP_TEXTS = 1_000


def whole_pool(s: Session, model_id: int) -> list[str]:
    """The steps that embed every text of the model's pool, `STEP_TEXTS` at a time (by id, in order)."""
    ids = list(s.scalars(select(PoolText.id).where(PoolText.model_id == model_id).order_by(PoolText.id)))
    return [
        embedding_step(model_id, ids[i], ids[min(i + STEP_TEXTS, len(ids)) - 1])
        for i in range(0, len(ids), STEP_TEXTS)
    ]


def execute(
    sessions: sessionmaker[Session], embedders: Embedders, model_id: int, first: int, last: int
) -> int:
    """Embed (into the cache) the model's pool texts with ids first..last; returns how many it read. A model
    gone, or under zero data retention (its pool is purged and no text of it may be cached), reads none."""
    with transaction(sessions) as s:
        model = s.get(Model, model_id)
        if model is None or model.zero_data_retention:
            return 0
        name = model_embedder(s, model)
        texts = list(
            s.scalars(
                select(PoolText.text)
                .where(PoolText.model_id == model_id, PoolText.id >= first, PoolText.id <= last)
                .order_by(PoolText.id)
            )
        )
    if texts:  # in one call, as the request did: the embedder sorts a call's texts by length, so less padding
        embedders.get(name).encode(texts)
    log.info("embedded %d pool text(s) of model %d", len(texts), model_id)
    return len(texts)
