"""Client.history against the real service."""

from __future__ import annotations

import pytest

from core.client import NotFoundError
from tests.client.conftest import Service, make_draft


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
