"""`last_operation.queue_position`: a queued run's place in line, for every model read and listing."""

from __future__ import annotations

from typing import Any

from tests.support.service import Svc, check, error_code, make_model


def _op(svc: Svc, handle: str, headers: dict[str, str]) -> dict[str, Any]:
    model = check(svc.client.get(f"/v1/models/{handle}", headers=headers), 200)
    return model["last_operation"]


def _train(svc: Svc, handle: str, headers: dict[str, str]) -> str:
    body = {"effort": "low"}
    started = check(svc.client.post(f"/v1/models/{handle}/train", json=body, headers=headers), 202)
    return str(started["run_id"])


def test_queued_runs_are_numbered_in_order_across_namespaces(idle_svc: Svc) -> None:
    svc = idle_svc  # no worker: runs stay queued until the test executes them
    handles = ["acme.q1", "acme.q2", "lab.q3"]
    for handle in handles:
        make_model(svc.client, svc.author, handle)
    make_model(svc.client, svc.other, "other.q4")
    runs = [_train(svc, h, svc.author) for h in handles] + [_train(svc, "other.q4", svc.other)]

    assert [_op(svc, h, svc.author)["queue_position"] for h in handles] == [1, 2, 3]
    # Another tenant's run waits for the same worker, behind everyone queued before it.
    assert _op(svc, "other.q4", svc.other)["queue_position"] == 4
    listed = check(svc.client.get("/v1/models", params={"namespace": "acme"}, headers=svc.author), 200)
    assert {m["handle"]: m["last_operation"]["queue_position"] for m in listed["items"]} == {
        "acme.q1": 1,
        "acme.q2": 2,
    }
    # Read with the model, under the model's read rule: no key 401, another namespace's key refused.
    assert _op(svc, "acme.q2", svc.scorer)["queue_position"] == 2
    assert error_code(svc.client.get("/v1/models/acme.q2"), 401) == "unauthorized"
    other = svc.client.get("/v1/models/acme.q2", headers=svc.other)
    assert other.status_code in (403, 404) and "queue_position" not in other.text

    svc.ctx.executor.execute(runs[0])  # the first in line runs and succeeds: everyone moves up
    done = _op(svc, "acme.q1", svc.author)
    assert done["status"] == "succeeded" and done["queue_position"] is None
    assert [_op(svc, h, svc.author)["queue_position"] for h in handles[1:]] == [1, 2]
    assert _op(svc, "other.q4", svc.other)["queue_position"] == 3


def test_a_model_that_never_ran_has_no_position(idle_svc: Svc) -> None:
    make_model(idle_svc.client, idle_svc.author, "acme.fresh")
    assert _op(idle_svc, "acme.fresh", idle_svc.author) is None
