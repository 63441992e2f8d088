"""Which scoring service the workbench talks to, resolved once per session.

Order: a remote service entered on the Settings page, then `SCORING_API_URL` + `SCORING_API_KEY` from the
environment, else an embedded local service started through `core.local` (one per process, shared by
every browser session) that loads the demo models on its first start.

Team mode (`SCORING_TEAM=1` with `SCORING_API_URL`): one workbench server for a team against one service,
and no key shared by everyone (docs/deployment-team.md, "A workbench for a team"). With the team's identity
provider configured (app/shell/signin_config.py), people sign in as themselves (`st.login`) and each client
sends the person's ID token; otherwise each browser signs in with its own key, which lives in that browser's
session only. Until it has signed in, a browser gets `SignInNeeded`. Signing out forgets everything of that
person in the tab (`sign_out`).

A remote key's scope and namespaces come from `GET /keys/current`; the working namespace is the one picked
in the sidebar, else `SCORING_NAMESPACE` when the key owns it, else the key's first namespace.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import streamlit as st

from app.config import workbench_settings
from app.shell.environment import embedder_name, remote_settings_from_env
from app.shell.prestart import take
from app.shell.reads import invalidate, watched_client
from app.shell.signin_config import signin_config
from app.shell.team_mode import team_mode, team_url
from core.client import AuthenticationError, Client, KeyInfo, NotFoundError
from core.contract import AUTO_EMBEDDER, DEFAULT_EMBEDDER, NAMESPACE_RE, PUBLIC_NAMESPACE, Action

if TYPE_CHECKING:  # imported where the service starts
    from core.local import LocalService

REMOTE_KEY = "remote_backend"  # session_state key set by the Settings page (and by signing in, team mode)
NAMESPACE_KEY = "working_namespace"  # session_state: the namespace picked in the sidebar


OWNER_KEY = "signed_in_as"  # session_state: whose session this is (a person's subject, or a key's prefix)


class SignInNeeded(Exception):
    """Team mode, and this browser session has not signed in (with its own key, or as a person) yet."""

    def __init__(self, url: str) -> None:
        super().__init__(f"Sign in for {url}.")
        self.url = url


class NoNamespace(Exception):
    """A person signed in who belongs to no namespace of the service (never added, or removed)."""

    def __init__(self, who: str) -> None:
        super().__init__(
            f"You are signed in as {who}, who belongs to no namespace of this service: ask an owner of your "
            "team's namespace to add you (Team page)."
        )
        self.who = who


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
    team: bool = False  # team mode: this browser signed in with its own key, or as a person
    # GET /keys/current (None: an older service); a person's `role` is their role in the working namespace.
    key: KeyInfo | None = field(default=None, compare=False)

    @property
    def person(self) -> bool:
        """Signed in as a person through the team's identity provider (not with a key)."""
        return self.key is not None and self.key.is_person

    def may(self, action: Action) -> bool:
        """Whether the caller may do `action` in the working namespace (a service without roles: yes)."""
        return self.key is None or self.key.may(action, self.namespace)

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


# Bounded: a signed-in person's ID token is renewed at each sign-in, and each token is a client of its own.
@st.cache_resource(max_entries=200)
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


@st.cache_data(ttl=60, show_spinner=False, max_entries=500)  # keyed by the credential: never another's
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
    return parse_namespaces(workbench_settings().namespace)


def remote_settings() -> dict[str, Any] | None:
    """The remote service in effect (`url`, `key`): Settings page first, then the environment. In team mode
    only the team's service, with the ID token of the person signed in through the identity provider, or
    the key this browser signed in with (SignInNeeded before that)."""
    override: dict[str, Any] | None = st.session_state.get(REMOTE_KEY)
    if team_mode():
        url = team_url()
        if signin_config() is not None:
            token = signed_in_token()
            if token is None:
                raise SignInNeeded(url)
            return {"url": url, "key": token}
        if not override or override.get("url") != url:
            raise SignInNeeded(url)
        return override
    if override:
        return override
    return remote_settings_from_env()


def signed_in_token() -> str | None:
    """The ID token of the person signed in through the identity provider (Streamlit's identity cookie
    keeps them signed in across reloads); None when nobody is. A session that was someone else's is
    emptied first: nothing of one person ever shows to the next in the same tab."""
    if not st.user.is_logged_in:
        forget_session_of_another(None)
        return None
    token = st.user.tokens.get("id")
    forget_session_of_another(f"person:{st.user.get('sub') or st.user.get('email')}")
    return str(token) if token else None


def forget_session_of_another(owner: str | None) -> None:
    """Empty this tab's session when it belonged to someone else (or to nobody and now to someone): its
    queue, last label, undo, counters, picked model and namespace are theirs."""
    if st.session_state.get(OWNER_KEY) != owner:
        st.session_state.clear()
        if owner is not None:
            st.session_state[OWNER_KEY] = owner


def sign_in(key: str) -> KeyInfo | None:
    """Team mode with keys: check `key` against the team's service and keep it in this browser's session
    only. What the tab held before is forgotten."""
    url, key = team_url(), key.strip()
    if not key:
        raise ValueError("Enter your API key.")
    info = key_info(url, key)  # raises for a key the service does not know
    forget_session_of_another(f"key:{key[:15]}")
    st.session_state[REMOTE_KEY] = {"url": url, "key": key}
    return info


def end_person_session() -> None:
    """A person's sign-out on the service: it refuses every ID token of theirs issued until now, so every
    other tab and browser of theirs (a copied cookie too) is signed out at its next run. Already refused
    (signed out elsewhere, expired): nothing more to end."""
    token = signed_in_token()
    if token is None:
        return
    with contextlib.suppress(AuthenticationError):
        _remote_client(team_url(), token).sign_out()


SIGNED_OUT = "signed_out"  # session_state: (why the service refused the person's sign-in, what was lost)


def mark_signed_out(reason: str, lost: str = "") -> None:
    """The service no longer takes this person's sign-in (signed out in another tab, idle): the tab's next
    run shows the signed-out page (app/main.py), saying `lost` (a key press not stored)."""
    st.session_state[SIGNED_OUT] = (reason, lost)


def sign_out() -> None:
    """Forget everything of the person signed in, in this tab: every session value (the Label page's
    queue, last label and undo, counters, picks) and their key; their cached reads are keyed by their
    credential, so no one else's read can find them. With the identity provider, `st.logout` follows."""
    st.session_state.clear()
    key_info.clear()  # the next person's first read asks the service (it may have changed roles meanwhile)


def _in_namespace(info: KeyInfo, namespace: str) -> KeyInfo:
    """A person's key info with `role` their role in `namespace`: what every page's role check reads
    (app/shell/roles.py); a key has one role everywhere."""
    if not info.is_person:
        return info
    return info.model_copy(update={"role": info.role_in(namespace)})


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
        elif info.is_person and not info.namespaces:
            raise NoNamespace(info.name or info.email or "someone")
        else:
            owned, scope, annotator = tuple(info.namespaces) or (PUBLIC_NAMESPACE,), info.scope, info.name
        picked = st.session_state.get(NAMESPACE_KEY)
        preferred = ((picked,) if picked else ()) + env_namespaces()
        namespaces = working_first(owned, preferred)
        return Backend(
            client=_remote_client(remote["url"], remote["key"]),
            mode="remote",
            url=remote["url"],
            namespaces=namespaces,
            embedder=embedder_name(),
            scope=scope,
            owned=owned,
            annotator=annotator,
            team=team_mode(),
            key=_in_namespace(info, namespaces[0]) if info is not None else None,
        )
    service = _local_service(workbench_settings().local_data_dir, embedder_name())
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
    if backend.mode != "embedded" or not workbench_settings().demo:
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
            # The models first start trains stay on e5-small where new models default to `auto`: their
            # 40 labels a pole of 12-word texts would compare embedders, and the first comparison on a machine
            # builds mpnet-base's int8 graph (minutes of CPU) before the demo is ready. The draft is the
            # visitor's to train, on `auto`.
            first = DEFAULT_EMBEDDER if workbench_settings().embedder == AUTO_EMBEDDER else None
            load_demo_models(client, service.namespace, train=True, progress=progress, trained_embedder=first)
    except Exception as exc:  # noqa: BLE001 - shown in the sidebar; the workbench works without demos
        # Plain words (a class name means nothing on a page): the client's errors are sentences already.
        state.error = str(exc).strip() or f"an unexpected {type(exc).__name__}"
    finally:
        state.done = True
        state.first_created.set()
        invalidate(service.url)
