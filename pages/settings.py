"""Settings: which service the workbench uses (embedded or a remote URL and key) and the namespaces."""

from __future__ import annotations

import streamlit as st

from app.backend import REMOTE_KEY, embedder_name, get_backend, parse_namespaces
from app.widgets import MODEL_KEY, guard, show_error
from core.client import Client

st.title("Settings")
if flash := st.session_state.pop("settings_flash", None):
    st.success(flash)

try:
    backend = get_backend()
    st.markdown(
        f"**In use:** {backend.label}  \n**Namespaces:** {', '.join(f'`{n}`' for n in backend.namespaces)}"
    )
    if backend.mode == "embedded":
        st.caption(
            f"The embedded service listens on `{backend.url}` (loopback only), "
            "with its own data directory and key."
        )
except Exception as exc:  # noqa: BLE001
    show_error(exc, "Connecting to the scoring service")

st.subheader("Remote service")
st.caption(
    "Set `SCORING_API_URL`, `SCORING_API_KEY` and `SCORING_NAMESPACE` before starting, or enter them here "
    "(kept for this browser session only)."
)
current = st.session_state.get(REMOTE_KEY) or {}
with st.form("remote"):
    url = st.text_input(
        "Service URL", value=current.get("url", ""), placeholder="https://scoring.example.com/v1"
    )
    key = st.text_input("API key", value=current.get("key", ""), type="password")
    namespaces = st.text_input(
        "Namespaces the key owns (comma-separated; the first is where new models go)",
        value=", ".join(current.get("namespaces", [])),
    )
    connect = st.form_submit_button("Connect", type="primary")
if connect:
    with guard("Connecting"):
        names = parse_namespaces(namespaces)
        if not (url.strip() and key.strip() and names):
            raise ValueError("URL, key and at least one namespace are needed.")
        probe = Client(url.strip(), key.strip())
        try:
            probe.list_models_page(names[0], limit=1)  # proves the URL, the key and the namespace
        finally:
            probe.close()
        st.session_state[REMOTE_KEY] = {"url": url.strip(), "key": key.strip(), "namespaces": names}
        st.session_state[MODEL_KEY] = None
        st.session_state["settings_flash"] = f"Connected to {url.strip()}."
        st.rerun()

if st.session_state.get(REMOTE_KEY) and st.button("Forget the remote service (back to the default backend)"):
    st.session_state.pop(REMOTE_KEY, None)
    st.session_state[MODEL_KEY] = None
    st.session_state["settings_flash"] = "Using the default backend again."
    st.rerun()

st.subheader("Local engine")
st.caption(
    f"Local previews, version comparisons and sample flags embed texts with `{embedder_name()}` "
    "(environment variable `SCORING_EMBEDDER`: `minilm` or `hashing`)."
)
