"""Entry point of the workbench: `streamlit run app/main.py`.

Resolves the backend, loads the demo models on the embedded service's first start, draws the sidebar
(backend, namespace, model picker shared by every page) and hands over to the page the user chose.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `streamlit run app/main.py` puts app/ on the path, not the project root
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

from app.samples.grid import keep_unsaved  # noqa: E402
from app.shell.backend import (  # noqa: E402
    NAMESPACE_KEY,
    SIGNED_OUT,
    Backend,
    DemoLoad,
    NoNamespace,
    SignInNeeded,
    demo_load,
    ensure_demo_models,
    get_backend,
)
from app.shell.last_model import last_picked, remember  # noqa: E402
from app.shell.signin_config import signin_config  # noqa: E402
from app.team.sign_in import expired_page, identity, no_namespace_page, sign_in_page  # noqa: E402
from app.ui.inert import code, escape_md  # noqa: E402
from app.ui.navigation import navigation  # noqa: E402
from app.ui.rerun_requests import filter_rerun_requests  # noqa: E402
from app.ui.widget_states import iterate_widget_states_on_a_copy  # noqa: E402
from app.ui.widgets import MODEL_KEY, guard, list_handles, show_error  # noqa: E402
from core.client import AuthenticationError  # noqa: E402

st.set_page_config(page_title="Scoring Workbench", page_icon=":material/bar_chart:", layout="wide")
# A late rerun of the left page's fragment would blank the page moved to, and a timer's rerun could carry a
# click twice (app/ui/rerun_requests.py); a widget state added during a page switch stopped the run
# (app/ui/widget_states.py).
filter_rerun_requests()
iterate_widget_states_on_a_copy()


def default_handle(handles: list[str], namespace: str) -> str | None:
    """What a first visit opens: the tagged demo model when it is there, else the first model listed."""
    try:
        from core.demo import read_demo_model, read_manifest

        demos = [read_demo_model(e.slug).name for e in read_manifest() if e.on_first_start == "train_and_tag"]
    except ValueError:  # unreadable sample data: no preferred demo
        demos = []
    preferred = [f"{namespace}.{name}" for name in demos]
    return next((h for h in preferred if h in handles), handles[0] if handles else None)


def _sidebar_picker(handles: list[str], backend: Backend) -> None:
    # The canonical selection lives in session_state[MODEL_KEY] (not a widget key), so pages may set it
    # at any time; the picker is re-seeded from it before it is drawn. A first visit (nothing picked, no
    # ?model= in the URL) opens the model this key last picked in the sidebar if it is still listed (the
    # root URL opened again keeps the user on their model), else the demo model, so no page starts with
    # "Pick a model".
    current = st.session_state.get(MODEL_KEY)
    if current is None and st.query_params.get("model"):
        current = st.query_params["model"]
        st.session_state[MODEL_KEY] = current
    if current is None and not st.session_state.get("model_defaulted"):
        st.session_state["model_defaulted"] = True  # once: clearing the picker later is the user's choice
        kept = last_picked(backend)
        current = kept if kept in handles else default_handle(handles, backend.namespace)
        st.session_state[MODEL_KEY] = current
    options = list(handles)
    if current and current not in options:
        options.insert(0, current)
    shown = st.session_state["model_picker"] = current if current in options else None

    def _picked() -> None:
        st.session_state[MODEL_KEY] = st.session_state["model_picker"]
        remember(backend, st.session_state["model_picker"])

    # The seeded choice is also the picker's own default: a browser drawing it afresh (a run cut short by
    # the next) shows it, not the first model, and never sends the first model back as the user's pick.
    st.selectbox(
        "Model",
        options,
        index=None if shown is None else options.index(shown),
        key="model_picker",
        on_change=_picked,
        placeholder="Choose a model",
    )
    if st.session_state.get(MODEL_KEY):
        st.query_params["model"] = st.session_state[MODEL_KEY]


def _namespace_picker(backend: Backend) -> None:
    # Like the model picker: the choice lives in session_state[NAMESPACE_KEY], read by get_backend().
    st.session_state["namespace_picker"] = backend.namespace
    choices = list(backend.choices)

    def _picked() -> None:
        st.session_state[NAMESPACE_KEY] = st.session_state["namespace_picker"]

    st.selectbox(
        "Namespace",
        choices,
        # Its own default too, like the model picker's: a picker drawn afresh shows the namespace in use.
        index=choices.index(backend.namespace) if backend.namespace in choices else 0,
        key="namespace_picker",
        on_change=_picked,
        help="The key's namespaces; new models go to the one chosen here.",
    )


def _key_notice(backend: Backend) -> None:
    if backend.person:  # signed in as a person: their role says what they may do (app/team/sign_in.py)
        return
    st.caption(f"Key scope: **{escape_md(backend.scope)}**")
    if backend.read_only:
        # A team's workbench takes no key on Settings: the key is the one this tab signed in with.
        switch = (
            "To edit, **Sign out** (below) and sign in with an authoring key: the team's owner makes one "
            "(`python -m service keys create --scope authoring`)."
            if backend.team
            else "Use an authoring key on the Settings page to edit."
        )
        st.warning(
            "This key has **scoring** scope: it can browse and score models, but the authoring pages "
            "(Models, Traits, Samples, Training, Versions) are read-only: the service refuses changes. "
            + switch,
            icon=":material/lock:",
        )


def _demo_progress() -> None:
    """While the demo models load in the background: their progress; then, for the rest of a session that
    watched them load, that they are ready (or why not)."""
    state = demo_load()
    if state.running:
        st.session_state["demo_load_watched"] = True
    if not st.session_state.get("demo_load_watched"):
        return  # nothing loading, or it ended before this session's first page
    if not state.running:
        _demo_outcome(state)  # no polling once it is over
        return

    @st.fragment(run_every=2.0)
    def _poll() -> None:
        if state.running:
            st.progress(state.fraction, text=f"Demo models: {state.message or 'starting'}")
            st.caption("They load in the background; every page works meanwhile.")
        else:
            # No rerun of the page from here: it would replace what the user is doing (and a whole rerun
            # on a busy machine takes seconds); the next action shows them, read afresh (app/shell/reads.py).
            _demo_outcome(state)

    _poll()


def _demo_outcome(state: DemoLoad) -> None:
    # Kept on every page of the session (not only the one that saw the end): a page's own rerun, such as the
    # Models list's once its busy models are ready, would otherwise take the message away a moment later.
    if state.error:
        st.warning(f"The demo models did not load: {escape_md(str(state.error))}", icon=":material/warning:")
    else:
        st.caption(":material/check_circle: Demo models ready.")


def main() -> None:
    keep_unsaved()  # the Samples grid's last edits, before a switch to another page drops its editor
    if (refused := st.session_state.get(SIGNED_OUT)) is not None:  # a request of this tab found it
        expired_page(*refused)
        return
    try:
        backend = get_backend()
    except SignInNeeded as needed:  # a team's workbench: this browser has not signed in yet
        # The page asked for (a reload of /label signs a key out) is resolved now, unshown: the rerun that
        # signs in then stays on it, where without a page resolved it went to the first page, Models.
        st.navigation(navigation(team=True), position="hidden")
        sign_in_page(needed.url)
        return
    except NoNamespace as alone:  # signed in as a person whom no namespace has (yet, or any more)
        no_namespace_page(str(alone))
        return
    except Exception as exc:  # noqa: BLE001 - a dead remote or a failed start: say so, offer Settings
        if isinstance(exc, AuthenticationError) and signin_config() is not None:
            expired_page(exc)  # the person's ID token is no longer taken: the provider signs them in again
            return
        show_error(exc, "Connecting to the scoring service")
        backend = None
    if backend is not None:
        with guard("Loading the demo models"):
            ensure_demo_models(backend)

    with st.sidebar:
        st.markdown("### :material/bar_chart: Scoring Workbench")
        if backend is not None:
            st.caption(f"Backend: **{escape_md(backend.label)}**")
            if backend.mode == "embedded":
                st.caption(f"Service URL: {code(backend.url)}")
            if len(backend.choices) > 1:
                _namespace_picker(backend)
            else:
                st.caption(f"Namespace: {code(backend.namespace)}")
            identity(backend)
            _key_notice(backend)
            _demo_progress()
            handles: list[str] = []
            with guard("Listing models"):
                handles = list_handles(backend)
            _sidebar_picker(handles, backend)
        else:
            st.caption("Backend: **not connected**")

    # a team's workbench also lists the Team page: who is in the namespace, with what role
    pages = navigation(team=backend is not None and backend.team)
    st.navigation(pages).run()


main()
