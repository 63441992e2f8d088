"""The evaluation set is held out, through the real service: a pool import leaves its texts out, suggestions
never hand one out, a sample import says how many of its rows are evaluation texts, and an evaluation leaves
out (and counts) the texts the version trained on, by the version's own record of them."""

from __future__ import annotations

from sqlalchemy import text

from tests.service.conftest import Svc
from tests.service.helpers import check, make_model, train_ready


def test_zero_data_retention_keeps_no_record_of_the_training_texts(svc: Svc) -> None:
    c, h = svc.client, svc.author
    handle = "acme.heldzdr"
    make_model(c, h, handle)
    train_ready(c, h, handle)
    query = text(
        "SELECT count(*) FROM versions JOIN models ON models.id = versions.model_id "
        "WHERE models.handle = :h AND versions.trained_keys IS NOT NULL"
    )
    with svc.ctx.engine.connect() as conn:
        assert conn.execute(query, {"h": handle}).scalar() == 1
    check(c.patch(f"/v1/models/{handle}", json={"zero_data_retention": True}, headers=h), 200)
    with svc.ctx.engine.connect() as conn:
        assert conn.execute(query, {"h": handle}).scalar() == 0  # purged with the texts
