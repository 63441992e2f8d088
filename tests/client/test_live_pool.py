"""The unlabelled pool and suggestions through the client against the real service."""

from __future__ import annotations

import pytest

from core.client import Client, ConflictError, NotFoundError, PermissionDeniedError
from tests.client.conftest import NEGATIVE, POSITIVE, Service, make_draft


def test_import_list_suggest_and_clear(client: Client, service: Service) -> None:
    handle = make_draft(client, service.handle("pool"))
    texts = [f"pool text {i} about the quarterly figures" for i in range(2500)]
    seen: list[tuple[int, int]] = []
    ids = client.import_pool(handle, texts, progress=lambda done, total: seen.append((done, total)))
    assert len(set(ids)) == 2500 and seen == [(1000, 2500), (2000, 2500), (2500, 2500)]
    assert client.import_pool(handle, texts[:10]) == ids[:10]  # nothing new
    page = client.list_pool_page(handle, limit=7)
    assert page.total == 2500 and len(page.items) == 7 and page.next_cursor
    assert [p.id for p in client.list_pool(handle, page_size=500)] == sorted(ids)

    got = client.suggest(handle, "formality", k=5, mode="uncertain")
    assert got.mode == "uncertain" and len(got.items) == 5 and got.pool_size == 2500
    assert all(s.score is not None for s in got.items)
    assert client.delete_pool_text(handle, got.items[0].id).deleted is True
    with pytest.raises(NotFoundError):
        client.delete_pool_text(handle, got.items[0].id)
    assert client.clear_pool(handle) == 2499
    assert client.suggest(handle, "formality").items == []
    with pytest.raises(ValueError, match="1 to 1000"):
        client.add_pool_texts(handle, [])


def test_pool_rules(client: Client, service: Service) -> None:
    handle = make_draft(client, service.handle("poolrules"), samples=False)
    with service.client("scorer") as scorer, pytest.raises(PermissionDeniedError):
        scorer.add_pool_texts(handle, ["hello"])
    with service.client("outsider") as outsider, pytest.raises(NotFoundError):
        outsider.list_pool_page(handle)
    client.update_model(handle, zero_data_retention=True)
    with pytest.raises(ConflictError) as refused:
        client.add_pool_texts(handle, POSITIVE + NEGATIVE)
    assert refused.value.code == "zero_data_retention"
