"""The unlabelled pool and suggestions through the client against the real service."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from core.client import Client, ConflictError, NotFoundError, PermissionDeniedError
from harness.ports import free_port
from tests.support.client import NEGATIVE, POSITIVE, FaultInjector, Service, make_draft


def test_import_list_suggest_and_clear(client: Client, service: Service) -> None:
    handle = make_draft(client, service.handle("pool"))
    texts = [f"pool text {i} about the quarterly figures" for i in range(2500)]
    seen: list[tuple[int, int]] = []
    report = client.import_pool(
        handle, texts, batch_size=1000, progress=lambda done, total: seen.append((done, total))
    )
    ids = report.ids
    assert report.complete and report.stored == report.added == 2500 and len(set(ids)) == 2500
    assert seen == [(0, 2500), (1000, 2500), (2000, 2500), (2500, 2500)]
    again = client.import_pool(handle, texts[:10])
    assert again.ids == ids[:10] and again.added == 0  # nothing new
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


def test_pool_import_shrinks_batches_on_a_slow_service_and_finishes(
    service: Service, faults: FaultInjector, recording_sleep: tuple[list[float], Callable[[float], None]]
) -> None:
    delays, sleep = recording_sleep
    with service.client(transport=faults, retries=0) as c:
        c._sleep = sleep
        handle = make_draft(c, service.handle("poolslow"))
        texts = [f"slow pool text {i} about the weather" for i in range(1000)]
        # Three batches in a row time out after the service stored them (the answer is lost), one is a 503.
        faults.inject("read-timeout", method="POST", path="/pool", times=3)
        faults.inject("status-before", method="POST", path="/pool", status=503, times=1)
        seen: list[tuple[int, int]] = []
        report = c.import_pool(handle, texts, progress=lambda done, total: seen.append((done, total)))
        assert report.complete and report.error is None and report.stored == 1000
        sizes = [len(json.loads(r.content)["texts"]) for r in faults.attempts("POST", "/pool")]
        assert sizes[:8] == [250, 125, 62, 31, 15, 30, 60, 120]  # halved on each failure, doubled after
        assert delays == [2.0, 4.0, 8.0, 16.0]
        assert seen[-1] == (1000, 1000) and [d for d, _ in seen] == sorted(d for d, _ in seen)
        assert c.list_pool_page(handle, limit=1).total == 1000  # resent batches added nothing twice


def test_pool_import_that_stops_says_how_many_are_stored_and_resumes(
    client: Client, service: Service
) -> None:
    handle = make_draft(client, service.handle("poolresume"))
    texts = [f"resumable text {i}" for i in range(600)]
    texts[450] = "x" * 20_001  # over the service's text limit: the batch holding it is refused whole
    report = client.import_pool(handle, texts, batch_size=200)
    assert not report.complete and report.stored == 400 and len(report.ids) == 400
    assert report.error is not None and report.error.startswith("stopped at text 451 of 600:")
    assert client.list_pool_page(handle, limit=1).total == 400

    texts[450] = "resumable text 450, fixed"
    resumed = client.import_pool(handle, texts, batch_size=200, start=report.stored)
    assert resumed.complete and resumed.stored == 600 and resumed.added == 200
    again = client.import_pool(handle, texts)  # everything again: nothing new
    assert again.complete and again.added == 0 and again.ids == report.ids + resumed.ids
    assert client.list_pool_page(handle, limit=1).total == 600


def test_pool_import_against_no_service_stops_at_once_and_says_so(
    recording_sleep: tuple[list[float], Callable[[float], None]],
) -> None:
    """Nothing listens on the port: smaller batches cannot help, so the import stops after the client's own
    connection retries instead of halving and pausing for a minute or more."""
    delays, sleep = recording_sleep
    with Client(f"http://127.0.0.1:{free_port()}/v1", "sk_none", retries=2) as c:
        c._sleep = sleep
        report = c.import_pool("acme.gone", [f"text {i}" for i in range(1000)])
    assert not report.complete and report.stored == 0 and report.batches == 1
    assert report.error is not None and report.error.startswith("stopped at text 1 of 1000:")
    assert "ConnectError" in report.error
    assert len(delays) == 2  # the client's two retries of the connection, nothing more
