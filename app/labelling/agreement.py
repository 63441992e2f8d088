"""How far a team's annotators agree: per trait on the Traits page, and the Samples page's Disagreements tab,
where a reviewer settles a text with an adjudicated vote of their own (docs/api.md, "Agreement")."""

from __future__ import annotations

from collections import Counter

import pandas as pd
import streamlit as st

from app.labelling.my_labels import metadata_line, vote_label
from app.labelling.noted_texts import Noted, noted_texts, notes_line, text_notes
from app.shell import reads
from app.ui.inert import escape_md, quote
from app.ui.text_history import history_expander
from app.ui.widgets import guard
from core.client import Agreement, ApiError, Client, DisagreedText, Model, Trait
from core.contract import NEUTRAL_QUALITY, pole_of, scale_point, scale_quality

SHOWN = 20  # most disagreed texts listed per trait


def _alpha(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def agreement_section(client: Client, handle: str, traits: list[Trait]) -> None:
    """The Traits page's table: per trait, Krippendorff's alpha and who voted, and the annotator pairs."""
    found: Agreement | None = None
    with guard("Reading the annotators' agreement"):
        found = reads.agreement(client, handle, SHOWN)
    if found is None:
        return
    names = {t.key: t.name for t in traits}
    st.subheader("Agreement between annotators")
    rows = [
        {
            "trait": names.get(key, key),
            "texts with 2+ votes": a.texts_with_votes,
            "annotators": ", ".join(f"{v.annotator} ({v.votes})" for v in a.annotators) or "—",
            "α on quality": _alpha(a.krippendorff_alpha_interval),
            "α on the pole": _alpha(a.krippendorff_alpha_nominal),
            "α on the points (ordinal)": _alpha(a.krippendorff_alpha_ordinal),
        }
        for key, a in found.traits.items()
    ]
    if not any(r["texts with 2+ votes"] for r in rows):
        st.caption(
            "No text has votes of two annotators yet. When a team labels (each with a key of their own), the "
            "Label page routes a share of the texts to colleagues' labels, and the agreement shows here."
        )
        return
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="agreement_table")
    caption = (
        "Krippendorff's α over the texts two or more annotators voted on: 1 is perfect agreement, 0 what "
        "chance gives; below about 0.67 a trait is hard to measure as worded. On the pole, a neutral vote "
        "(quality 0.5) is a category of its own; on the points (a trait rated on a scale) only their order "
        "counts. Settled (adjudicated) votes are left out. The Samples "
        "page's **Disagreements** tab lists the texts and settles them."
    )
    if found.stored_at is not None:
        caption += f" Kept when zero-data-retention purged the votes ({found.stored_at:%Y-%m-%d %H:%M} UTC)."
    st.caption(caption)
    pairs = [
        {"trait": names.get(key, key), "a": p.a, "b": p.b, "shared texts": p.texts, "same pole": p.same_pole,
         "agreement": p.agreement}
        for key, a in found.traits.items()
        for p in a.pairwise
    ]  # fmt: skip
    if pairs:
        with st.expander(f"Pairs of annotators ({len(pairs):,})"):
            st.dataframe(
                pd.DataFrame(pairs),
                hide_index=True,
                width="stretch",
                column_config={"agreement": st.column_config.NumberColumn(format="percent")},
            )


def points_spread(trait: Trait, text: DisagreedText) -> str:
    """How a scaled trait's votes of a text spread over its points, lowest first ("2 ×1 · 4 ×2"); votes
    between points (a mean of ratings) are counted apart."""
    assert trait.scale is not None
    found = Counter(scale_point(v.quality, trait.scale.points) for v in text.votes)
    spread = [f"{p} ×{found[p]}" for p in range(1, trait.scale.points + 1) if found[p]]
    if found[None]:
        spread.append(f"between points ×{found[None]}")
    return " · ".join(spread)


#: The settling vote on neither pole, offered where a text's votes are graded (its word on the button).
MIDDLE = (NEUTRAL_QUALITY, "neither pole (the middle)")
#: session_state: what became of the last press of a Settle button, said in that text's card, next to where
#: the button was: {"handle", "trait", "text", "ok", "message"}.
OUTCOME = "disagree_outcome"


def graded(text: DisagreedText) -> bool:
    """Whether a text's votes are graded: one of them lies between the poles (a rating scale's point, a mean
    of ratings), so the middle is a vote people gave, not only the poles."""
    return any(0.0 < v.quality < 1.0 for v in text.votes)


def settle_choices(trait: Trait, text: DisagreedText | None = None) -> list[tuple[float, str]]:
    """The settling votes a reviewer may give: each point of a scale (quality, word); else the poles, and
    the neutral middle between them when the text's votes are graded (a file rated -4..+4 whose votes sit
    either side of 0 is settled as 0, not pushed onto a pole)."""
    if trait.scale is None:
        poles = [(0.0, trait.negative_label), (1.0, trait.positive_label)]
        return [poles[0], MIDDLE, poles[1]] if text is not None and graded(text) else poles
    n = trait.scale.points
    return [(scale_quality(k, n), trait.point_name(k)) for k in range(1, n + 1)]


def settled_words(quality: float, label: str) -> str:
    """What a settling vote does, said after it is stored."""
    if pole_of(quality) == "neutral":
        return (
            f"Settled as “{escape_md(label)}”: your vote puts it on neither pole, so training leaves it out."
        )
    return f"Settled as “{escape_md(label)}”: your vote decides its pole."


def votes_line(trait: Trait, text: DisagreedText) -> str:
    """Every vote of a text in words, a settler's own earlier vote among them: the settling vote replaced it
    in training, but it was theirs and the agreement counts it."""
    settlers = {v.annotator for v in text.votes if v.adjudicated}
    return "  ·  ".join(
        f"{escape_md(v.annotator or 'unattributed')}: {escape_md(vote_label(trait, v.quality))}"
        + (" (settles)" if v.adjudicated else " (before settling)" if v.annotator in settlers else "")
        for v in text.votes
    )


def disagreements_panel(
    client: Client, model: Model, traits: list[Trait], editable: bool, refused: str | None = None
) -> None:
    """The Samples page's Disagreements tab: a trait's most disagreed texts, their votes, and settling
    (`refused`: why the key's role may not settle, app/shell/roles.py; None when it may)."""
    if not traits:
        st.info("Add a trait first.")
        return
    found: Agreement | None = None
    with guard("Reading the disagreements"):
        found = reads.agreement(client, model.handle, SHOWN)
    if found is None:
        return
    outcome = st.session_state.pop(OUTCOME, None)
    names = {t.key: t for t in traits}
    trait = st.selectbox("Trait", list(names), key="disagree_trait", format_func=lambda k: names[k].name)
    notes = text_notes(client, model.handle, trait)
    noted_texts(notes)
    texts = found.traits[trait].disagreed if trait in found.traits else []
    if not texts:
        st.info(
            "No text of this trait has votes that differ."
            + (" (Zero-data-retention purged the votes; the agreement figures stay on the Traits page.)"
               if found.stored_at is not None else "")
        )  # fmt: skip
        return
    # Settling is a reviewer's in any state but archived: the next training takes it in, no reopen needed.
    may_settle = refused is None and model.state != "archived"
    st.caption(
        f"Texts whose votes differ ({len(texts):,}), most disagreed first. "
        + (
            f":material/lock: {escape_md(refused)}"
            if refused
            else "Settle one with your own vote: it decides the text's pole from the next training on; the "
            "votes stay. A text is settled once."
        )
    )
    t = names[trait]
    said = outcome if outcome and (outcome["handle"], outcome["trait"]) == (model.handle, trait) else None
    shown = False
    for i, text in enumerate(texts):
        here = said if said is not None and said["text"] == text.text else None
        shown = shown or here is not None
        _disagreed(client, model.handle, t, text, i, may_settle, notes, here)
    if said is not None and not shown:  # the text left the list (no longer among the most disagreed)
        (st.success if said["ok"] else st.warning)(said["message"], icon=":material/gavel:")


def _disagreed(
    client: Client,
    handle: str,
    trait: Trait,
    text: DisagreedText,
    i: int,
    editable: bool,
    notes: dict[str, Noted],
    outcome: dict[str, object] | None = None,
) -> None:
    with st.container(border=True, key=f"disagree_card_{i}"):
        status = (
            ":material/gavel: settled"
            if text.adjudicated
            else ":material/call_split: contested"
            if text.contested
            else "votes differ"
        )
        counted = "—" if text.quality is None else f"{text.quality:.2f}"
        st.markdown(f"**{status}** · counted quality {counted}")
        st.markdown(quote(text.text))
        if meta := metadata_line(text.metadata):
            st.caption(meta)
        st.caption(f"Votes: {votes_line(trait, text)}")
        if trait.scale is not None:
            st.caption(f"Spread of points: {escape_md(points_spread(trait, text))}")
        notes_line(notes, text.text)
        # Any vote's id names the text's history: the first one stored of the text.
        if (vote_id := next((v.sample_id for v in text.votes if v.sample_id is not None), None)) is not None:
            history_expander(client, handle, vote_id, lazy=f"disagree_history_{vote_id:d}")
        settler = next((v.annotator or "unattributed" for v in text.votes if v.adjudicated), None)
        if outcome is not None:  # the press on this card: said here, where the reviewer is looking
            message = str(outcome["message"])
            (st.success if outcome["ok"] else st.warning)(message, icon=":material/gavel:")
        if text.adjudicated:  # settled once: who did, and no button to settle it again
            st.caption(f":material/gavel: Settled by {escape_md(settler or 'a reviewer')}.")
            return
        if not editable:
            return
        choices = settle_choices(trait, text)
        columns = st.columns([1] * len(choices) + [max(1, 4 - len(choices))])
        for column, (quality, label) in zip(columns, choices, strict=False):
            # A callback, not the button's return value: it runs before the page is read again, so a press
            # on a text a colleague settled meanwhile (whose card is then drawn with no buttons) still reaches
            # the service and is answered in this card.
            column.button(
                f"Settle: {escape_md(label)}",
                key=f"disagree_settle_{i}_{quality:g}",
                width="stretch",
                on_click=_settle,
                args=(client, handle, trait.key, text.text, quality, label),
            )


def _settle(client: Client, handle: str, trait: str, text: str, quality: float, label: str) -> None:
    """A Settle button's callback: the settling vote, and what became of it for the text's card."""
    said: dict[str, object] = {"handle": handle, "trait": trait, "text": text}
    with guard("Settling the text"):
        try:
            client.settle(handle, trait, text, quality)
            st.session_state[OUTCOME] = said | {"ok": True, "message": settled_words(quality, label)}
        except ApiError as exc:
            if exc.code != "already_settled":
                raise
            # A colleague settled it meanwhile: said, with who and when, in its card, which shows the text as
            # it is now.
            st.session_state[OUTCOME] = said | {
                "ok": False,
                "message": f"Not settled: {escape_md(exc.message)}",
            }
