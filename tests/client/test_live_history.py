"""Client.history against the real service."""

from __future__ import annotations

import pytest

from core.client import NotFoundError, PermissionDeniedError
from tests.support.client import Service, make_draft


def test_history(service: Service) -> None:
    with service.client() as c:
        handle = make_draft(c, service.handle("history"))
        c.wait(handle, c.train(handle, effort="low").run_id, timeout=60)
        c.tag_version(handle, "prod")
        c.untag_version(handle, "prod")
    with service.client("scorer") as c:
        events = c.history(handle)
    assert [(e.kind, e.version_no, e.tag) for e in events] == [
        ("activated", 1, None),
        ("tagged", 1, "prod"),
        ("untagged", 1, "prod"),
    ]
    assert events[0].at <= events[1].at <= events[2].at
    with service.client("outsider") as c, pytest.raises(NotFoundError):
        c.history(handle)


def test_reopen_then_train_the_next_version(service: Service) -> None:
    with service.client() as c:
        handle = make_draft(c, service.handle("reopen"))
        c.wait(handle, c.train(handle, effort="low").run_id, timeout=60)
        model = c.reopen(handle)
        assert (model.state, model.version_no) == ("draft", 1)
        assert model.last_operation is not None and model.last_operation.kind == "reopen"
        assert c.reopen(handle).last_operation == model.last_operation  # a repeat changes nothing
        sample = next(iter(c.list_samples(handle)))
        c.delete_sample(handle, sample.id)
        model = c.wait(handle, c.train(handle, effort="low").run_id, timeout=60)
        assert (model.state, model.version_no) == ("ready", 2)
        assert [(e.kind, e.version_no) for e in c.history(handle)] == [
            ("activated", 1),
            ("reopened", 1),
            ("activated", 2),
        ]
    with service.client("scorer") as c, pytest.raises(PermissionDeniedError):
        c.reopen(handle)
