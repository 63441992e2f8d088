"""A key press on the Label page (or its button): which presses count, and what each key does.

A key press is bound to the text it was pressed on (docs/workbench-labelling.md): a `Press` carries what was
shown when the key went down, and `should_apply` drops a press whose text is not the one shown now (it is
never applied to another text) and a press delivered again (a component's value re-sent on a rerun).
"""

from __future__ import annotations

from app.labelling.labels_given import label_shown_text, undo_last_label
from app.labelling.session import SUGGESTING, Failure, LabelSession, Press, shown_as
from app.labelling.suggestion_queue import refill, release_text
from core.client import AuthenticationError, Client, Model, Trait
from core.contract import MAX_SCALE_POINTS, scale_quality

#: The keys of a scale's points, 1..N (a pole trait's labels are the first two).
POINT_KEYS = tuple(str(k) for k in range(1, MAX_SCALE_POINTS + 1))
#: Keys that act on the text shown (label, skip, unsure): a press of one is dropped unless that text is shown.
ON_TEXT = frozenset({*POINT_KEYS, "0", "?"})
NEGATIVE, POSITIVE = 0.0, 1.0


def label_keys(trait: Trait) -> list[tuple[str, str]]:
    """The keys that label `trait` with what each means: its scale's points 1..N with their words, else `1`
    its negative pole and `2` its positive one."""
    if trait.scale is not None:
        return [(str(k), trait.point_name(k)) for k in range(1, trait.scale.points + 1)]
    return [("1", f"1 · {trait.negative_label}"), ("2", f"2 · {trait.positive_label}")]


def apply_key(session: LabelSession, key: str, client: Client, model: Model) -> None:
    """One keyboard key (or its button): `1` negative, `2` positive (on a scale `1`..`N` its points), `0`
    skip, `u` undo, arrows move; then the queue is refilled (a failure of either is kept in `session.failure`,
    named for what failed: a label stored whose next suggestions failed is not said to be lost)."""
    session.failure = None
    what = what_key_does(key)
    try:
        if session.points is not None and key in POINT_KEYS[: session.points]:
            label_shown_text(session, scale_quality(int(key), session.points), client, model, point=int(key))
        elif session.points is None and key in ("1", "2"):
            label_shown_text(session, POSITIVE if key == "2" else NEGATIVE, client, model)
        elif key == "0":
            if session.current is not None:
                release_text(session, client, session.current)
                session.skipped.add(int(session.current["id"]))
                session.pos += 1
                session.message = "Skipped."
        elif key == "u":
            undo_last_label(session, client)
        elif key == "ArrowLeft":
            session.pos = max(0, session.pos - 1)
        elif key == "ArrowRight":
            session.pos = min(len(session.queue), session.pos + 1)
        what = SUGGESTING
        refill(session, client)
    except AuthenticationError as exc:  # signed out (another tab, idle): the page says so and what was lost
        session.signed_out = str(exc)
        session.message = not_stored_note(key) if what != SUGGESTING else ""
    except Exception as exc:  # noqa: BLE001 - shown on the page, never a traceback
        session.failure = Failure(what, exc)


def what_key_does(key: str) -> str:
    """What a press asks of the service, as its failure names it."""
    if key in ON_TEXT:
        return "Skipping the text" if key == "0" else "Storing that label"
    return "Undoing the last label" if key == "u" else SUGGESTING


def not_stored_note(key: str) -> str:
    """What a press that failed did not do: a label or a note is said to be not stored."""
    return "That label was not stored." if key in ON_TEXT else ""


def should_apply(session: LabelSession, press: Press) -> bool:
    """Whether to act on `press`: False for a press taken already (the same nonce) and for a key on a text
    (`ON_TEXT`) whose text is not the one shown now: such a press is dropped, never applied to another
    text."""
    if press.nonce is not None:
        if press.nonce in session.presses:
            return False
        session.presses.add(press.nonce)
    if press.key in ON_TEXT and press.shown != shown_as(session.trait, session.current):
        if press.shown is not None:
            session.failure = None
            session.message = (
                "That key was pressed on a text no longer shown: nothing was stored. Press it again."
            )
        return False
    return True
