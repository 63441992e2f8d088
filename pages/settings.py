"""Settings: which service the workbench uses (embedded, or a remote URL and key) and what the key may do."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import pydantic
import streamlit as st

from app.scoring.demo import PUBLIC_URL_KEY, public_base_url
from app.shell.backend import NAMESPACE_KEY, REMOTE_KEY, Backend, get_backend, key_info
from app.shell.environment import embedder_name
from app.shell.signin_config import signin_config
from app.shell.team_mode import team_mode
from app.ui.flash import say_once
from app.ui.inert import code, escape_md, link_target
from app.ui.widgets import MODEL_KEY, guard, show_error
from core.client import Client, NotFoundError
from core.contract import AUTO_EMBEDDER, DEFAULT_EMBEDDER, EMBEDDER_NAMES


def embedders_note() -> str:
    """Which embedders (embedders training may use) this installation has, in words (markdown)."""
    from core.embedders.mpnet_quantized import MPNET_QINT8_ID
    from core.embedders.mpnet_source import INSTALL_HINT
    from core.embedders.registry import EMBEDDERS, available_embedders, short_name

    have = available_embedders()
    fetched = " (weights fetched at install)"
    how = f" is not installed ({INSTALL_HINT})"
    names = [code(short_name(b)) + (fetched if b == MPNET_QINT8_ID else "") for b in have]
    missing = [code(short_name(b)) + how for b in EMBEDDERS if b not in have]
    said = ", ".join(names)
    if missing:
        said += "; " + "; ".join(missing)
    return "Embedders installed here: " + said + "."


def _embedded_key(backend: Backend) -> None:
    """The embedded service's own key, for scripts, notebooks and Perspective clients on this computer
    (without it they get 403 CREDENTIALS_MISSING). Only for the embedded service: a remote key is the
    user's own, typed here or set in the environment."""
    service = backend.service
    assert service is not None  # an embedded backend carries its service
    with st.expander("Key for scripts and Perspective clients on this computer"):
        st.caption(
            "An authoring key of the embedded service (kept in its data directory). Use it with the Python "
            "client (`Client(url, key)`), as `Authorization: Bearer <key>`, or as a Perspective client's "
            "`key=` (the Perspective routes answer at the service's address without `/v1`). The code boxes "
            "have a copy button."
        )
        st.code(service.api_key, language=None)
        base = backend.url.removesuffix("/v1")
        st.code(f"{base}/v1alpha1/comments:analyze?key={service.api_key}", language=None)


st.title("Settings")
say_once("settings_flash")

try:
    backend = get_backend()
    st.markdown(
        f"**In use:** {escape_md(backend.label)}  \n"
        f"**Namespaces:** {', '.join(code(n) for n in backend.choices)}"
        f" (working: {code(backend.namespace)})  \n**Key scope:** {code(backend.scope)}"
        + (f"  \n**You label as:** {code(backend.annotator)}" if backend.annotator else "")
    )
    st.markdown(
        f"**API docs:** [{escape_md(backend.url)}/docs]({link_target(backend.url)}/docs): every endpoint "
        "with its request and answer, tried out in the browser with a key (*Authorize*)."
    )
    if backend.read_only:
        st.info(
            "A scoring key reads and scores models; the authoring pages are read-only with it.",
            icon=":material/lock:",
        )
    if backend.mode == "embedded":
        st.caption(
            f"The embedded service listens on {code(backend.url)} (loopback only), "
            "with its own data directory and key. The address stays the same from one start to the next "
            "(its port is kept in the data directory)."
        )
        if backend.service is not None and backend.service.port_note:
            st.warning(backend.service.port_note, icon=":material/swap_horiz:")
        _embedded_key(backend)
except Exception as exc:  # noqa: BLE001
    show_error(exc, "Connecting to the scoring service", on_settings=True)

if team_mode() and signin_config() is not None:  # a team's workbench: people sign in as themselves
    st.subheader("You")
    st.caption(
        "This workbench is shared by a team: you signed in through your team's identity provider, and the "
        "service decides what you may do from your role in each namespace (an owner changes it on the Team "
        "page). Sign out in the sidebar to end your session in this tab."
    )
elif team_mode():  # a team's workbench: the service is fixed, and each browser signs in with its own key
    st.subheader("Your key")
    st.caption(
        "This workbench is shared by a team: you signed in with your own key, kept in this browser tab's "
        "session only. Sign out in the sidebar to use another key."
    )
else:
    st.subheader("Remote service")
    st.caption(
        "Set `SCORING_API_URL` and `SCORING_API_KEY` before starting, or enter them here (kept for this "
        "browser session only). The key's namespaces come from the service; `SCORING_NAMESPACE` picks the "
        "working one."
    )
    current = st.session_state.get(REMOTE_KEY) or {}
    with st.form("remote"):
        url = st.text_input(
            "Service URL", value=current.get("url", ""), placeholder="https://scoring.example.com/v1"
        )
        key = st.text_input("API key", value=current.get("key", ""), type="password")
        connect = st.form_submit_button("Connect", type="primary")
    if connect:
        with guard("Connecting", on_settings=True):
            url, key = url.strip(), key.strip()
            if not (url and key):
                raise ValueError("Enter both the service URL and an API key.")
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError(
                    f"“{url}” is not a service URL: it starts with http:// or https://, "
                    "e.g. https://scoring.example.com/v1."
                )
            try:
                if key_info(url, key) is None:  # no /keys/current: prove the URL and key another way
                    with Client(url, key) as probe:
                        probe.list_models_page(limit=1)
            except (NotFoundError, json.JSONDecodeError, pydantic.ValidationError):
                # A 404, or a page that is not the service's JSON (a website, a proxy's login page): the URL
                # reaches a web server, but not the scoring service.
                raise ValueError(
                    f"Something answers at {url}, but not a scoring service: check the URL (the service's "
                    "address ends in /v1)."
                ) from None
            st.session_state[REMOTE_KEY] = {"url": url, "key": key}
            st.session_state.pop(NAMESPACE_KEY, None)
            st.session_state[MODEL_KEY] = None
            st.session_state["settings_flash"] = f"Connected to {url}."
            st.rerun()

    if st.session_state.get(REMOTE_KEY) and st.button(
        "Forget the remote service (back to the default backend)"
    ):
        st.session_state.pop(REMOTE_KEY, None)
        st.session_state.pop(NAMESPACE_KEY, None)
        st.session_state[MODEL_KEY] = None
        st.session_state["settings_flash"] = "Using the default backend again."
        st.rerun()


st.subheader("Shared links")
st.caption(
    "The Demo page's share link points at this address, e.g. `https://workbench.example.com` (the address "
    "others use to open this workbench). Kept for this browser session; `SCORING_PUBLIC_URL` sets it for "
    "everyone. Without it the link names the address in this browser, which others cannot open when it is "
    "`localhost`."
)


def _public_url_changed() -> None:
    st.session_state[PUBLIC_URL_KEY] = st.session_state["public_url_input"].strip()


# A widget key of its own: Streamlit drops a widget's state on pages that do not draw it.
st.session_state["public_url_input"] = public_base_url() or ""
st.text_input(
    "Public address of the workbench",
    key="public_url_input",
    value=st.session_state["public_url_input"],  # also its default: a box drawn afresh shows the address
    on_change=_public_url_changed,
    placeholder="https://workbench.example.com",
)
if (public := public_base_url()) and urlsplit(public).scheme not in ("http", "https"):
    st.warning(f"“{escape_md(public)}” does not start with http:// or https://: shared links will not open.")

st.subheader("Local engine")
st.caption(
    f"New models of the embedded service get {code(embedder_name())} (environment variable "
    f"`SCORING_EMBEDDER`: {', '.join(code(n) for n in EMBEDDER_NAMES)}; `{AUTO_EMBEDDER}` by default). Local "
    "previews, the label curve and sample flags embed texts with the model's own embedder: for "
    f"`{AUTO_EMBEDDER}`, the one its serving version was trained on (`{DEFAULT_EMBEDDER}` until it has one); "
    "version comparisons with each version's."
)
st.caption(
    f"{embedders_note()} A model set to `{AUTO_EMBEDDER}` trains on both of them (scored by the mean of the "
    "two models' scores) where its samples' median text has 3 words or more and most are in English; else "
    f"it keeps `{DEFAULT_EMBEDDER}`, and each version says why (docs/embedders.md)."
)
