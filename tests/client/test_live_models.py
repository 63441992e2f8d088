"""Models endpoints against the real service: create, read, list across pages, update, delete."""

from __future__ import annotations

import pytest

from core.client import ApiError, Client, Model, Page
from core.embedders import MINILM_ID
from tests.support.client import NAMESPACE, Service


def test_health(client: Client) -> None:
    health = client.health()
    assert health.status == "ok" and health.version


def test_create_echoes_every_field(client: Client, service: Service) -> None:
    handle = service.handle("create")
    sources = [{"url": "https://example.org/data", "title": "Data", "license": "CC-BY-4.0"}]
    m = client.create_model(
        handle,
        description="tone of replies",
        scoring_method="balanced_cosine",
        kind="scoring",
        max_depth=3,
        additional_terms="internal use only",
        upstream_sources=sources,
        readme_markdown="# Tone",
        zero_data_retention=True,
    )
    assert isinstance(m, Model)
    assert (m.handle, m.namespace, m.name, m.state) == (handle, NAMESPACE, handle.split(".")[1], "draft")
    assert (m.max_depth, m.additional_terms, m.readme_markdown, m.zero_data_retention) == (
        3,
        "internal use only",
        "# Tone",
        True,
    )
    assert m.upstream_sources is not None and m.upstream_sources[0]["url"] == sources[0]["url"]
    assert m.version_no is None and m.last_operation is None and m.created_at is not None
    assert client.get_model(handle).model_dump() == m.model_dump()


def test_list_models_follows_cursors_across_pages(service: Service) -> None:
    with service.client() as c:
        prefix = f"page{next(service.counter)}"
        handles = [c.create_model(f"{NAMESPACE}.{prefix}-{i}").handle for i in range(7)]
        listed = [m.handle for m in c.list_models(namespace=NAMESPACE, page_size=3)]
        assert set(handles) <= set(listed)
        assert len(listed) == len(set(listed))  # no item twice across page boundaries

        first = c.list_models_page(namespace=NAMESPACE, limit=3)
        assert isinstance(first, Page) and len(first.items) == 3 and first.limit == 3
        assert first.next_cursor
        second = c.list_models_page(namespace=NAMESPACE, limit=3, cursor=first.next_cursor)
        assert not {m.handle for m in first.items} & {m.handle for m in second.items}
        assert [m.handle for m in first.items + second.items] == listed[:6]


def test_list_models_filters_state_and_public_catalog(client: Client, service: Service) -> None:
    handle = service.handle("archived")
    client.create_model(handle)
    client.delete_model(handle)
    default = {m.handle for m in client.list_models(namespace=NAMESPACE)}
    archived = {m.handle for m in client.list_models(namespace=NAMESPACE, state="archived")}
    assert handle not in default and handle in archived
    assert all(m.handle.startswith("public.") for m in client.list_models(namespace="public"))
    # no namespace: the key's namespaces' models, then the public catalog's
    everything = [m.handle for m in client.list_models()]
    assert default <= set(everything) and len(everything) == len(set(everything))
    assert {h.split(".")[0] for h in everything} <= {NAMESPACE, "public"}


def test_update_model_fields_and_auto_prune(client: Client, service: Service) -> None:
    handle = service.handle("patch")
    client.create_model(handle)
    m = client.update_model(handle, description="new words", auto_prune={"keep_unnamed": 5})
    assert m.description == "new words"
    assert m.auto_prune is not None and m.auto_prune["keep_unnamed"] == 5
    m = client.update_model(handle, auto_prune=None)  # null: back to the defaults
    assert m.auto_prune is None and m.description == "new words"


def test_delete_twice(client: Client, service: Service) -> None:
    handle = service.handle("delete")
    client.create_model(handle)
    first = client.delete_model(handle)
    assert (first.handle, first.deleted) == (handle, True)
    assert client.delete_model(handle).deleted is False
    assert client.get_model(handle).state == "archived"


def test_create_with_an_embedder(client: Client, service: Service) -> None:
    chosen = client.create_model(service.handle("emb"), embedder="minilm")
    assert chosen.embedder == MINILM_ID and client.get_model(chosen.handle).embedder == MINILM_ID
    assert client.create_model(service.handle("emb")).embedder == "hashing-v1-512"  # the service's default
    with pytest.raises(ApiError) as refused:
        client.create_model(service.handle("emb"), embedder="bge-small-en-v1.5")
    assert (refused.value.status, refused.value.code) == (422, "validation_error")
