"""The Label page's context and history: the model's guidelines (with a notice when they changed since the
person last read them), a text's metadata, the session's count from the service, and "My labels", where a
person changes or withdraws their own labels until a version is trained on them.

The session's count is the service's: the person's labels since the session started, the start kept in the
page's address (`?since=`), so a reload keeps counting from it and a withdrawn label no longer counts. The
start is kept with a tag of whose session on which model it is (a hash: no name in the address), so the next
person to sign in on the tab, whose address still holds it, starts a session of their own."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import datetime

import streamlit as st

from app.ui.flash import say_once
from app.ui.inert import escape_md, guidelines_md
from core.client import ApiError, Client, MyLabel, Trait
from core.contract import (
    MAX_GUIDELINES_CHARS,
    MAX_GUIDELINES_NOTE_CHARS,
    MY_LABELS_PAGE,
    pole_of,
    scale_point,
)

SINCE = "since"  # the address's query key that keeps the session's start
SHOWN = 20  # labels listed at first, and added by "Show more"
FLASH = "my_labels_flash"
# Open once a change or withdrawal was said, for the session: an `expanded` that went back to False at the
# next run (any key press, a search) would close the panel on the person working in it.
OPENED = "my_labels_opened"
HISTORY = 10  # versions of the guidelines listed


def session_tag(annotator: str | None, handle: str) -> str:
    """Whose session on which model an address's start is: a short hash of the person and the model."""
    return hashlib.sha256(f"{annotator or ''}\n{handle}".encode()).hexdigest()[:12]


def session_start(tag: str) -> datetime | None:
    """When the labelling session a reload interrupted started: read from the page's address (None: none,
    or another person's or model's session)."""
    raw, _, of = (st.query_params.get(SINCE) or "").rpartition("~")
    if raw and of == tag:
        try:
            start = datetime.fromisoformat(raw)
            if start.tzinfo is not None:
                return start
        except ValueError:
            pass  # an edited address: a new session starts
    return None


def keep_in_address(start: datetime, tag: str) -> None:
    """Write the session's start into the page's address, where a reload finds it (a page switch drops it)."""
    kept = f"{start.isoformat()}~{tag}"
    if st.query_params.get(SINCE) != kept:
        st.query_params[SINCE] = kept


def labelled_since(client: Client, handle: str, trait: str, since: datetime) -> int | None:
    """The person's labels of `trait` given since `since`, as the service counts them (None: unknown)."""
    try:
        return client.my_labels_page(handle, trait=trait, since=since, limit=1).total
    except ApiError:
        return None


def metadata_line(meta: dict[str, object] | None) -> str:
    """A text's metadata as one Markdown line of `key: value` pairs, shown as typed ("" without any)."""
    if not meta:
        return ""
    return " · ".join(
        f"**{escape_md(str(k))}**: {escape_md('' if v is None else str(v))}" for k, v in meta.items()
    )


def guidelines_section(client: Client, handle: str, may_manage: bool) -> None:
    """The model's guidelines, opened with a notice when they changed since the person last read them; the
    owner edits them here (each save a new version)."""
    try:
        g = client.guidelines(handle)
    except ApiError as exc:
        st.caption(f"The guidelines could not be read: {escape_md(exc.message)}")
        return
    if g.version_no == 0 and not may_manage:
        return
    if g.changed_since_read:
        when = f"{g.created_at:%Y-%m-%d %H:%M} UTC" if g.created_at else "recently"
        why = ": " + escape_md(g.note) if g.note.strip() else ""
        seen = (
            f"you last read version {g.read_version_no:d}" if g.read_version_no else "you have not read them"
        )
        st.warning(
            f"The guidelines changed since you last read them ({seen}): version {g.version_no:d} by "
            f"{escape_md(g.author or 'someone')}, {when}{why}.",
            icon=":material/menu_book:",
        )
    title = f"Guidelines (version {g.version_no:d})" if g.version_no else "Guidelines (none yet)"
    with st.expander(title, expanded=g.changed_since_read):
        if g.version_no:
            st.markdown(guidelines_md(g.markdown))  # Markdown as written, inert
        if g.version_no > 1:
            _versions(client, handle)
        if g.changed_since_read and st.button("I have read them", key="guidelines_read"):
            try:
                client.mark_guidelines_read(handle, g.version_no)
                st.rerun()
            except ApiError as exc:
                st.error(f"Not recorded: {escape_md(exc.message)}")
        if may_manage:
            with st.form("guidelines_form"):
                text = st.text_area(
                    "Edit the guidelines (Markdown)",
                    value=g.markdown,
                    max_chars=MAX_GUIDELINES_CHARS,
                    height=200,
                )
                note = st.text_input("What changed", max_chars=MAX_GUIDELINES_NOTE_CHARS)
                if st.form_submit_button("Save as a new version"):
                    try:
                        saved = client.save_guidelines(handle, text, note)
                        st.session_state[FLASH] = (f"Guidelines saved as version {saved.version_no:d}.", True)
                        st.rerun()
                    except ApiError as exc:
                        st.error(f"Not saved: {escape_md(exc.message)}")


def _versions(client: Client, handle: str) -> None:
    """Who changed the guidelines, when and how much: the newest versions, one line each."""
    try:
        page = client.guidelines_versions_page(handle, limit=HISTORY)
    except ApiError as exc:
        st.caption(f"The versions could not be read: {escape_md(exc.message)}")
        return
    lines = [
        f"v{v.version_no:d} · {escape_md(v.author)} · {v.created_at:%Y-%m-%d %H:%M} UTC · "
        f"+{v.lines_added:d} −{v.lines_removed:d} lines"
        + (f" · {escape_md(v.note)}" if v.note.strip() else "")
        for v in page.items
    ]
    st.caption("Versions:  \n" + "  \n".join(lines))


def _change(client: Client, handle: str, label: MyLabel, quality: float | None, point: int | None) -> None:
    try:
        client.change_my_label(handle, label.kind, label.id, quality, point=point)
        st.session_state[FLASH] = (f"Changed your label #{label.id:d}.", True)
    except ApiError as exc:
        st.session_state[FLASH] = (f"Label #{label.id:d} was not changed: {exc.message}", False)


def _withdraw(client: Client, handle: str, label: MyLabel, on_withdrawn: Callable[[int, str], None]) -> None:
    try:
        client.withdraw_my_label(handle, label.kind, label.id)
        on_withdrawn(label.id, label.kind)
        st.session_state[FLASH] = (f"Withdrew your label #{label.id:d}.", True)
    except ApiError as exc:
        st.session_state[FLASH] = (f"Label #{label.id:d} was not withdrawn: {exc.message}", False)


def _shown(label: MyLabel, trait: Trait | None) -> str:
    """A label as the list shows it: on a scale its point and word ("4 · polite"), else its pole's label."""
    if trait is not None and trait.scale is not None:
        return vote_label(trait, label.quality)
    pole = pole_of(label.quality)
    named = {"positive": trait.positive_label, "negative": trait.negative_label} if trait else {}
    return named.get(pole) or pole


def vote_label(trait: Trait, quality: float) -> str:
    """A vote as My labels and the Disagreements tab show it: on a scale its point and word, else its
    quality."""
    point = scale_point(quality, trait.scale.points) if trait.scale is not None else None
    return f"{quality:.2f}" if point is None else trait.point_name(point)


def _point_buttons(client: Client, handle: str, label: MyLabel, trait: Trait) -> None:
    """A key-like button per other point of the trait's scale, its word on hover: a click gives that point."""
    assert trait.scale is not None
    now = scale_point(label.quality, trait.scale.points)
    others = [k for k in range(1, trait.scale.points + 1) if k != now]
    for column, k in zip(st.columns(len(others), gap="small"), others, strict=True):
        column.button(
            str(k),
            key=f"my_label_point_{label.kind}_{label.id}_{k}",
            help=f"Change it to {escape_md(trait.point_name(k))}",
            on_click=_change,
            args=(client, handle, label, None, k),
            width="stretch",
        )


def my_labels_section(
    client: Client, handle: str, traits: dict[str, Trait], on_withdrawn: Callable[[int, str], None]
) -> None:
    """The person's own labels, newest first, searchable; each untrained one with a button to give the
    other pole (on a scale: one per other point) and one to withdraw it."""
    if FLASH in st.session_state:
        st.session_state[OPENED] = True
    with st.expander("My labels", expanded=bool(st.session_state.get(OPENED))):
        say_once(FLASH, lambda said: (st.success if said[1] else st.error)(escape_md(said[0])))
        q = st.text_input("Search my labels", key="my_labels_q", placeholder="words in the text")
        shown = int(st.session_state.get("my_labels_shown", SHOWN))
        try:
            page = client.my_labels_page(handle, q=q or None, limit=min(shown, MY_LABELS_PAGE.maximum))
        except ApiError as exc:
            st.error(f"Your labels could not be listed: {escape_md(exc.message)}")
            return
        st.caption(f"{page.total:,} label(s)" + (" matching" if q else "") + ", newest first.")
        for label in page.items:
            trait = traits.get(label.trait)
            scaled = trait is not None and trait.scale is not None
            c1, c2, c3 = st.columns([5, 3, 2] if scaled else [6, 2, 2])
            trait_name = trait.name if trait else label.trait
            review = " · pending review" if label.review == "pending" else ""
            c1.markdown(
                f"{escape_md(label.text[:300])}  \n:small[#{label.id:d} · {escape_md(trait_name)}: "
                f"**{escape_md(_shown(label, trait))}** · {label.created_at:%Y-%m-%d %H:%M} UTC{review}]"
            )
            if label.trained:
                c2.caption("Trained into a version: it stays.")
                continue
            if trait is not None and trait.scale is not None:
                with c2:
                    _point_buttons(client, handle, label, trait)
            else:
                other = 0.0 if pole_of(label.quality) == "positive" else 1.0
                other_name = (
                    (trait.negative_label if other == 0.0 else trait.positive_label) if trait else str(other)
                )
                c2.button(
                    f"→ {escape_md(other_name)}",
                    key=f"my_label_change_{label.kind}_{label.id}",
                    on_click=_change,
                    args=(client, handle, label, other, None),
                    width="stretch",
                )
            c3.button(
                "Withdraw",
                key=f"my_label_withdraw_{label.kind}_{label.id}",
                on_click=_withdraw,
                args=(client, handle, label, on_withdrawn),
                width="stretch",
            )
        if (
            page.next_cursor
            and shown < MY_LABELS_PAGE.maximum
            and st.button("Show more", key="my_labels_more")
        ):
            st.session_state["my_labels_shown"] = shown + SHOWN
            st.rerun()
