"""Which scoring service the workbench talks to, resolved once per session.

Order: a remote service entered on the Settings page, then `SCORING_API_URL` + `SCORING_API_KEY` from the
environment, else an embedded local service started through `core.local` (one per process, shared by
every browser session) that loads the demo models on its first start.

Team mode (`SCORING_TEAM=1` with `SCORING_API_URL`): one workbench server for a team against one service,
and no key shared by everyone: each browser signs in with its own key, which lives in that browser's session
only (docs/deployment.md, "A workbench for a team"). Until it has signed in, a browser gets `SignInNeeded`.

A remote key's scope and namespaces come from `GET /keys/current`; the working namespace is the one picked
in the sidebar, else `SCORING_NAMESPACE` when the key owns it, else the key's first namespace.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import streamlit as st

from app.environment import embedder_name, remote_settings_from_env
from app.prestart import take
from app.reads import invalidate, watched_client
from app.team_mode import team_mode, team_url
from core.client import Client, KeyInfo, NotFoundError
from core.contract import NAMESPACE_RE, PUBLIC_NAMESPACE

if TYPE_CHECKING:  # imported where the service starts
    from core.local import LocalService

REMOTE_KEY = "remote_backend"  # session_state key set by the Settings page (and by signing in, team mode)
NAMESPACE_KEY = "working_namespace"  # session_state: the namespace picked in the sidebar


class SignInNeeded(Exception):
    """Team mode, and this browser session has not signed in with its own key yet."""

    def __init__(self, url: str) -> None:
        super().__init__(f"Sign in with your API key for {url}.")
        self.url = url


@dataclass(frozen=True)
class Backend:
    client: Client
    mode: Literal["embedded", "remote"]
    url: str
    namespaces: tuple[str, ...]  # namespaces the key owns; the first is the working one
    embedder: str  # the embedded service's embedder for new models (SCORING_EMBEDDER)
    service: LocalService | None = field(default=None, compare=False)  # when embedded
    scope: str = "authoring"  # the key's scope: "authoring", or "scoring" (reads and scores only)
    owned: tuple[str, ...] = ()  # the key's namespaces in a stable order (for the picker); () = namespaces
    annotator: str | None = None  # who the key labels as (GET /keys/current `name`); None: an older service
    team: bool = False  # team mode: this browser signed in with its own key
    key: KeyInfo | None = field(default=None, compare=False)  # GET /keys/current; None: an older service

    @property
    def namespace(self) -> str:
        return self.namespaces[0]

    @property
    def choices(self) -> tuple[str, ...]:
        """The key's namespaces in a stable order, for the namespace picker."""
        return self.owned or self.namespaces

    @property
    def read_only(self) -> bool:
        return self.scope != "authoring"

    @property
    def label(self) -> str:
        return "embedded local service" if self.mode == "embedded" else f"remote {self.url}"


def parse_namespaces(text: str) -> tuple[str, ...]:
    """'a, b' -> ('a', 'b'); raises ValueError on a malformed namespace."""
    names = tuple(n.strip() for n in text.replace(";", ",").split(",") if n.strip())
    bad = [n for n in names if not NAMESPACE_RE.match(n)]
    if bad:
        raise ValueError(f"Not a valid namespace: {', '.join(bad)} (lowercase letters, digits, _ and -).")
    return names


@st.cache_resource(show_spinner="Starting the local scoring service…")
def _local_service(data_dir: str | None, embedder: str) -> LocalService:
    from core.local import start_local_service

    return take(data_dir, embedder) or start_local_service(data_dir, embedder=embedder)


@st.cache_resource
def _remote_client(url: str, key: str) -> Client:
    return watched_client(url, key)


@st.cache_resource
def _embedded_client(url: str, key: str) -> Client:
    return watched_client(url, key)


@dataclass
class DemoLoad:
    """The demo models' first load, in a background thread shared by every session of this process."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    started: bool = False
    done: bool = False
    first_created: threading.Event = field(default_factory=threading.Event)
    message: str = ""
    fraction: float = 0.0
    error: str | None = None

    @property
    def running(self) -> bool:
        return self.started and not self.done


@st.cache_resource
def demo_load() -> DemoLoad:
    return DemoLoad()


@st.cache_data(ttl=300, show_spinner=False)
def key_info(url: str, key: str) -> KeyInfo | None:
    """The key's `scope` and `namespaces` (GET /keys/current); None from a service without that endpoint.

    Raises for a bad key or an unreachable URL (errors are not cached, so a retry asks again).
    """
    try:
        return _remote_client(url, key).current_key()
    except NotFoundError:
        return None


def env_namespaces() -> tuple[str, ...]:
    """`SCORING_NAMESPACE` (comma-separated); the first one is preferred as the working namespace."""
    return parse_namespaces(os.environ.get("SCORING_NAMESPACE", ""))


def remote_settings() -> dict[str, Any] | None:
    """The remote service in effect (`url`, `key`): Settings page first, then the environment. In team mode
    only the key this browser signed in with, for the team's service (SignInNeeded before that)."""
    override: dict[str, Any] | None = st.session_state.get(REMOTE_KEY)
    if team_mode():
        url = team_url()
        if not override or override.get("url") != url:
            raise SignInNeeded(url)
        return override
    if override:
        return override
    return remote_settings_from_env()


def sign_in(key: str) -> KeyInfo | None:
    """Team mode: check `key` against the team's service and keep it in this browser's session only."""
    url, key = team_url(), key.strip()
    if not key:
        raise ValueError("Enter your API key.")
    info = key_info(url, key)  # raises for a key the service does not know
    st.session_state[REMOTE_KEY] = {"url": url, "key": key}
    st.session_state.pop(NAMESPACE_KEY, None)
    return info


def sign_out() -> None:
    st.session_state.pop(REMOTE_KEY, None)
    st.session_state.pop(NAMESPACE_KEY, None)


def working_first(owned: tuple[str, ...], preferred: tuple[str, ...]) -> tuple[str, ...]:
    """`owned` with the working namespace first: the first of `preferred` that the key owns, else owned[0]."""
    working = next((n for n in preferred if n in owned), owned[0])
    return (working, *(n for n in owned if n != working))


def get_backend() -> Backend:
    remote = remote_settings()
    if remote:
        info = key_info(remote["url"], remote["key"])
        if info is None:  # an older service: trust SCORING_NAMESPACE, as before /keys/current existed
            owned, scope, annotator = env_namespaces() or ("default",), "authoring", None
        else:
            owned, scope, annotator = tuple(info.namespaces) or (PUBLIC_NAMESPACE,), info.scope, info.name
        picked = st.session_state.get(NAMESPACE_KEY)
        preferred = ((picked,) if picked else ()) + env_namespaces()
        return Backend(
            client=_remote_client(remote["url"], remote["key"]),
            mode="remote",
            url=remote["url"],
            namespaces=working_first(owned, preferred),
            embedder=embedder_name(),
            scope=scope,
            owned=owned,
            annotator=annotator,
            team=team_mode(),
            key=info,
        )
    service = _local_service(os.environ.get("SCORING_DATA_DIR") or None, embedder_name())
    own = _embedded_key(service.url, service.api_key)
    return Backend(
        client=_embedded_client(service.url, service.api_key),
        mode="embedded",
        url=service.url,
        namespaces=(service.namespace,),
        embedder=embedder_name(),
        service=service,
        owned=(service.namespace,),
        annotator=own.name if own else None,
        key=own,
    )


def _embedded_key(url: str, key: str) -> KeyInfo | None:
    """The embedded service's own key: who it labels as, its role (asked once per process: it never
    changes)."""
    try:
        return _key_of(url, key)
    except Exception:  # noqa: BLE001 - the sidebar's line and the role's captions depend on it; asked again
        return None


@st.cache_data(show_spinner=False)
def _key_of(url: str, key: str) -> KeyInfo:
    return _embedded_client(url, key).current_key()


def ensure_demo_models(backend: Backend) -> None:
    """On the embedded service's first start (an empty namespace), load the demo models in the background.

    Training them takes about a minute with MiniLM on two cores: the first page shows at once instead,
    with their progress in the sidebar (`app/main.py`). This waits only until the first demo model exists
    (a second or two), so the first visit opens it.
    """
    if backend.mode != "embedded" or os.environ.get("SCORING_DEMO", "1") == "0":
        return
    state = demo_load()
    with state.lock:
        if state.started:
            return
        state.started = True
        if next(iter(backend.client.list_models(namespace=backend.namespace)), None) is not None:
            state.done = True
            return
        thread = threading.Thread(
            target=_load_demo_models, args=(backend.service, state), name="demo-models", daemon=True
        )
        thread.start()
    state.first_created.wait(timeout=15)


def _load_demo_models(service: LocalService, state: DemoLoad) -> None:
    from core.demo import load_demo_models

    def progress(message: str, fraction: float) -> None:
        state.message, state.fraction = message, min(max(float(fraction), 0.0), 1.0)
        if message.startswith(("importing", "training")) or "ready" in message or "exists" in message:
            state.first_created.set()  # the first model and its traits exist: a page may open it
        invalidate(service.url)  # the model list and states changed: pages read them afresh

    try:
        # Its own client: httpx clients are not shared across threads here.
        with service.client() as client:
            load_demo_models(client, service.namespace, train=True, progress=progress)
    except Exception as exc:  # noqa: BLE001 - shown in the sidebar; the workbench works without demos
        state.error = f"{type(exc).__name__}: {exc}"
    finally:
        state.done = True
        state.first_created.set()
        invalidate(service.url)
