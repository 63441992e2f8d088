"""The Samples page's Flags tab: check the stored samples, then act on each flag where it is shown.

Every flag row has Keep (the label is right: the flag goes, the sample stays), Flip (to the other pole), Edit
(text and quality in place) and Remove. Edits go through the service's sample PATCH / DELETE, which a draft
accepts (a trained model is reopened first). The tab is a fragment: a check or an action reruns only the
tab, so the page keeps its tab and its scroll position, and the check's progress bar stays in view.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from app.samples.remembered import imported_rating
from app.shell.backend import Backend
from app.shell.roles import allows
from app.ui.flash import say_once
from app.ui.inert import code, escape_md
from app.ui.reopen import reopen_offer
from app.ui.widgets import guard, is_editable
from core.client import ApiError, Client, Model
from core.contract import pole_of

PAGE = 20  # flag rows shown at a time; the next ones appear as these are handled
COLOURS = {"likely mislabelled": "red", "contested": "orange", "outlier": "blue"}  # each kind's label colour
STATE = "samples_flags"  # session key: (handle, samples checked, flag rows)


def _kept_key(handle: str) -> str:
    return f"flags_kept_{handle}"


def _forget(sample_id: int, removed: bool = False) -> None:
    """The flag leaves the list; a removed sample leaves the count of samples checked too."""
    handle, checked, flagged = st.session_state[STATE]
    rest = [f for f in flagged if f.get("id") != sample_id]
    st.session_state[STATE] = (handle, checked - int(removed), rest)


def _say(message: str, ok: bool = True) -> None:
    st.session_state["flags_flash"] = (message, ok)


def _check(client: Client, model: Model) -> None:
    handle = model.handle
    bar = st.progress(0.0, text="Reading the samples…")
    everything = [s.model_dump(mode="json") for s in client.list_samples(handle)]  # the engine reads rows

    def progress(fraction: float, step: str) -> None:
        bar.progress(fraction, text=step or "Checked.")

    # Stored samples are embedded once per workbench process; zero data retention keeps nothing.
    # Imported on use: the engine (scikit-learn, scipy) would add seconds to the Samples page's first paint.
    from app.shell import engine_cache
    from core.engine.flags import flag_samples

    name = engine_cache.model_embedder(client, model)  # the model's, as the service embeds its samples
    embedder = engine_cache.embedder(name)
    if not model.zero_data_retention:
        embedder = engine_cache.sample_embedder(name)
    kept = st.session_state.get(_kept_key(handle), set())  # the analyst said these labels are right
    flagged = [f for f in flag_samples(everything, embedder, progress) if f.get("id") not in kept]
    st.session_state[STATE] = (handle, len(everything), flagged)
    bar.progress(1.0, text=f"Checked {len(everything):,} samples: {len(flagged)} flag(s).")


def _act(client: Client, handle: str, sid: int, action: str) -> None:
    """One action on a flagged sample (a button's callback: it runs before the tab reruns, so the tab draws
    the result at once); the flag leaves the list, or the tab says why not."""
    state = st.session_state
    if action == "keep":
        state.setdefault(_kept_key(handle), set()).add(sid)
        _forget(sid)
        _say(f"Kept sample #{sid} as it is.")
        return
    if action == "edit":  # open or close the row's editor
        state[f"flag_editing_{sid}"] = not state.get(f"flag_editing_{sid}", False)
        return
    try:
        if action == "remove":
            client.delete_sample(handle, sid)
            _say(f"Removed sample #{sid}.")
        else:
            if action == "flip":
                fields = {"quality": state[f"flag_flipped_{sid}"]}
            else:  # "save": the row's editor
                fields = {"text": state[f"flag_text_{sid}"], "quality": state[f"flag_quality_{sid}"]}
            kept = client.update_sample(handle, sid, **fields)
            merged = f" It now equals stored sample #{kept.id}, kept instead." if kept.id != sid else ""
            verb = "Flipped" if action == "flip" else "Saved"
            _say(f"{verb} sample #{sid} (quality {kept.quality:g}).{merged}")
    except ApiError as exc:
        _say(f"Sample #{sid} was not changed: {exc.message}", ok=False)
        return
    state.pop(f"flag_editing_{sid}", None)
    _forget(sid, removed=action == "remove")


def _row(client: Client, handle: str, flag: dict[str, Any], editable: bool) -> None:
    sid = int(flag["id"])
    # A text several annotators voted on is settled by a reviewer's vote, not by editing one of theirs.
    editable = editable and len(flag.get("votes", ())) <= 1
    quality = float(flag["quality"])
    pole = pole_of(quality)
    flipped = 0.0 if pole == "positive" else 1.0
    st.session_state[f"flag_flipped_{sid}"] = flipped
    score = flag.get("oof_score")
    kind = f":{COLOURS.get(flag['flag'], 'gray')}[**{escape_md(flag['flag'])}**]"
    rated = imported_rating(handle, flag["trait"], flag["text"])
    where = "neutral: on neither pole" if pole == "neutral" else f"{escape_md(pole)} pole"
    label = f"labelled {quality:.3g} ({where})"
    with st.container(border=True, key=f"flag_row_{sid}"):
        st.markdown(
            f"{kind} · {code(flag['trait'])} · {label}"
            + (f", rated {escape_md(rated)}" if rated else "")
            + (f" · held-out score {score:.2f}" if score is not None else "")
            + f" · #{sid:d}  \n{escape_md(flag['text'])}"
        )
        st.caption(flag["why"])
        # The buttons on a row of their own, wide enough for their labels at 1280 px (beside the text they
        # were cut to "Flip …" and "Re…").
        keep, flip, edit, remove, _ = st.columns([1, 1, 1, 1, 2])
        args = (client, handle, sid)
        keep.button("Keep", key=f"flag_keep_{sid}", help="The label is right: dismiss the flag",
                    on_click=_act, args=(*args, "keep"), width="stretch")  # fmt: skip
        # A neutral sample (an outlier, or a text its votes contest) has no other pole to flip to.
        flippable = editable and pole != "neutral"
        flip.button(f"Flip to {flipped:g}", key=f"flag_flip_{sid}", disabled=not flippable,
                    on_click=_act, args=(*args, "flip"), width="stretch")  # fmt: skip
        edit.button("Edit", key=f"flag_edit_{sid}", disabled=not editable,
                    on_click=_act, args=(*args, "edit"), width="stretch")  # fmt: skip
        remove.button("Remove", key=f"flag_remove_{sid}", disabled=not editable,
                      on_click=_act, args=(*args, "remove"), width="stretch")  # fmt: skip
        if editable and st.session_state.get(f"flag_editing_{sid}"):
            with st.form(f"flag_form_{sid}", border=False):
                st.text_area("Text", flag["text"], key=f"flag_text_{sid}", height=90)
                st.slider("Quality", 0.0, 1.0, quality, 0.05, key=f"flag_quality_{sid}")
                st.form_submit_button("Save the sample", type="primary", on_click=_act, args=(*args, "save"))


@st.fragment
def flags_tab(backend: Backend, client: Client, model: Model) -> None:
    handle = model.handle
    editable = is_editable(model) and allows(backend.key, "manage")  # a fix edits anyone's sample
    st.caption(
        "Computed here with the local engine: each trait is fitted with 5-fold cross-validation and every "
        "sample scored by the fold that did not see it. A sample is a likely mislabel when that score and "
        "its 10 nearest samples together point to the other pole; a sample far from its trait's other "
        "samples is an outlier. A text whose annotators' votes fall on both poles is contested (a "
        "disagreement to settle), never a likely mislabel. A flag asks for a look: it is not a verdict. "
        "Relabelling flagged samples raises the next version's cross-validated ROC AUC whether or not the "
        "labels got better (the flags come from the same out-of-fold scores): judge it on an evaluation set."
    )
    if st.button("Check samples", key="flags_go"):
        with guard("Checking samples"):
            _check(client, model)
    result = st.session_state.get(STATE)
    if not result or result[0] != handle:
        return
    _, checked, flagged = result
    say_once("flags_flash", lambda said: (st.success if said[1] else st.warning)(said[0]))
    shown: set[int] = set(st.session_state.get(_kept_key(handle), ()))  # kept: not asked about again
    rows = []
    for f in flagged:  # one row a sample, even when it carries several flags
        if f.get("id") is not None and f["id"] not in shown:
            shown.add(f["id"])
            rows.append(f)
    if not rows:
        st.success(f"No flags left among {checked:,} samples.")
        return
    kept = len(st.session_state.get(_kept_key(handle), ()))
    st.warning(
        f"{len(rows):,} flagged sample(s) among {checked:,} samples"
        + (f" ({kept:,} more kept as they are, not shown)" if kept else "")
        + (f"; the first {PAGE} are shown, the next appear as you handle these." if len(rows) > PAGE else ".")
    )
    if not editable and allows(backend.key, "manage"):
        reopen_offer(client, model, "samples_flash", "flags_reopen")
    for flag in rows[:PAGE]:
        _row(client, handle, flag, editable)
