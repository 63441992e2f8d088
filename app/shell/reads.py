"""Cached reads of the scoring API for the pages: what is cached, for how long, and when it is dropped.

Every rerun of a Streamlit page runs the whole script, and the sidebar and page heads read the same things
on each one (the model list, the model, its traits and versions). Those reads go through `st.cache_data` with
short TTLs, keyed by the backend (URL and a fingerprint of its key) and a *generation* number. Any write the
workbench sends (a request that is not a GET and not one of the read-only POSTs below) bumps the backend's
generation in `WriteWatch`, the transport of every client the workbench builds: the next read misses the
cache, in every browser session of this process. So a page never shows data older than its own writes, and
other writers (a background run, another user) show within the TTL.
"""

from __future__ import annotations

import hashlib
import threading
from typing import Any

import httpx
import streamlit as st

from core.client import Agreement, Client, Model, Sample, Trait, Version, normalize_base_url
from core.client.errors import ApiError
from core.contract import POOL_PAGE

TTL_S = 5  # other writers (a run finishing, another session) show within this
LIST_TTL_S = 30  # the model list: changes only through creates and archives, which bump the generation
# POSTs that only read (scoring, previews, suggestions): they leave every cached read valid.
READ_ONLY_POSTS = ("/score", "/score/compare", "/pool/suggest", "/traits/preview", ":analyze")


class _Generations:
    """Per backend URL, how many writes this process has sent (shared by every session and thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}

    def bump(self, url: str) -> None:
        with self._lock:
            self._counts[url] = self._counts.get(url, 0) + 1

    def of(self, url: str) -> int:
        return self._counts.get(url, 0)


GENERATIONS = _Generations()


class WriteWatch(httpx.BaseTransport):
    """An httpx transport that bumps the backend's generation after each write it carries."""

    def __init__(self, url: str, inner: httpx.BaseTransport | None = None) -> None:
        self.url = url
        self.inner = inner or httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        try:
            return self.inner.handle_request(request)
        finally:  # a failed or refused write may still have changed something: drop the cache anyway
            if is_write(request.method, request.url.path, request.content):
                GENERATIONS.bump(self.url)

    def close(self) -> None:
        self.inner.close()


def is_write(method: str, path: str, body: bytes = b"") -> bool:
    if method in ("GET", "HEAD", "OPTIONS"):
        return False
    if method == "POST" and path.rstrip("/").endswith("/score") and b'"feedback"' in body:
        return True  # a score carrying labels buffers them: the model's waiting count changed
    return not (method == "POST" and path.rstrip("/").endswith(READ_ONLY_POSTS))


def watched_client(url: str, key: str, **kwargs: Any) -> Client:
    """A client whose writes invalidate the cached reads of its service."""
    watch = WriteWatch(url)
    client = Client(url, key, transport=watch, **kwargs)
    watch.url = client.base_url  # the normalised URL, as `_scope` reads it
    return client


def invalidate(url: str) -> None:
    """Drop every cached read of the backend at `url` (for changes the workbench did not send itself)."""
    GENERATIONS.bump(normalize_base_url(url))


Scope = tuple[str, str, int]  # backend URL, key fingerprint, generation


def _scope(client: Client) -> Scope:
    fingerprint = hashlib.sha256((client.api_key or "").encode()).hexdigest()[:16]
    return client.base_url, fingerprint, GENERATIONS.of(client.base_url)


# Each cached function takes the client unhashed (`_client`) and the scope (URL, key fingerprint,
# generation) as its cache key. Errors are not cached: a failed read is asked again on the next run.


@st.cache_data(ttl=TTL_S, show_spinner=False, max_entries=500)
def _model(_client: Client, scope: Scope, handle: str) -> Model:
    return _client.get_model(handle)


def model(client: Client, handle: str) -> Model:
    """The model. Not cached while it is busy: its progress must move."""
    found = _model(client, _scope(client), handle)
    if found.state == "busy":
        _model.clear()
        return client.get_model(handle)
    return found


def _stamp(client: Client, handle: str) -> str:
    """What a background run changes on the model (its state, version, last run): part of the cache key of
    the model's traits, versions and samples, so a run that ended shows without waiting for the TTL."""
    try:
        found = model(client, handle)
    except Exception:  # noqa: BLE001 - the read itself reports errors; no stamp, the TTL still applies
        return ""
    op = found.last_operation
    run, status = (op.run_id, op.status) if op is not None else (None, None)
    return f"{found.state}|{found.version_no}|{run}|{status}"


@st.cache_data(ttl=TTL_S, show_spinner=False, max_entries=500)
def _traits(_client: Client, scope: Scope, handle: str, stamp: str) -> list[Trait]:
    return list(_client.list_traits(handle))


def traits(client: Client, handle: str) -> list[Trait]:
    return _traits(client, _scope(client), handle, _stamp(client, handle))


@st.cache_data(ttl=TTL_S, show_spinner=False, max_entries=500)
def _versions(_client: Client, scope: Scope, handle: str, stamp: str) -> list[Version]:
    return list(_client.list_versions(handle))


def versions(client: Client, handle: str) -> list[Version]:
    return _versions(client, _scope(client), handle, _stamp(client, handle))


@st.cache_data(ttl=TTL_S, show_spinner=False, max_entries=200)
def _samples_head(_client: Client, scope: Scope, handle: str, stamp: str, limit: int) -> list[Sample]:
    out: list[Sample] = []
    for s in _client.list_samples(handle, page_size=min(limit, 200)):
        out.append(s)
        if len(out) >= limit:
            break
    return out


def samples_head(client: Client, handle: str, limit: int = 200) -> list[Sample]:
    """The model's first `limit` samples (for presets and probe sets)."""
    return _samples_head(client, _scope(client), handle, _stamp(client, handle), limit)


@st.cache_data(ttl=LIST_TTL_S, show_spinner=False, max_entries=50)
def _handles(_client: Client, scope: Scope, namespaces: tuple[str, ...], limit: int) -> list[str]:
    handles: list[str] = []
    for ns in (*namespaces, None):
        try:
            for m in _client.list_models(namespace=ns):
                handles.append(m.handle)
                if len(handles) >= limit:
                    return list(dict.fromkeys(handles))
        except ApiError:
            continue  # a namespace the key cannot list: skip it, the picker still works
    return list(dict.fromkeys(handles))


def handles(client: Client, namespaces: tuple[str, ...], limit: int = 500) -> list[str]:
    """Models of the key's namespaces, then the public catalog (archived ones excluded), at most `limit`."""
    return _handles(client, _scope(client), namespaces, limit)


@st.cache_data(ttl=TTL_S, show_spinner=False, max_entries=100)
def _agreement(_client: Client, scope: Scope, handle: str, stamp: str, limit: int) -> Agreement:
    return _client.agreement(handle, limit=limit)


def agreement(client: Client, handle: str, limit: int = 20) -> Agreement:
    """How far the annotators of the model's labels agree, per trait (the Traits and Samples pages)."""
    return _agreement(client, _scope(client), handle, _stamp(client, handle), limit)


@st.cache_data(ttl=LIST_TTL_S, show_spinner=False, max_entries=100)
def _pool_metadata_keys(_client: Client, who: tuple[str, str], handle: str, pool_size: int) -> list[str]:
    page = _client.list_pool_page(handle, limit=POOL_PAGE.default)
    return sorted({key for text in page.items for key in (text.metadata or {})})


def pool_metadata_keys(client: Client, handle: str, pool_size: int) -> list[str]:
    """The metadata keys of the pool's first page of texts, sorted: what a metadata filter offers. One page,
    not the whole pool: an import keeps the same columns on every text, so its first texts name them. Keyed
    by the pool's size, not the generation: an import changes the size, a label (every key press of the
    Label page) does not, and must not cost a read of the pool's texts."""
    url, fingerprint, _ = _scope(client)
    return _pool_metadata_keys(client, (url, fingerprint), handle, pool_size)
