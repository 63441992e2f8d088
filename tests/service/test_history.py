"""GET /models/{h}/history: activations and tag moves, recorded as they happen."""

from __future__ import annotations

from datetime import datetime

from tests.support.service import Svc, check, error_code, make_model, train_ready


def _events(svc: Svc, handle: str, headers: dict[str, str]) -> list[dict]:
    body = check(svc.client.get(f"/v1/models/{handle}/history", headers=headers), 200)
    assert body["handle"] == handle
    return body["events"]


def _brief(events: list[dict]) -> list[tuple]:
    return [(e["kind"], e["version_no"], e["tag"], e["previous_version_no"]) for e in events]


def test_history_of_activations_and_tag_moves(svc: Svc) -> None:
    c, h = svc.client, svc.author
    handle = "acme.hist"
    make_model(c, h, handle)
    assert _events(svc, handle, h) == []
    train_ready(c, h, handle)
    check(c.post(f"/v1/models/{handle}/versions/prod", headers=h), 200)
    check(c.post(f"/v1/models/{handle}/versions/prod", headers=h), 200)  # same version again: no event
    train_ready(c, h, handle, reoptimize_params=True)
    check(c.post(f"/v1/models/{handle}/versions/prod", headers=h), 200)  # moves prod v1 → v2
    check(c.post(f"/v1/models/{handle}/versions/canary", headers=h), 200)
    assert check(c.delete(f"/v1/models/{handle}/versions/canary", headers=h), 200)["deleted"] is True
    assert check(c.delete(f"/v1/models/{handle}/versions/canary", headers=h), 200)["deleted"] is False

    events = _events(svc, handle, svc.scorer)  # a scoring key reads it too
    assert _brief(events) == [
        ("activated", 1, None, None),
        ("tagged", 1, "prod", None),
        ("activated", 2, None, 1),
        ("tagged", 2, "prod", 1),
        ("tagged", 2, "canary", None),
        ("untagged", 2, "canary", None),
    ]
    times = [datetime.fromisoformat(e["at"]) for e in events]
    assert times == sorted(times) and all(t.tzinfo is not None for t in times)
    version_1 = check(c.get(f"/v1/models/{handle}/versions/v1", headers=h), 200)
    assert times[0] >= datetime.fromisoformat(version_1["created_at"])


def test_history_auth(svc: Svc) -> None:
    make_model(svc.client, svc.author, "acme.hist_auth", with_data=False)
    assert error_code(svc.client.get("/v1/models/acme.hist_auth/history"), 401) == "unauthorized"
    assert error_code(svc.client.get("/v1/models/acme.hist_auth/history", headers=svc.other), 404) == (
        "model_not_found"
    )
    assert (
        error_code(svc.client.get("/v1/models/acme.nope/history", headers=svc.author), 404)
        == "model_not_found"
    )
