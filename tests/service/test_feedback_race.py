"""Concurrent feedback that fills the buffer of one ready model queues one automatic retraining, not two."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from sqlalchemy import func, select

from harness.faults import Delay, TestHooks
from service.store.schema import Model, Run
from tests.support.service import check, make_model, running, train_ready, wait_settled

HANDLE = "acme.race"


def test_concurrent_feedback_queues_one_retraining(tmp_path: Path, database_url: str) -> None:
    # Each feedback request sleeps between counting the buffer and deciding on a retraining, so two
    # requests overlap there for sure: without the model row lock both see a full buffer on a ready model.
    hooks = TestHooks(slow_feedback=Delay(HANDLE, 1.0))
    with running(tmp_path, checkpoints=hooks, database_url=database_url) as svc:
        c, h = svc.client, svc.author
        make_model(c, h, HANDLE)
        train_ready(c, h, HANDLE)
        path = f"/v1/models/{HANDLE}/score"
        for n, quality in enumerate((1.0, 0.0)):  # one label per trait and request
            body = {"content": f"first {n}", "feedback": [{"trait": "formality", "quality": quality}]}
            check(c.post(path, json=body, headers=h), 200)
        model = check(c.get(f"/v1/models/{HANDLE}", headers=h), 200)
        assert model["buffered_feedback"] == 2  # the test settings retrain at 3

        def fill(i: int) -> int:
            body = {"content": f"second {i}", "feedback": [{"trait": "formality", "quality": 1.0}]}
            return c.post(path, json=body, headers=h).status_code

        with ThreadPoolExecutor(2) as pool:
            assert list(pool.map(fill, range(2))) == [200, 200]
        with svc.ctx.reads() as s:
            model_id = s.scalar(select(Model.id).where(Model.handle == HANDLE))
            retrains = s.scalar(
                select(func.count()).select_from(Run).where(Run.model_id == model_id, Run.kind == "retrain")
            )
        assert retrains == 1
        model = wait_settled(c, HANDLE, h)
        assert model["state"] == "ready" and model["version_no"] == 2
