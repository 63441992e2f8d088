"""Buffered score feedback through the client against the real service: list it, withdraw a label."""

from __future__ import annotations

import pytest

from core.client import Client, NotFoundError, PermissionDeniedError
from tests.support.client import Service, make_draft


def test_list_and_withdraw_buffered_feedback(client: Client, service: Service) -> None:
    handle = make_draft(client, service.handle("fb"))
    client.wait(handle, client.train(handle, "low").run_id, timeout=120)
    buffer = client.feedback_page(handle)
    assert buffer.items == [] and buffer.buffered == 0 and buffer.retrain_at and buffer.retrain_at >= 2
    client.score(handle, "Please accept our apologies.", feedback=[{"trait": "formality", "quality": 1.0}])
    client.score(handle, "a label sent by mistake", feedback=[{"trait": "formality", "quality": 1.0}])
    labels = list(client.list_feedback(handle, page_size=1))  # one page at a time, all of them
    assert [(f.trait, f.text, f.quality) for f in labels] == [
        ("formality", "Please accept our apologies.", 1.0),
        ("formality", "a label sent by mistake", 1.0),
    ]
    out = client.withdraw_feedback(handle, labels[1].id)
    assert out.deleted and out.buffered == 1 == client.get_model(handle).buffered_feedback
    with pytest.raises(NotFoundError):
        client.withdraw_feedback(handle, labels[1].id)
    with service.client("scorer") as scorer, pytest.raises(PermissionDeniedError):
        scorer.feedback_page(handle)
